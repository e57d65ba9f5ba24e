import assert from "node:assert/strict";
import {test} from "node:test";

import {FAILED_CALL_STATUS, FINAL_TYPES} from "../src/chat/logic/turn_protocol.js";

test("a turn's request ends at a pause for a sign-in as at one for an approval", () => {
    for (const type of [
        "done",
        "error",
        "approval_required",
        "auth_required",
        "confirm_continue",
    ]) {
        assert.ok(FINAL_TYPES.has(type), type);
    }
    assert.equal(FINAL_TYPES.has("tool_call"), false);
});

test("a failed call's status comes from its own error codes only", () => {
    assert.equal(FAILED_CALL_STATUS.TOOL_DENIED, "denied");
    assert.equal(FAILED_CALL_STATUS.CANCELLED, "cancelled");
    assert.equal(Object.hasOwn(FAILED_CALL_STATUS, "toString"), false);
});
