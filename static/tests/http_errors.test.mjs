import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {errorFromResponse} from "../src/chat/logic/http_errors.js";

describe("errorFromResponse", () => {
    test("reads the chat routes' JSON error", () => {
        assert.deepEqual(
            errorFromResponse(409, '{"error": {"code": "CONVERSATION_BUSY", "message": "Busy"}}'),
            {
                code: "CONVERSATION_BUSY",
                message: "Busy",
                status: 409,
            }
        );
    });

    test("a message received before says which conversation holds its answer", () => {
        const body = JSON.stringify({
            error: {code: "ALREADY_RECEIVED", message: "Received before", conversation_id: 7},
        });
        assert.deepEqual(errorFromResponse(409, body), {
            code: "ALREADY_RECEIVED",
            message: "Received before",
            status: 409,
            conversation_id: 7,
        });
    });

    test("anything else is an HTTP error whose message the widget words", () => {
        for (const body of ["<html>502</html>", "", '{"error": "x"}', "null"]) {
            assert.deepEqual(errorFromResponse(502, body), {
                code: "HTTP_ERROR",
                message: null,
                status: 502,
            });
        }
    });
});
