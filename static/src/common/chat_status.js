/** @odoo-module */
/**
 * The statuses and refusal codes the widget shares with the server, one definition each; the values
 * the server also knows are kept equal to their Python definitions by tests_py/test_turn_protocol.py.
 */

/** The chat's status (chat_state.js describes each); the paused ones are ConversationState's. */
export const ChatStatus = Object.freeze({
    IDLE: "idle",
    THINKING: "thinking",
    RUNNING_TOOLS: "running_tools",
    AWAITING_APPROVAL: "awaiting_approval",
    AWAITING_CONFIRMATION: "awaiting_confirmation",
    AWAITING_AUTH: "awaiting_auth",
    ERROR: "error",
});

/** A stored conversation's `state` (turn/states.py ConversationState). */
export const ConversationState = Object.freeze({
    IDLE: "idle",
    RUNNING: "running",
    AWAITING_APPROVAL: "awaiting_approval",
    AWAITING_CONFIRMATION: "awaiting_confirmation",
    AWAITING_AUTH: "awaiting_auth",
});

/** A tool block's status; the finished ones are the server's (turn/states.py MessageStatus). */
export const CallStatus = Object.freeze({
    PREPARING: "preparing",
    RUNNING: "running",
    PENDING_APPROVAL: "pending_approval",
    PENDING_SIGN_IN: "pending_sign_in",
    DONE: "done",
    ERROR: "error",
    DENIED: "denied",
    CANCELLED: "cancelled",
});

/** The server's error codes the widget acts on: refusals of a request and a failed call's code
 * (services/errors.py ErrorCode). */
export const ErrorCode = Object.freeze({
    CONVERSATION_BUSY: "CONVERSATION_BUSY",
    NOT_WAITING: "NOT_WAITING",
    ALREADY_RECEIVED: "ALREADY_RECEIVED",
    PACE_LIMITED: "PACE_LIMITED",
    APPROVAL_REQUIRED: "APPROVAL_REQUIRED",
    CANCELLED: "CANCELLED",
});
