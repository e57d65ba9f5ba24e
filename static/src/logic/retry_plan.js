/** @odoo-module */
/** What "Retry" sends again after a turn ended with an error. */
import {LOCAL_ERRORS} from "./http_errors.js";

/**
 * What "Retry" does after the turn ended with `error`:
 *  - the last request was a resume that failed in the browser (the server never answered, or the
 *    stream broke and could not be read again): the turn still waits for that answer, send it again;
 *  - otherwise send the last user message again (`fresh` when the failed request never reached the
 *    server, so the message shown for it must not be shown twice).
 * Null when there is nothing to retry.
 */
export function retryPlan({lastRequest, error, lastUserText: userText}) {
    const local = Boolean(error && LOCAL_ERRORS.has(error.code));
    if (lastRequest?.kind === "resume" && local) {
        return {kind: "resume", body: lastRequest.body};
    }
    if (typeof userText === "string" && userText.trim()) {
        return {
            kind: "message",
            text: userText,
            replaceLast: lastRequest?.kind === "message" && local && !lastRequest.received,
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
