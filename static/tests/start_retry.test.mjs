import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    START_RETRY_LIMIT,
    newRequestKey,
    startRetryDelay,
    startRetryWait,
    startRetryable,
} from "../src/chat/logic/start_retry.js";
import {errorFromResponse} from "../src/chat/logic/http_errors.js";

// the server's check of a request key (models/conversation/ai_conversation.py REQUEST_KEY)
const SERVER_KEY = /^[A-Za-z0-9_-]{8,64}$/;

describe("startRetryable", () => {
    test("Odoo's own 500 and a proxy's 502, 503, 504 are sent again", () => {
        for (const status of [500, 502, 503, 504]) {
            assert.equal(startRetryable({code: "HTTP_ERROR", status}), true, String(status));
        }
        assert.equal(startRetryable({code: "NETWORK_ERROR"}), true);
    });

    test("the chat route's own refusals and other statuses are not", () => {
        assert.equal(startRetryable({code: "CONVERSATION_BUSY", status: 409}), false);
        assert.equal(startRetryable({code: "INVALID_REQUEST", status: 400}), false);
        assert.equal(startRetryable({code: "CSRF_INVALID", status: 403}), false);
        assert.equal(startRetryable({code: "ALREADY_RECEIVED", status: 409}), false);
        assert.equal(startRetryable({code: "HTTP_ERROR", status: 404}), false);
        assert.equal(startRetryable({code: "HTTP_ERROR", status: 200}), false);
        assert.equal(startRetryable(null), false);
    });
});

describe("a start answered 400 or 500 by the chat route itself", () => {
    test("is not sent again: only a bare 500 (a full database pool) is", () => {
        const invalid = errorFromResponse(
            400,
            '{"error": {"code": "INVALID_REQUEST", "message": "message holds a NUL character"}}'
        );
        const failed = errorFromResponse(
            500,
            '{"error": {"code": "INTERNAL_ERROR", "message": "x"}}'
        );
        for (const error of [invalid, failed]) {
            assert.equal(startRetryWait({kind: "message", received: 0, error, attempt: 1}), null);
        }
        const pool = errorFromResponse(500, "<title>500 Internal Server Error</title>");
        assert.notEqual(
            startRetryWait({kind: "message", received: 0, error: pool, attempt: 1}),
            null
        );
    });
});

describe("startRetryDelay", () => {
    test("grows, stays within half to all of its step, and stops after the limit", () => {
        const low = [];
        const high = [];
        for (let attempt = 1; attempt <= START_RETRY_LIMIT; attempt++) {
            low.push(startRetryDelay(attempt, () => 0));
            high.push(startRetryDelay(attempt, () => 0.999999));
        }
        assert.deepEqual(low, [250, 500, 1000, 2000, 4000, 4000, 4000, 4000]);
        assert.deepEqual(high, [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
        assert.equal(
            startRetryDelay(START_RETRY_LIMIT + 1, () => 0.5),
            null
        );
        assert.equal(startRetryDelay(0), null);
    });

    test("a burst of tabs spreads out instead of coming back together", () => {
        let seed = 7;
        const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        const waits = new Set(Array.from({length: 50}, () => startRetryDelay(3, random)));
        assert.ok(waits.size > 40, `only ${waits.size} different waits for 50 tabs`);
    });
});

describe("startRetryWait", () => {
    const busy = {code: "HTTP_ERROR", status: 500};

    test("a message's start that got no event is sent again", () => {
        assert.equal(
            startRetryWait({kind: "message", received: 0, error: busy, attempt: 1}, () => 0),
            250
        );
    });

    test("not once an event came, nor a resume, nor a stop, nor past the limit", () => {
        assert.equal(startRetryWait({kind: "message", received: 1, error: busy, attempt: 1}), null);
        assert.equal(startRetryWait({kind: "resume", received: 0, error: busy, attempt: 1}), null);
        assert.equal(startRetryWait({kind: "message", received: 0, error: null, attempt: 1}), null);
        assert.equal(
            startRetryWait({
                kind: "message",
                received: 0,
                error: busy,
                attempt: START_RETRY_LIMIT + 1,
            }),
            null
        );
    });
});

describe("newRequestKey", () => {
    test("is a key the server accepts, new each time", () => {
        const keys = new Set(Array.from({length: 100}, () => newRequestKey()));
        assert.equal(keys.size, 100);
        for (const key of keys) {
            assert.match(key, SERVER_KEY);
            assert.equal(key.length, 32);
        }
    });
});
