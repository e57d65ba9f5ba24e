/** @odoo-module */
/**
 * A message's start sent again when its answer proved that nothing was stored.
 *
 * A burst of chats can find Odoo's database pool full: Odoo then answers 500 before the chat route
 * runs, and a reverse proxy that lost its node answers 502, 503 or 504. In both cases the request's
 * transaction was rolled back, so the widget sends the start again after a growing, jittered wait
 * (the tabs of a burst spread out instead of coming back together), showing that it does. A network
 * error before the first event is tried again the same way. Each message carries a request key made
 * once in the browser: should a start have been stored after all (a node lost between its commit
 * and its first byte), the server recognises the key and answers ALREADY_RECEIVED instead of
 * storing and answering the message twice.
 */

/** Statuses that are not the chat route's own answers (those are JSON errors with a code). */
const NOT_STORED_STATUSES = new Set([500, 502, 503, 504]);
export const START_RETRY_LIMIT = 8;
const FIRST_DELAY_MS = 500;
const LONGEST_DELAY_MS = 8000;

/** Whether a start that failed with `error` ({code, status}) may be sent again. */
export function startRetryable(error) {
    if (error?.code === "NETWORK_ERROR") {
        return true;
    }
    return error?.code === "HTTP_ERROR" && NOT_STORED_STATUSES.has(error.status);
}

/**
 * The wait (ms) before sending a request again, or null when it is not sent again: only a
 * message's start (`kind` "message") that received no event, failed with a retryable `error`
 * ({code, status}; null when the user stopped it), and has tries left (`attempt`: this retry's
 * number, from 1).
 */
export function startRetryWait({kind, received, error, attempt}, random = Math.random) {
    if (kind !== "message" || received > 0 || !startRetryable(error)) {
        return null;
    }
    return startRetryDelay(attempt, random);
}

/**
 * The wait before try `attempt` (1 for the first retry): half of an exponential step plus a random
 * part of the other half, at most LONGEST_DELAY_MS; null past START_RETRY_LIMIT.
 */
export function startRetryDelay(attempt, random = Math.random) {
    if (!Number.isInteger(attempt) || attempt < 1 || attempt > START_RETRY_LIMIT) {
        return null;
    }
    const step = Math.min(LONGEST_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
    return Math.round(step / 2 + (random() * step) / 2);
}

/** A new request key: 32 hexadecimal digits from the browser's random generator. */
export function newRequestKey(
    getRandomValues = (array) => globalThis.crypto.getRandomValues(array)
) {
    const bytes = getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
