import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {userMessage} from "../src/chat/logic/chat_state.js";
import {ChatStatus} from "../src/common/chat_status.js";
import {canSend} from "../src/chat/logic/chat_store.js";
import {ScriptedServer, storeOn} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

describe("ChatStore", () => {
    test("events dispatched show as the answer, and every listener hears them", () => {
        const {store} = storeOn(new ScriptedServer());
        const heard = [];
        store.subscribe((chat, event) => heard.push([chat.status, event?.type ?? null]));
        const e = sequence();
        store.update(userMessage, "hello");
        for (const event of [e.start(), e.round(1), e.text("hi "), e.text("there"), e.done(1)]) {
            store.dispatch(event);
        }
        const answer = store.chat.messages.at(-1);
        assert.equal(answer.role, "assistant");
        assert.deepEqual(
            answer.parts.filter((part) => part.kind === "text").map((part) => part.text),
            ["hi there"]
        );
        assert.equal(store.chat.status, ChatStatus.IDLE);
        assert.equal(store.chat.conversationId, 7);
        assert.deepEqual(heard.slice(0, 2), [
            [ChatStatus.THINKING, null],
            [ChatStatus.THINKING, "start"],
        ]);
        assert.deepEqual(heard.at(-1), [ChatStatus.IDLE, "done"]);
    });

    test("an event read again after a reconnect changes nothing", () => {
        const {store} = storeOn(new ScriptedServer());
        const e = sequence();
        store.update(userMessage, "hello");
        const text = e.text("once");
        store.dispatch(e.start());
        store.dispatch(text);
        const before = store.chat;
        store.dispatch(text);
        assert.equal(store.chat, before);
    });

    test("a failure the server did not word is worded for the user; the server's words are kept", () => {
        const {store} = storeOn(new ScriptedServer());
        store.update(userMessage, "hello");
        store.fail({code: "HTTP_ERROR", message: null, status: 502});
        assert.equal(store.chat.status, ChatStatus.ERROR);
        assert.deepEqual(store.chat.error, {code: "HTTP_ERROR", message: "words.error HTTP_ERROR"});
        store.update(userMessage, "again");
        store.fail({code: "CONVERSATION_BUSY", message: "Another answer is running.", status: 409});
        assert.equal(store.chat.error.message, "Another answer is running.");
    });

    test("the user may send with an assistant chosen, when nothing streams or waits", () => {
        const {store} = storeOn(new ScriptedServer());
        assert.equal(store.canSend, true);
        store.state.busy = true;
        assert.equal(store.canSend, false);
        store.state.busy = false;
        const e = sequence();
        store.update(userMessage, "delete it");
        store.dispatch(e.start());
        store.dispatch(e.call("c1", "delete", {requires_approval: true}));
        store.dispatch(e.approval("c1"));
        assert.equal(store.canSend, false);
        store.fail({code: "NETWORK_ERROR"});
        assert.equal(store.canSend, true);
        store.state.assistantId = null;
        assert.equal(canSend(store.state), false);
    });

    test("a new conversation is asked about with its cloud service, a stored one by its id", () => {
        const {store} = storeOn(new ScriptedServer());
        store.state.cloudServiceId = 5;
        assert.deepEqual(store.conversationParams(), {assistant_id: 3, cloud_service_id: 5});
        store.dispatch(sequence().start());
        assert.deepEqual(store.conversationParams(), {assistant_id: 3, conversation_id: 7});
    });

    test("the conversation list is read again, unless the chat has left the screen", async () => {
        const server = new ScriptedServer();
        const {store} = storeOn(server);
        server.routes["/ai_mcp/conversations"] = [{id: 7, name: "Leads"}];
        await store.refreshConversations();
        assert.deepEqual(store.state.conversations, [{id: 7, name: "Leads"}]);
        server.routes["/ai_mcp/conversations"] = [];
        store.close();
        await store.refreshConversations();
        assert.deepEqual(store.state.conversations, [{id: 7, name: "Leads"}]);
    });
});
