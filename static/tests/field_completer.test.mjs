import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {COMPLETION_DELAY_MS, FieldCompleter} from "../src/composer/logic/field_completer.js";

/** Timers the test advances by hand: nothing depends on the machine's speed. */
function fakeTimers() {
    let now = 0;
    let next = 1;
    const pending = new Map();
    return {
        setTimeout(fn, ms) {
            pending.set(next, {at: now + ms, fn});
            return next++;
        },
        clearTimeout(id) {
            pending.delete(id);
        },
        advance(ms) {
            now += ms;
            for (const [id, timer] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
                if (timer.at <= now) {
                    pending.delete(id);
                    timer.fn();
                }
            }
        },
    };
}

/** A server the test answers by hand: each question waits until the test resolves it. */
function server() {
    const asked = [];
    return {
        asked,
        ask(field, value, context) {
            let resolve;
            const answer = new Promise((r) => (resolve = r));
            asked.push({field, value, context, resolve});
            return answer;
        },
    };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function completer(options = {}) {
    const timers = fakeTimers();
    const srv = server();
    const values = {name: "Ada"};
    const c = new FieldCompleter({
        ask: srv.ask,
        context: () => ({...values}),
        timers,
        ...options,
    });
    return {c, timers, srv};
}

describe("FieldCompleter", () => {
    test("asks once the user paused typing, with the values already filled in", async () => {
        const {c, timers, srv} = completer();
        c.typed("style", "f");
        c.typed("style", "fo");
        timers.advance(COMPLETION_DELAY_MS - 1);
        assert.equal(srv.asked.length, 0);
        c.typed("style", "for");
        timers.advance(COMPLETION_DELAY_MS - 1);
        assert.equal(srv.asked.length, 0);
        timers.advance(1);
        assert.deepEqual(
            srv.asked.map(({field, value, context}) => ({field, value, context})),
            [{field: "style", value: "for", context: {name: "Ada"}}]
        );
        srv.asked[0].resolve({values: ["formal"]});
        await settle();
        assert.deepEqual(c.state, {field: "style", values: ["formal"], index: -1});
    });

    test("an answer overtaken by a newer keystroke is dropped", async () => {
        const {c, timers, srv} = completer();
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        c.typed("name", "al");
        timers.advance(COMPLETION_DELAY_MS);
        srv.asked[1].resolve({values: ["Alan", "Alonzo"]});
        await settle();
        srv.asked[0].resolve({values: ["Ada", "Alan", "Alonzo"]});
        await settle();
        assert.deepEqual(c.state.values, ["Alan", "Alonzo"]);
    });

    test("an answer that comes while a newer keystroke waits is dropped too", async () => {
        const {c, timers, srv} = completer();
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        c.typed("name", "al");
        srv.asked[0].resolve({values: ["Ada"]});
        await settle();
        assert.deepEqual(c.state.values, []);
        assert.equal(c.state.field, null);
    });

    test("a form whose server does not complete asks nothing", () => {
        const {c, timers, srv} = completer({enabled: false});
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS * 4);
        assert.equal(srv.asked.length, 0);
    });

    test("arrow keys move through the suggestions, Enter picks, Escape closes", async () => {
        const {c, timers, srv} = completer();
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        srv.asked[0].resolve({values: ["Ada", "Alan", "Alonzo"]});
        await settle();
        assert.deepEqual(c.keydown("name", "ArrowDown"), {handled: true});
        assert.deepEqual(c.keydown("name", "ArrowDown"), {handled: true});
        assert.equal(c.state.index, 1);
        c.keydown("name", "ArrowUp");
        c.keydown("name", "ArrowUp");
        assert.equal(c.state.index, 2, "wraps around");
        assert.deepEqual(c.keydown("name", "Enter"), {handled: true, value: "Alonzo"});
        assert.equal(c.state.field, null);

        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        srv.asked[1].resolve({values: ["Ada"]});
        await settle();
        assert.deepEqual(c.keydown("name", "Enter"), {handled: false}, "nothing highlighted yet");
        assert.deepEqual(c.keydown("name", "Escape"), {handled: true});
        assert.equal(c.state.field, null);
        assert.deepEqual(
            c.keydown("name", "ArrowDown"),
            {handled: false},
            "closed: the key is the input's"
        );
    });

    test("keys of another field, and a closed list, are left alone; closing drops what is on its way", async () => {
        const {c, timers, srv} = completer();
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        srv.asked[0].resolve({values: ["Ada"]});
        await settle();
        assert.deepEqual(c.keydown("style", "ArrowDown"), {handled: false});
        c.close();
        c.typed("name", "al");
        timers.advance(COMPLETION_DELAY_MS);
        c.close();
        srv.asked[1].resolve({values: ["Alan"]});
        await settle();
        assert.equal(c.state.field, null);
        assert.equal(c.pick(0), undefined);
    });

    test("a failing request is no suggestion and no error", async () => {
        const {c, timers} = completer({ask: () => Promise.reject(new Error("offline"))});
        c.typed("name", "a");
        timers.advance(COMPLETION_DELAY_MS);
        await settle();
        assert.deepEqual(c.state, {field: null, values: [], index: -1});
    });

    test("a suggestion that is just what was typed is not offered", async () => {
        const {c, timers, srv} = completer();
        c.typed("name", "Ada");
        timers.advance(COMPLETION_DELAY_MS);
        srv.asked[0].resolve({values: ["Ada"]});
        await settle();
        assert.equal(c.state.field, null);
    });
});
