import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {CallRequests} from "../src/chat/logic/call_requests.js";
import {userMessage} from "../src/chat/logic/chat_state.js";
import {CallStatus} from "../src/common/chat_status.js";
import {ScriptedServer, storeOn} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

/** A chat whose call c1 of the CRM runs, in conversation 7. */
function running() {
    const server = new ScriptedServer();
    const {store, seen} = storeOn(server);
    const e = sequence();
    store.update(userMessage, "find leads");
    store.dispatch(e.start());
    store.dispatch(e.call("c1", "search"));
    const key = store.chat.messages.at(-1).parts.find((part) => part.kind === "tool").key;
    return {server, store, seen, e, key, calls: new CallRequests(store)};
}

describe("CallRequests on the store", () => {
    test("stopping a call shows it stopping and asks the worker running it", async () => {
        const {server, store, key, calls} = running();
        server.routes["/ai_mcp/chat/cancel_call"] = {cancelled: true};
        await calls.cancel(key);
        const block = store.chat.messages.at(-1).parts.find((part) => part.key === key);
        assert.equal(block.cancelling, true);
        assert.deepEqual(server.calls("/ai_mcp/chat/cancel_call"), [
            {conversation_id: 7, call_id: "c1"},
        ]);
    });

    test("a stop the server did not take is told to the user", async () => {
        const {server, seen, key, calls} = running();
        server.routes["/ai_mcp/chat/cancel_call"] = new Error("Server unreachable");
        await calls.cancel(key);
        assert.deepEqual(seen.notified, [
            {message: "words.notStopped Server unreachable", type: "danger"},
        ]);
    });

    test("a finished call is not stopped", async () => {
        const {server, store, e, key, calls} = running();
        store.dispatch(e.result("c1"));
        await calls.cancel(key);
        assert.equal(
            store.chat.messages.at(-1).parts.find((part) => part.key === key).status,
            CallStatus.DONE
        );
        assert.deepEqual(server.calls("/ai_mcp/chat/cancel_call"), []);
    });

    test("a call that left its task running is stopped, then the conversation's new events are read", async () => {
        const {server, store, e, key} = running();
        store.dispatch(
            e.result("c1", {task: {task_id: "t-1", server_key: "k", status: "working"}})
        );
        store.dispatch(e.done(1));
        const read = [];
        const calls = new CallRequests(store, {read: async (id) => read.push(id)});
        server.routes["/ai_mcp/chat/cancel_call"] = {cancelling: true};
        await calls.cancel(key);
        assert.deepEqual(server.calls("/ai_mcp/chat/cancel_call"), [
            {conversation_id: 7, call_id: "c1"},
        ]);
        assert.equal(
            store.chat.messages.at(-1).parts.find((part) => part.key === key).cancelling,
            true
        );
        assert.deepEqual(
            read,
            [7],
            "the task's end, added as the server answered, is read at once"
        );
    });

    test("the answer to a server's question goes to the call that asked it", async () => {
        const {server, store, e, key, calls} = running();
        store.dispatch(e.ask("c1", "el-1"));
        server.routes["/ai_mcp/chat/elicitation"] = {answered: true, errors: []};
        const checked = await calls.answer(key, "accept", {pick: "a"});
        assert.deepEqual(checked, {answered: true, errors: []});
        assert.deepEqual(server.calls("/ai_mcp/chat/elicitation"), [
            {
                conversation_id: 7,
                call_id: "c1",
                elicitation: "el-1",
                action: "accept",
                content: {pick: "a"},
            },
        ]);
    });

    test("a task asking after its turn ended is answered on its block, which then closes the card", async () => {
        const {server, store, e, key, calls} = running();
        store.dispatch(e.result("c1"));
        store.dispatch(e.done(1));
        store.update(userMessage, "and then?");
        store.dispatch(e.start());
        store.dispatch(e.done(1));
        store.dispatch(e.ask("c1", "task-3-confirm", {task: true}));
        const block = () =>
            store.chat.messages.flatMap((m) => m.parts ?? []).find((part) => part.key === key);
        assert.equal(
            block().question.message,
            "Which one?",
            "the card is on the earlier answer's block"
        );
        server.routes["/ai_mcp/chat/elicitation"] = {answered: true};
        const checked = await calls.answer(key, "accept", {pick: "a"});
        assert.deepEqual(checked, {answered: true});
        assert.equal(server.calls("/ai_mcp/chat/elicitation")[0].elicitation, "task-3-confirm");
        assert.equal(
            block().question,
            null,
            "no turn streams its end: the card closes on the answer"
        );
    });
});
