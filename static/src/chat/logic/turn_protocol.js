/** @odoo-module */
/**
 * The values of the turn's protocol the widget shares with the server (docs/events.md), each kept
 * equal to its Python definition by tests_py/test_turn_protocol.py.
 */

/** The events after which the server sends nothing more for the request (services/events.py FINAL_TYPES). */
export const FINAL_TYPES = new Set([
    "done",
    "error",
    "approval_required",
    "auth_required",
    "confirm_continue",
]);

/**
 * Every event type the server sends (services/events.py Event); the widget skips any other, as one
 * from a newer server. Some change nothing shown: `model_refused_param` is for the model's record, `usage` for
 * the usage records.
 */
export const EVENT_TYPES = new Set([
    "start",
    "round",
    "text",
    "thinking",
    "model_refused_param",
    "tool_input",
    "tool_call",
    "tool_result",
    "task_result",
    "tool_search",
    "tool_progress",
    "tool_log",
    "elicitation_required",
    "elicitation_done",
    "sampling_required",
    "sampling_done",
    "approval_required",
    "auth_required",
    "confirm_continue",
    "warning",
    "usage",
    "error",
    "done",
]);

/**
 * A failed call's status, by its result's error code; any other failure is "error"
 * (services/events.py FAILED_CALL_STATUS).
 */
export const FAILED_CALL_STATUS = Object.freeze({TOOL_DENIED: "denied", CANCELLED: "cancelled"});
