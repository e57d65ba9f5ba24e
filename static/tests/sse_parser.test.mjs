import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {SseParser} from "../src/chat/logic/sse_parser.js";

const feedAll = (chunks) => {
    const parser = new SseParser();
    return chunks.flatMap((chunk) => parser.feed(chunk));
};

// mulberry32: a seeded PRNG, so a failing case can be replayed from its seed.
function prng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const TYPES = ["start", "round", "text", "tool_call", "tool_result", "done", null];
const STRINGS = [
    "",
    "plain",
    "line\nbreak",
    "cr\rlf\r\n",
    "colon: here",
    " leading space",
    "data: fake",
    "événement ✓ 🚀",
    '"quoted"',
    "\\",
];

function randomEvent(random, seq) {
    const pick = (list) => list[Math.floor(random() * list.length)];
    const data = {};
    for (let k = Math.floor(random() * 4); k >= 0; k--) {
        data[`key_${k}`] =
            random() < 0.7 ? pick(STRINGS) : {nested: [k, pick(STRINGS), random() < 0.5]};
    }
    const idKind = random();
    const id = idKind < 0.7 ? seq : idKind < 0.85 ? `opaque-${seq}` : null;
    return {event: pick(TYPES), data, id};
}

/** One event on the wire, written every way a server may: any line ending, with or without the
 * space after the colon, data split over lines, heartbeats between the fields. */
function serialize({event, data, id}, random) {
    const lines = [];
    const field = (name, value) =>
        lines.push(random() < 0.5 ? `${name}: ${value}` : `${name}:${value}`);
    const heartbeat = () => random() < 0.2 && lines.push(random() < 0.5 ? ": ping" : ":");
    heartbeat();
    if (event) {
        field("event", event);
    }
    heartbeat();
    if (id !== null) {
        field("id", id);
    }
    // Pretty-printed JSON spreads the payload over several data lines, joined again with \n.
    for (const line of JSON.stringify(data, null, random() < 0.5 ? 2 : 0).split("\n")) {
        field("data", line);
        heartbeat();
    }
    lines.push(""); // the blank line that dispatches
    let wire = "";
    let previous = "";
    for (const line of lines) {
        // "\r" then "\n" would read as one \r\n: a real server never ends two lines that way.
        const endings = line === "" && previous === "\r" ? ["\r", "\r\n"] : ["\n", "\r\n", "\r"];
        previous = endings[Math.floor(random() * endings.length)];
        wire += line + previous;
    }
    return wire;
}

function splitRandomly(text, random) {
    const chunks = [];
    for (let at = 0; at < text.length;) {
        const size = Math.floor(random() * 9); // empty chunks included
        chunks.push(text.slice(at, at + size));
        at += size;
    }
    return chunks;
}

describe("SseParser", () => {
    test("round-trips random streams cut into random chunks", () => {
        for (let seed = 1; seed <= 400; seed++) {
            const random = prng(seed);
            const events = Array.from({length: 1 + Math.floor(random() * 6)}, (_, k) =>
                randomEvent(random, k + 1)
            );
            const wire =
                (random() < 0.3 ? ": connected\n\n" : "") +
                events.map((event) => serialize(event, random)).join("");
            const expected = events.map(({event, data, id}) => ({
                event: event ?? "message",
                data,
                id,
            }));
            assert.deepEqual(
                feedAll(splitRandomly(wire, random)),
                expected,
                `seed ${seed}: ${JSON.stringify(wire)}`
            );
            assert.deepEqual(feedAll([...wire]), expected, `seed ${seed}, one character at a time`);
        }
    });

    test("a \\r\\n split between two chunks ends one line, not two", () => {
        const events = feedAll([
            'event: text\r\ndata: {"delta": "a"}\r',
            "\n\r",
            "\nevent: done\r\ndata: {}\r\n\r\n",
        ]);
        assert.deepEqual(events, [
            {event: "text", data: {delta: "a"}, id: null},
            {event: "done", data: {}, id: null},
        ]);
    });

    test("a \\r ending a chunk followed by a non-\\n character still ends the line", () => {
        assert.deepEqual(feedAll(['data: {"n": 1}\r', "\r"]), [
            {event: "message", data: {n: 1}, id: null},
        ]);
    });

    test("events only come out at their blank line", () => {
        const parser = new SseParser();
        assert.deepEqual(parser.feed('event: text\ndata: {"delta": "x"}\n'), []);
        assert.deepEqual(parser.feed("\n"), [{event: "text", data: {delta: "x"}, id: null}]);
    });

    test("ids: numbers when numeric, per event, never carried over", () => {
        const events = feedAll([
            "id: 41\ndata: {}\n\nid: abc\ndata: {}\n\ndata: {}\n\nid\ndata: {}\n\nid: 4\x002\ndata: {}\n\n",
        ]);
        assert.deepEqual(
            events.map((event) => event.id),
            [41, "abc", null, null, null]
        );
    });

    test("heartbeats, retry, unknown fields and events without data yield nothing", () => {
        assert.deepEqual(
            feedAll([
                ": keep-alive\n\n",
                "retry: 3000\n\n",
                "foo: bar\n\n",
                "event: text\n\n",
                "\n\n",
            ]),
            []
        );
        // The event name is not carried over to the next event either.
        assert.deepEqual(feedAll(["event: text\n\ndata: {}\n\n"]), [
            {event: "message", data: {}, id: null},
        ]);
    });

    test("a payload that is not JSON throws, naming the event", () => {
        assert.throws(
            () => feedAll(["event: tool_result\ndata: {not json\n\n"]),
            /"tool_result" event's data is not JSON/
        );
    });
});
