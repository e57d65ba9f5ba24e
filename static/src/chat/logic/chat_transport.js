/** @odoo-module */
/**
 * The chat's HTTP side (the routes: docs/http.md; the events: docs/events.md): streamed POSTs
 * read with fetch() (EventSource cannot POST) and the catch-up GET of a conversation's stored events.
 * Events are handed to `onMessage` as SseParser yields them; the caller reduces them. `fetch` is
 * the store's (chat_store.js), so node tests stream what a server would send.
 */

import {errorFromResponse} from "./http_errors.js";
import {readEventStream} from "./event_stream.js";

export const STREAM_URL = "/ai_mcp/chat/stream";
export const RESUME_URL = "/ai_mcp/chat/resume";

/** The server refused the request: `error` is { code, message, status } (message may be null). */
export class ChatHttpError extends Error {
    constructor(error) {
        super(error.message || `${error.code} (HTTP ${error.status})`);
        this.name = "ChatHttpError";
        this.error = error;
    }
}

function csrfToken() {
    return globalThis.odoo?.csrf_token ?? "";
}

async function openStream(fetch, url, init) {
    const response = await fetch(url, {
        credentials: "same-origin",
        cache: "no-store",
        ...init,
        headers: {Accept: "text/event-stream", ...init.headers},
    });
    const type = response.headers.get("Content-Type") || "";
    if (!response.ok || !type.startsWith("text/event-stream")) {
        const text = await response.text().catch(() => "");
        throw new ChatHttpError(errorFromResponse(response.status, text));
    }
    return response;
}

/** POST a JSON body and read the event stream it answers. */
export async function postStream(fetch, url, body, {signal, onMessage}) {
    const response = await openStream(fetch, url, {
        method: "POST",
        signal,
        headers: {"Content-Type": "application/json", "X-CSRF-Token": csrfToken()},
        body: JSON.stringify(body),
    });
    await readEventStream(response, onMessage);
}

/** The conversation's stored events after sequence number `after` (the response then ends). */
export async function readEventsAfter(fetch, conversationId, after, {signal, onMessage}) {
    const query = new URLSearchParams({after: String(after || 0)});
    const response = await openStream(
        fetch,
        `/ai_mcp/chat/${encodeURIComponent(conversationId)}/events?${query}`,
        {
            method: "GET",
            signal,
        }
    );
    await readEventStream(response, onMessage);
}
