import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {lastUserText, retryPlan} from "../src/chat/logic/retry_plan.js";

describe("retryPlan", () => {
    const message = {kind: "message", body: {message: "hi"}, received: 3};
    const resume = {kind: "resume", body: {conversation_id: 7, go_on: true}, received: 0};

    test("a resume that failed in the browser is sent again", () => {
        assert.deepEqual(
            retryPlan({lastRequest: resume, error: {code: "NETWORK_ERROR"}, lastUserText: "hi"}),
            {
                kind: "resume",
                body: resume.body,
            }
        );
    });

    test("a turn the server ended is asked again with the last user message", () => {
        assert.deepEqual(
            retryPlan({lastRequest: resume, error: {code: "LLM_TIMEOUT"}, lastUserText: "hi"}),
            {
                kind: "message",
                text: "hi",
                replaceLast: false,
            }
        );
        assert.deepEqual(
            retryPlan({lastRequest: message, error: {code: "NETWORK_ERROR"}, lastUserText: "hi"}),
            {
                kind: "message",
                text: "hi",
                replaceLast: false,
            }
        );
    });

    test("a message that never reached the server replaces its own copy instead of being shown twice", () => {
        const unsent = {...message, received: 0};
        assert.equal(
            retryPlan({lastRequest: unsent, error: {code: "HTTP_ERROR"}, lastUserText: "hi"})
                .replaceLast,
            true
        );
        assert.equal(
            retryPlan({lastRequest: unsent, error: {code: "CONVERSATION_BUSY"}, lastUserText: "hi"})
                .replaceLast,
            false
        );
        assert.equal(
            retryPlan({lastRequest: unsent, error: {code: "PACE_LIMITED"}, lastUserText: "hi"})
                .replaceLast,
            true,
            "a message the server refused to start was not stored either"
        );
    });

    test("nothing to retry without a user message", () => {
        assert.equal(retryPlan({lastRequest: null, error: {code: "X"}, lastUserText: null}), null);
        assert.equal(
            retryPlan({lastRequest: message, error: {code: "X"}, lastUserText: "  "}),
            null
        );
    });
});

describe("lastUserText", () => {
    test("the text of the last user message, or null", () => {
        const messages = [
            {role: "user", text: "a"},
            {role: "assistant", parts: []},
            {role: "user", text: "b"},
            {role: "assistant", parts: []},
        ];
        assert.equal(lastUserText(messages), "b");
        assert.equal(lastUserText([]), null);
    });
});
