import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {readEventStream} from "../src/chat/logic/event_stream.js";

const encoder = new TextEncoder();

/** A Response whose body yields these byte chunks, then ends (or errors with `failWith`). */
function streamed(chunks, {failWith = null} = {}) {
    let i = 0;
    const body = new ReadableStream({
        pull(controller) {
            if (i < chunks.length) {
                controller.enqueue(chunks[i++]);
            } else if (failWith) {
                controller.error(failWith);
            } else {
                controller.close();
            }
        },
    });
    return new Response(body, {headers: {"Content-Type": "text/event-stream"}});
}

async function collect(response) {
    const seen = [];
    await readEventStream(response, (message) => seen.push(message));
    return seen;
}

describe("readEventStream", () => {
    test("events split anywhere, even inside a multi-byte character, come out whole and in order", async () => {
        const wire = encoder.encode(
            'id: 1\nevent: start\ndata: {"conversation_id":7}\n\n: heartbeat\n\n' +
                'id: 2\nevent: text\ndata: {"delta":"héllo 🚀"}\n\n'
        );
        for (let size = 1; size <= 7; size++) {
            const chunks = [];
            for (let at = 0; at < wire.length; at += size) {
                chunks.push(wire.slice(at, at + size));
            }
            assert.deepEqual(await collect(streamed(chunks)), [
                {event: "start", data: {conversation_id: 7}, id: 1},
                {event: "text", data: {delta: "héllo 🚀"}, id: 2},
            ]);
        }
    });

    test("each event is handed over as soon as it is complete, before the body ends", async () => {
        const seen = [];
        let release;
        const gate = new Promise((resolve) => (release = resolve));
        let step = 0;
        const body = new ReadableStream({
            async pull(controller) {
                step++;
                if (step === 1) {
                    controller.enqueue(encoder.encode('id: 1\nevent: round\ndata: {"n":1}\n\n'));
                } else if (step === 2) {
                    await gate;
                    controller.close();
                }
            },
        });
        const reading = readEventStream(new Response(body), (message) => seen.push(message.event));
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(seen, ["round"]);
        release();
        await reading;
    });

    test("an event cut off by the end of the body is dropped", async () => {
        const chunks = [
            encoder.encode(
                'id: 1\nevent: text\ndata: {"delta":"a"}\n\nid: 2\nevent: text\ndata: {"delta":"b"}\n'
            ),
        ];
        assert.deepEqual(
            (await collect(streamed(chunks))).map((m) => m.id),
            [1]
        );
    });

    test("a broken body rejects after the events that arrived", async () => {
        const seen = [];
        const failure = new TypeError("network error");
        const response = streamed([encoder.encode('id: 1\nevent: text\ndata: {"delta":"a"}\n\n')], {
            failWith: failure,
        });
        await assert.rejects(
            readEventStream(response, (m) => seen.push(m.id)),
            failure
        );
        assert.deepEqual(seen, [1]);
    });

    test("an abort rejects with an AbortError", async () => {
        const controller = new AbortController();
        const body = new ReadableStream({
            start(stream) {
                controller.signal.addEventListener("abort", () =>
                    stream.error(new DOMException("aborted", "AbortError"))
                );
            },
        });
        const reading = readEventStream(new Response(body), () => {});
        controller.abort();
        await assert.rejects(reading, {name: "AbortError"});
    });

    test("a payload that is not JSON, or a throwing handler, rejects and releases the body", async () => {
        await assert.rejects(
            collect(streamed([encoder.encode("event: text\ndata: {oops\n\n")])),
            /not JSON/
        );
        let cancelled = false;
        const body = new ReadableStream({
            pull(controller) {
                controller.enqueue(encoder.encode('event: text\ndata: {"delta":"a"}\n\n'));
            },
            cancel() {
                cancelled = true;
            },
        });
        await assert.rejects(
            readEventStream(new Response(body), () => {
                throw new Error("handler");
            }),
            /handler/
        );
        assert.equal(cancelled, true);
    });

    test("a response without a body is an error", async () => {
        await assert.rejects(
            readEventStream(new Response(null), () => {}),
            /no body/
        );
    });
});
