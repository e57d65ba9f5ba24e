/** @odoo-module */
import {eventFromSse} from "./chat_state.js";
import {readEventsAfter} from "./chat_transport.js";

/** The bus notification the conversation's user gets when a server's task adds an event to it
 * between turns (its result, its question): { conversation_id }. */
export const TASK_EVENTS = "ai_mcp.task_events";

/**
 * What a server's task adds to a conversation after the call that left it running (its question,
 * its result) reaches the open chat at once: the conversation shown, when no request streams
 * there, reads its stored events after the last it has. Another conversation reads them when it
 * is opened; a turn streaming there meets them as it reads its own.
 */
export class TaskEvents {
    constructor(store) {
        this.store = store;
        this.busService = store.services.busService;
        this.onAdded = (payload) => this.read(payload?.conversation_id);
        this.busService.subscribe(TASK_EVENTS, this.onAdded);
    }

    dispose() {
        this.busService.unsubscribe(TASK_EVENTS, this.onAdded);
    }

    async read(conversationId) {
        const store = this.store;
        const shown = () =>
            Boolean(conversationId) &&
            store.alive &&
            store.chat.conversationId === conversationId &&
            !store.state.busy;
        if (!shown()) {
            return;
        }
        const onMessage = (message) => shown() && store.dispatch(eventFromSse(message));
        try {
            await readEventsAfter(store.services.fetch, conversationId, store.chat.lastEventId, {
                onMessage,
            });
        } catch {
            // read with the conversation when it is opened again
        }
    }
}
