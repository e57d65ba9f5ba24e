/** A server's request for a completion of the assistant's model (sampling): the block shows it
 * until it is answered, keeps what went back to the server, and the user's answer goes to the call. */

import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {CallRequests} from "../src/chat/logic/call_requests.js";
import {fromHistory, initialChatState, reduce, userMessage} from "../src/chat/logic/chat_state.js";
import {editedRequest} from "../src/chat/logic/sampling_state.js";
import {ScriptedServer, storeOn} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

function samplingEvents(e) {
    let seq = 100;
    return {
        sample: (id, sampling) => ({
            type: "sampling_required",
            id,
            sampling,
            server: "Quiz",
            messages: [{role: "user", text: "Capital of France?"}],
            system_prompt: "Answer briefly.",
            max_tokens: 200,
            seq: ++seq,
        }),
        sampled: (id, sampling, action, extra = {}) => ({
            type: "sampling_done",
            id,
            sampling,
            action,
            answer: null,
            model: null,
            note: null,
            ...extra,
            seq: ++seq,
        }),
        ...e,
    };
}

function running() {
    const e = samplingEvents(sequence());
    const state = [
        e.start(),
        e.round(1),
        e.call("call_a", "quiz"),
        e.call("call_b", "other"),
    ].reduce(reduce, userMessage(initialChatState(), "Quiz me"));
    return {e, state};
}

const block = (state, id) => state.messages.at(-1).parts.find((part) => part.id === id);

describe("sampling in the chat state", () => {
    test("the request shows on its call's block until the model's answer closes it, which stays shown", () => {
        const {e, state} = running();
        const open = reduce(state, e.sample("call_a", "s1"));
        assert.deepEqual(block(open, "call_a").sampling, {
            sampling: "s1",
            server: "Quiz",
            messages: [{role: "user", text: "Capital of France?"}],
            systemPrompt: "Answer briefly.",
            maxTokens: 200,
        });
        assert.equal(block(open, "call_b").sampling, undefined);
        const other = reduce(open, e.sampled("call_a", "other", "accept"));
        assert.equal(
            block(other, "call_a").sampling.sampling,
            "s1",
            "another request's end leaves it open"
        );
        const answered = reduce(
            open,
            e.sampled("call_a", "s1", "accept", {answer: "Paris.", model: "gpt"})
        );
        assert.equal(block(answered, "call_a").sampling, null);
        assert.deepEqual(block(answered, "call_a").sampled, [
            {
                sampling: "s1",
                server: "Quiz",
                action: "accept",
                answer: "Paris.",
                model: "gpt",
                note: null,
            },
        ]);
        const finished = reduce(answered, e.result("call_a"));
        assert.equal(block(finished, "call_a").sampled[0].answer, "Paris.", "the result keeps it");
    });

    test("a declined request is kept as declined, with no answer", () => {
        const {e, state} = running();
        const declined = [e.sample("call_a", "s2"), e.sampled("call_a", "s2", "decline")].reduce(
            reduce,
            state
        );
        assert.deepEqual(
            block(declined, "call_a").sampled.map((s) => [s.action, s.answer]),
            [["decline", null]]
        );
    });

    test("a request of a call that no longer runs is not shown", () => {
        const {e, state} = running();
        const done = reduce(state, e.result("call_a"));
        assert.equal(block(reduce(done, e.sample("call_a", "s3")), "call_a").sampling, undefined);
    });

    test("history rebuilds what the stream showed", () => {
        const {e} = running();
        const events = [
            e.start(),
            e.round(1),
            e.call("call_a", "quiz"),
            e.sample("call_a", "s4"),
            e.sampled("call_a", "s4", "accept", {answer: "Paris.", model: "gpt"}),
            e.result("call_a"),
            e.done(1),
        ];
        const streamed = events.reduce(reduce, userMessage(initialChatState(), "Quiz me"));
        const rebuilt = fromHistory([{role: "user", content: "Quiz me", seq: 0}], events);
        assert.deepEqual(block(rebuilt, "call_a").sampled, block(streamed, "call_a").sampled);
    });
});

describe("the edited request", () => {
    test("is what the user typed, with a whole output cap", () => {
        assert.deepEqual(editedRequest([{role: "user", text: "Capital of Belgium?"}], "50"), {
            request: {messages: [{role: "user", text: "Capital of Belgium?"}], max_tokens: 50},
            problem: null,
        });
    });

    test("needs a cap of at least one token and no empty message", () => {
        assert.equal(editedRequest([{role: "user", text: "x"}], "0").problem, "max_tokens");
        assert.equal(editedRequest([{role: "user", text: "x"}], "1.5").problem, "max_tokens");
        assert.equal(editedRequest([{role: "user", text: "  "}], "5").problem, "empty");
    });
});

describe("the user's answer to a sampling request", () => {
    test("goes to the call that asked, naming the request", async () => {
        const server = new ScriptedServer();
        const {store} = storeOn(server);
        const e = samplingEvents(sequence());
        store.update(userMessage, "Quiz me");
        store.dispatch(e.start());
        store.dispatch(e.call("c1", "quiz"));
        store.dispatch(e.sample("c1", "s9"));
        const key = store.chat.messages.at(-1).parts.find((part) => part.kind === "tool").key;
        server.routes["/ai_mcp/chat/sampling"] = {answered: true};
        const edited = {messages: [{role: "user", text: "Capital of Belgium?"}], max_tokens: 50};
        const checked = await new CallRequests(store).answer(key, "accept", edited, "sampling");
        assert.deepEqual(checked, {answered: true});
        assert.deepEqual(server.calls("/ai_mcp/chat/sampling"), [
            {conversation_id: 7, call_id: "c1", sampling: "s9", action: "accept", content: edited},
        ]);
        assert.deepEqual(server.calls("/ai_mcp/chat/elicitation"), []);
    });
});
