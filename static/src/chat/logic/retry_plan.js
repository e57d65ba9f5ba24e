/** @odoo-module */
/** What "Retry" sends again after a turn ended with an error. */
import {ErrorCode} from "../../common/chat_status.js";
import {LOCAL_ERRORS} from "./http_errors.js";

/** Refusals of a message by the server's admission step (a pace limit): nothing of it was stored. */
const NOT_ADMITTED = new Set([ErrorCode.PACE_LIMITED]);

/**
 * What "Retry" does after the turn ended with `error`:
 *  - the last request was a resume that failed in the browser (the server never answered, or the
 *    stream broke and could not be read again): the turn still waits for that answer, send it again;
 *  - otherwise send the last user message again (`replaceLast` when the failed request never reached
 *    the server, or the server refused to start it and stored nothing, so the message shown for it
 *    must not be shown twice).
 * Null when there is nothing to retry.
 */
export function retryPlan({lastRequest, error, lastUserText: userText}) {
    const local = Boolean(error && LOCAL_ERRORS.has(error.code));
    if (lastRequest?.kind === "resume" && local) {
        return {kind: "resume", body: lastRequest.body};
    }
    if (typeof userText === "string" && userText.trim()) {
        const unstored = local || NOT_ADMITTED.has(error?.code);
        return {
            kind: "message",
            text: userText,
            replaceLast: lastRequest?.kind === "message" && unstored && !lastRequest.received,
        };
    }
    return null;
}

/** The text of the last user message in the reducer's messages, or null. */
export function lastUserText(messages) {
    for (let i = (messages ?? []).length - 1; i >= 0; i--) {
        if (messages[i].role === "user") {
            return messages[i].text;
        }
    }
    return null;
}
