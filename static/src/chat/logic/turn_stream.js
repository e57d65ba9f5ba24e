/** @odoo-module */
import {ChatHttpError, postStream, readEventsAfter} from "./chat_transport.js";
import {eventFromSse, stopped} from "./chat_state.js";
import {ErrorCode} from "../../common/chat_status.js";
import {isStreamingStatus} from "../../common/chat_view.js";
import {startRetryWait} from "./start_retry.js";
import {FINAL_TYPES} from "./turn_protocol.js";

/** How long a broken stream is read again before the widget gives up (the server cancels the turn
 * once it notices the disconnect, at the latest at its next heartbeat). */
const CATCH_UP_DELAYS = [300, 1000, 2000, 3000, 5000, 5000, 5000, 5000, 5000, 5000, 5000];
/** Following a turn that streams to another tab (opened while running): poll its stored events. */
const FOLLOW_INTERVAL = 1500;
const FOLLOW_LIMIT = 10 * 60 * 1000;
/** A message sent right after "stop" may find the turn still being cancelled (409): try again. */
const BUSY_RETRY_WINDOW = 15000;
const BUSY_RETRY_DELAY = 700;

/** What a failed fetch was, as logic/start_retry.js reads it: null when it was aborted. */
function failure(error) {
    if (error instanceof ChatHttpError) {
        return error.error;
    }
    return error?.name === "AbortError" ? null : {code: "NETWORK_ERROR"};
}

/**
 * The chat's streamed requests: a message or a resume POSTed and read as it streams, read again
 * from the stored events when the stream breaks, and the polling of a turn that streams to another
 * tab. One request streams at a time; `request` is it ({ kind, url, body, received, final, stopped,
 * retrying, controller, before }), `lastRequest` the last one, for "Retry". A message's start that
 * failed before anything was stored is sent again (start_retry.js).
 *
 * Every event goes into the store (chat_store.js), which also says whether a request streams
 * (`state.busy`) and which try of a start is under way (`state.startRetry`); a new conversation's
 * id goes into the URL, and the conversation list is read again once a request or a follow ends.
 */
