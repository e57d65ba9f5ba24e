/** @odoo-module */
import {_t} from "@web/core/l10n/translation";

import {eventFromSse, stopped} from "@ai_mcp/logic/chat_state";
import {ErrorCode} from "@ai_mcp/logic/chat_status";
import {isStreamingStatus} from "@ai_mcp/logic/chat_view";
import {startRetryWait} from "@ai_mcp/logic/start_retry";
import {FINAL_TYPES} from "@ai_mcp/logic/turn_protocol";
import {ChatHttpError, postStream, readEventsAfter} from "../chat_transport";

/** How long a broken stream is read again before the widget gives up (the server cancels the turn
 * once it notices the disconnect, at the latest at its next heartbeat). */
const CATCH_UP_DELAYS = [300, 1000, 2000, 3000, 5000, 5000, 5000, 5000, 5000, 5000, 5000];
/** Following a turn that streams to another tab (opened while running): poll its stored events. */
const FOLLOW_INTERVAL = 1500;
const FOLLOW_LIMIT = 10 * 60 * 1000;
/** A message sent right after "stop" may find the turn still being cancelled (409): try again. */
const BUSY_RETRY_WINDOW = 15000;
const BUSY_RETRY_DELAY = 700;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a failed fetch was, as logic/start_retry.js reads it: null when it was aborted. */
function failure(error) {
    if (error instanceof ChatHttpError) {
        return error.error;
    }
    return error?.name === "AbortError" ? null : {code: "NETWORK_ERROR"};
}

/**
 * The chat action's streamed requests: a message or a resume POSTed and read as it streams, read
 * again from the stored events when the stream breaks, and the polling of a turn that streams to
 * another tab. One request streams at a time; `request` is it ({ kind, url, body, received, final,
 * stopped, retrying, controller, before }), `lastRequest` the last one, for "Retry". A message's start
 * that failed before anything was stored is sent again (logic/start_retry.js).
 *
 * `host` is what the action lends it, so that the view state stays the action's:
 *   chat()          the reducer state
 *   apply(event)    reduce one event into it
 *   setChat(chat)   replace it
 *   fail(error)     end the turn with { code, message?, status? }
 *   setBusy(busy)   a request streams or not
 *   retrying(n)     a message's start is sent again for the n-th time (null: it is not)
 *   alive()         the action is still on screen
 *   started()       a new conversation got its id from the stream
 *   settled()       a request or a follow ended: the conversation list may have changed
 */
export class TurnStream {
    constructor(host) {
        this.host = host;
        this.request = null;
        this.lastRequest = null;
        this.stoppedAt = 0;
        this.followToken = 0;
    }

    /** Another conversation is shown: what was followed or failed belongs to the previous one. */
    forget() {
        this.followToken++;
        this.lastRequest = null;
    }

    /** The action leaves the screen: the server cancels the turn (nothing runs in the background). */
    dispose() {
        this.followToken++;
        this.request?.controller.abort();
    }

    stop() {
        const request = this.request;
        if (!request) {
            return;
        }
        request.stopped = true;
        request.controller.abort();
        this.request = null;
        this.host.setBusy(false);
        this.stoppedAt = Date.now();
        this.host.setChat(stopped(this.host.chat()));
    }

    /** `refused(error)` may take a refusal of the server's (a ChatHttpError's { code, message, status })
     * upon itself by returning true; the turn then does not end with it. */
    async run(kind, url, body, {before = null, refused = null} = {}) {
        const host = this.host;
        const request = {
            kind,
            url,
            body,
            before,
            received: 0,
            final: false,
            stopped: false,
            retrying: false,
            controller: new AbortController(),
        };
        this.followToken++;
        this.request = this.lastRequest = request;
        host.setBusy(true);
        try {
            await this.post(request);
            if (!request.final && !request.stopped) {
                await this.catchUp(request); // the stream ended before the turn did
            }
        } catch (error) {
            if (request.stopped || !host.alive()) {
                return;
            }
            if (error instanceof ChatHttpError) {
                if (!refused?.(error.error)) {
                    host.fail(error.error);
                }
            } else if (error?.name === "AbortError") {
                host.setChat(stopped(host.chat()));
            } else {
                await this.catchUp(request); // the network broke: read what the server stored
            }
        } finally {
            if (this.request === request) {
                this.request = null;
                host.setBusy(false);
            }
            if (host.alive()) {
                host.settled();
            }
        }
    }

