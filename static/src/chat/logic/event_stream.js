/** @odoo-module */
/**
 * Reads a fetch() Response whose body is text/event-stream and hands each event to `onMessage` as
 * SseParser yields it ({ event, data, id }), in order, as soon as its blank line arrives.
 * No Odoo import: tested by node (static/tests/event_stream.test.mjs) with real web streams.
 *
 * Resolves when the body ends. Rejects when reading fails (the network broke, or the request's
 * AbortSignal fired: error.name === "AbortError"), when a payload is not JSON, or when onMessage
 * throws; the body is cancelled first so the connection is released.
 * An event cut off by the end of the body is dropped, as EventSource does.
 */

import {SseParser} from "./sse_parser.js";

export async function readEventStream(response, onMessage) {
    if (!response.body) {
        throw new Error("The response has no body to read.");
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
        for (;;) {
            const {value, done} = await reader.read();
            if (done) {
                break;
            }
            for (const message of parser.feed(decoder.decode(value, {stream: true}))) {
                onMessage(message);
            }
        }
        for (const message of parser.feed(decoder.decode())) {
            onMessage(message);
        }
    } catch (error) {
        reader.cancel().catch(() => {});
        throw error;
    } finally {
        reader.releaseLock();
    }
}
