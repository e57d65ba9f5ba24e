/** A tool search of the model in the chat: a small block in the answer, between its calls. */

import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {fromHistory, initialChatState, reduce, userMessage} from "../src/chat/logic/chat_state.js";
import {sequence} from "./chat_state_events.mjs";

describe("a tool search", () => {
    test("shows as a block of its query and the tools found, before the calls it made possible", () => {
        const e = sequence();
        const events = [e.start(), e.round(1)];
        events.push(
            e.search("call_s", "invoice", ["create_invoice", "post_invoice", "send_invoice"])
        );
        events.push(e.round(2), e.call("call_a", "create_invoice"), e.result("call_a"));
        const state = events.reduce(reduce, userMessage(initialChatState(), "Invoice Azure"));
        const parts = state.messages.at(-1).parts;
        assert.deepEqual(
            parts.map((part) => part.kind),
            ["search", "tool"]
        );
        assert.equal(parts[0].query, "invoice");
        assert.deepEqual(
            parts[0].found.map((tool) => `${tool.title} (${tool.server})`),
            ["create invoice (Odoo)", "post invoice (Odoo)", "send invoice (Odoo)"]
        );
        assert.notEqual(parts[0].key, parts[1].key);
        assert.equal(state.status, "thinking");
    });

    test("is rebuilt the same from the stored events", () => {
        const e = sequence();
        const events = [e.start(), e.round(1), e.search("call_s", "chart", [])];
        const live = events.reduce(reduce, userMessage(initialChatState(), "Chart"));
        const stored = fromHistory([{role: "user", text: "Chart", seq: 0}], events);
        assert.deepEqual(stored.messages, live.messages);
        assert.deepEqual(live.messages.at(-1).parts[0].found, []);
    });
});