    async post(request) {
        const onMessage = (message) => this.receive(request, message);
        let retries = 0;
        try {
            for (;;) {
                try {
                    await postStream(request.url, request.body, {
                        signal: request.controller.signal,
                        onMessage,
                    });
                    return;
                } catch (error) {
                    if (request.stopped || !this.host.alive()) {
                        throw error;
                    }
                    const retryWait = startRetryWait({
                        kind: request.kind,
                        received: request.received,
                        error: failure(error),
                        attempt: retries + 1,
                    });
                    const wait = retryWait ?? this.busyWait(error);
                    if (wait === null) {
                        throw error;
                    }
                    if (retryWait !== null) {
                        retries++;
                        request.retrying = true;
                        this.host.retrying(retries);
                    }
                    await sleep(wait);
                }
            }
        } finally {
            this.retried(request);
        }
    }

    /** The start sent again got its answer (or gave up): the status line says so no more. */
    retried(request) {
        if (request.retrying) {
            request.retrying = false;
            this.host.retrying(null);
        }
    }

    /** A message sent right after "stop" that finds the turn still being cancelled. */
    busyWait(error) {
        const busy =
            error instanceof ChatHttpError && error.error.code === ErrorCode.CONVERSATION_BUSY;
        return busy && Date.now() - this.stoppedAt < BUSY_RETRY_WINDOW ? BUSY_RETRY_DELAY : null;
    }

    receive(request, message) {
        const host = this.host;
        if (request.stopped || request !== this.request || !host.alive()) {
            return;
        }
        const event = eventFromSse(message);
        this.retried(request);
        request.received++;
        const wasNew = !host.chat().conversationId;
        host.apply(event);
        if (event.type === "start" && wasNew && host.chat().conversationId) {
            host.started();
        }
        if (FINAL_TYPES.has(event.type)) {
            request.final = true;
        }
    }

    /** The stream broke or ended early: read the conversation's stored events after the last one seen. */
    async catchUp(request) {
        const host = this.host;
        const onMessage = (message) => this.receive(request, message);
        for (const delay of CATCH_UP_DELAYS) {
            const conversationId = host.chat().conversationId;
            if (!conversationId || request.stopped || !host.alive()) {
                break;
            }
            await sleep(delay);
            if (request.stopped || !host.alive()) {
                return;
            }
            try {
                await readEventsAfter(conversationId, host.chat().lastEventId, {
                    signal: request.controller.signal,
                    onMessage,
                });
            } catch (error) {
                if (request.stopped || error?.name === "AbortError") {
                    return;
                }
                // still unreachable: try again after the next delay
            }
            if (request.final) {
                return;
            }
        }
        if (!request.stopped && host.alive() && request === this.request) {
            host.fail({
                code: "NETWORK_ERROR",
                message: host.chat().conversationId
                    ? _t(
                          "The connection to the server was lost and the answer could not be read again."
                      )
                    : _t("The connection to the server was lost before the answer started."),
            });
        }
    }

    /** A conversation opened while its turn runs elsewhere: poll its stored events until the turn pauses or ends. */
    async follow(conversationId) {
        const host = this.host;
        const token = ++this.followToken;
        const started = Date.now();
        const current = () =>
            token === this.followToken &&
            host.alive() &&
            host.chat().conversationId === conversationId;
        const onMessage = (message) => current() && host.apply(eventFromSse(message));
        while (
            current() &&
            isStreamingStatus(host.chat().status) &&
            Date.now() - started < FOLLOW_LIMIT
        ) {
            await sleep(FOLLOW_INTERVAL);
            if (!current()) {
                return;
            }
            try {
                await readEventsAfter(conversationId, host.chat().lastEventId, {onMessage});
            } catch {
                // try again at the next tick
            }
        }
        if (current()) {
            host.settled();
        }
    }
}