export class TurnStream {
    constructor(store) {
        this.store = store;
        this.clock = store.services.clock;
        this.fetch = store.services.fetch;
        this.request = null;
        this.lastRequest = null;
        this.stoppedAt = 0;
        this.followToken = 0;
        this.followed = null; // the conversation whose turn is followed (it streams elsewhere)
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
            return this.stopFollowed();
        }
        request.stopped = true;
        request.controller.abort();
        this.request = null;
        this.store.state.busy = false;
        this.stoppedAt = this.clock.now();
        this.store.update(stopped);
    }

    /** `refused(error)` may take a refusal of the server's (a ChatHttpError's { code, message, status })
     * upon itself by returning true; the turn then does not end with it. */
    async run(kind, url, body, {before = null, refused = null} = {}) {
        const store = this.store;
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
        store.state.busy = true;
        try {
            await this.post(request);
            if (!request.final && !request.stopped) {
                await this.catchUp(request); // the stream ended before the turn did
            }
        } catch (error) {
            if (request.stopped || !store.alive) {
                return;
            }
            if (error instanceof ChatHttpError) {
                if (!refused?.(error.error)) {
                    store.fail(error.error);
                }
            } else if (error?.name === "AbortError") {
                store.update(stopped);
            } else {
                await this.catchUp(request); // the network broke: read what the server stored
            }
        } finally {
            if (this.request === request) {
                this.request = null;
                store.state.busy = false;
            }
            if (store.alive) {
                store.refreshConversations();
            }
        }
    }

    async post(request) {
        const onMessage = (message) => this.receive(request, message);
        let retries = 0;
        try {
            for (;;) {
                try {
                    await postStream(this.fetch, request.url, request.body, {
                        signal: request.controller.signal,
                        onMessage,
                    });
                    return;
                } catch (error) {
                    if (request.stopped || !this.store.alive) {
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
                        this.store.state.startRetry = retries;
                    }
                    await this.clock.sleep(wait);
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
            this.store.state.startRetry = null;
        }
    }

    /** A message sent right after "stop" that finds the turn still being cancelled. */
    busyWait(error) {
        const busy =
            error instanceof ChatHttpError && error.error.code === ErrorCode.CONVERSATION_BUSY;
        return busy && this.clock.now() - this.stoppedAt < BUSY_RETRY_WINDOW
            ? BUSY_RETRY_DELAY
            : null;
    }

    receive(request, message) {
        const store = this.store;
        if (request.stopped || request !== this.request || !store.alive) {
            return;
        }
        const event = eventFromSse(message);
        this.retried(request);
        request.received++;
        const wasNew = !store.chat.conversationId;
        store.dispatch(event);
        if (event.type === "start" && wasNew && store.chat.conversationId) {
            store.services.router.pushState({active_id: store.chat.conversationId});
            store.refreshConversations();
        }
        if (FINAL_TYPES.has(event.type)) {
            request.final = true;
        }
    }

    /** The stream broke or ended early: read the conversation's stored events after the last one seen. */
    async catchUp(request) {
        const store = this.store;
        const onMessage = (message) => this.receive(request, message);
        for (const delay of CATCH_UP_DELAYS) {
            const conversationId = store.chat.conversationId;
            if (!conversationId || request.stopped || !store.alive) {
                break;
            }
            await this.clock.sleep(delay);
            if (request.stopped || !store.alive) {
                return;
            }
            try {
                await readEventsAfter(this.fetch, conversationId, store.chat.lastEventId, {
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
        if (!request.stopped && store.alive && request === this.request) {
            // gave up reading it again; the words say whether the answer had started
            store.fail({
                code: "NETWORK_ERROR",
                gaveUp: true,
                started: Boolean(store.chat.conversationId),
            });
        }
    }

    /** Stop for a followed turn: the server ends it when its process died (its heartbeat is stale),
     * and its end is read at once; a turn still alive elsewhere goes on, and the user is told. */
    async stopFollowed() {
        const store = this.store;
        const conversationId = this.followed;
        if (!conversationId) {
            return;
        }
        const current = () => store.alive && store.chat.conversationId === conversationId;
        let answer = null;
        try {
            answer = await store.services.rpc("/ai_mcp/chat/stop", {
                conversation_id: conversationId,
            });
        } catch {
            // unreachable: the follow goes on and shows the turn's end whenever it comes
        }
        if (!answer || !current()) {
            return;
        }
        if (!answer.stopped) {
            store.services.notify(store.services.words.runsElsewhere(), "warning");
            return;
        }
        try {
            await readEventsAfter(this.fetch, conversationId, store.chat.lastEventId, {
                onMessage: (message) => current() && store.dispatch(eventFromSse(message)),
            });
        } catch {
            // the follow reads it at its next tick
        }
    }

    /** A conversation opened while its turn runs elsewhere: poll its stored events until the turn pauses or ends. */
    async follow(conversationId) {
        const store = this.store;
        const token = ++this.followToken;
        this.followed = conversationId;
        const started = this.clock.now();
        const current = () =>
            token === this.followToken &&
            store.alive &&
            store.chat.conversationId === conversationId;
        const onMessage = (message) => current() && store.dispatch(eventFromSse(message));
        while (
            current() &&
            isStreamingStatus(store.chat.status) &&
            this.clock.now() - started < FOLLOW_LIMIT
        ) {
            await this.clock.sleep(FOLLOW_INTERVAL);
            if (!current()) {
                return;
            }
            try {
                await readEventsAfter(this.fetch, conversationId, store.chat.lastEventId, {
                    onMessage,
                });
            } catch {
                // try again at the next tick
            }
        }
        if (token === this.followToken) {
            this.followed = null;
        }
        if (current()) {
            store.refreshConversations();
        }
    }
}
