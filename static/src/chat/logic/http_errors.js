/** @odoo-module */
/**
 * The chat routes' errors as the widget handles them: what the server answered instead of a stream,
 * and the errors that happened in the browser (the server may not even know of them).
 */

/** Errors that happened in the browser, not in the turn. */
export const LOCAL_ERRORS = new Set(["NETWORK_ERROR", "HTTP_ERROR"]);

/**
 * An answer that is not a stream: the JSON error of the chat routes ({"error": {code, message}}),
 * or a bare HTTP status. `message` is null when the server gave none: the caller words it.
 */
export function errorFromResponse(status, bodyText) {
    let error = null;
    try {
        error = JSON.parse(bodyText)?.error ?? null;
    } catch {
        error = null;
    }
    if (error && typeof error === "object" && typeof error.code === "string") {
        const refusal = {
            code: error.code,
            message: typeof error.message === "string" ? error.message : null,
            status,
        };
        // ALREADY_RECEIVED says which conversation holds the answer: the widget opens it
        if (Number.isInteger(error.conversation_id)) {
            refusal.conversation_id = error.conversation_id;
        }
        return refusal;
    }
    return {code: "HTTP_ERROR", message: null, status};
}
