/** @odoo-module */
import {initialChatState, reduce} from "./chat_state.js";
import {ChatStatus} from "../../common/chat_status.js";

/** The clock of a browser; node tests hand the store one they move themselves. */
export const systemClock = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The user may send a message: an assistant is chosen and nothing streams or waits. A function
 * of the state, so that a component reading it through its own `useState` re-renders on it. */
export function canSend(state) {
    return (
        Boolean(state.assistantId) &&
        !state.busy &&
        !state.readOnly &&
        [ChatStatus.IDLE, ChatStatus.ERROR].includes(state.chat.status)
    );
}

/**
 * The chat widget's shared state and the services its helpers use, handed to each helper as Odoo's
 * mail hands its `store`: a helper reads `store.state` and changes the conversation through
 * `dispatch` (an event of the turn, folded by chat_state.js's reducer) or `update` (one of
 * chat_state.js's pure transitions, `(chat, ...args) => chat`), rather than calling back into the
 * action. No Odoo import: the chat action injects Odoo's services and OWL's `reactive`, so that the
 * components re-render; node tests inject their own (static/tests/chat_store.test.mjs).
 *
 * `state`:
 *   chat            the reducer state of the open conversation (chat_state.js)
 *   assistants      the assistants the user may chat with; `assistantId` the chosen one
 *   cloudServiceId  the cloud service a new conversation is for (null: none)
 *   subject         the record the conversation is about (null: none), as /ai_mcp/subject gives it:
 *                   { res_model, res_id, model_name, display_name, url }
 *   readOnly        the open conversation is another user's (an AI manager reads it): nothing is sent
 *   conversations   the user's conversations, for the list
 *   busy            a request streams
 *   startRetry      a message's start is sent again: which try (null: it is not)
 *
 * `services`:
 *   rpc(route, params, options)  Odoo's JSON routes
 *   fetch(url, init)             the streamed routes (chat_transport.js)
 *   clock                        { now(), sleep(ms) }
 *   notify(message, type)        a notification the user sees
 *   router                       { pushState(state) }: the URL names the open conversation
 *   envBus                       the env's bus (an EventTarget with `trigger(name, payload)`), on
 *                                which the apps' requests hear of tools answered elsewhere
 *   busService                   { subscribe(name, fn), unsubscribe(name, fn) }: Odoo's bus from the server
 *   openWindow(url, {referrer})  a page opened in a new tab (`referrer: false`: not told where from)
 *   reactive(object)             state the components re-render on (OWL's `reactive`)
 *   words                        the sentences the helpers show, in the user's language
 *                                (static/src/chat/chat_action/chat_words.js)
 */
export class ChatStore {
    constructor(services) {
        this.services = services;
        const reactive = services.reactive || ((object) => object);
        this.state = reactive({
            chat: initialChatState(),
            assistants: [],
            assistantId: null,
            cloudServiceId: null,
            subject: null,
            readOnly: false,
            conversations: [],
            busy: false,
            startRetry: null,
        });
        this.alive = true; // false once the action left the screen: late answers change nothing
        this.listeners = new Set();
    }

    get chat() {
        return this.state.chat;
    }

    /** An event of the turn (chat_state.js `reduce`). */
    dispatch(event) {
        this.replace(reduce(this.state.chat, event), event);
    }

    /** One of chat_state.js's transitions: `update(stopped)`, `update(toggleTool, key)`. */
    update(transition, ...args) {
        this.replace(transition(this.state.chat, ...args));
    }

    /** `event`: the event of the turn that made `chat`, if one did. */
    replace(chat, event = null) {
        this.state.chat = chat;
        for (const listener of this.listeners) {
            listener(this.state.chat, event);
        }
    }

    /** `listener(chat, event)` after every change; returns what unsubscribes it. */
    subscribe(listener) {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }

    /** The turn ends with `error` ({ code, message?, status? }): worded here when the server did not. */
    fail(error) {
        this.dispatch({
            type: "error",
            code: error.code,
            message: error.message || this.services.words.error(error),
        });
    }

    close() {
        this.alive = false;
        this.listeners.clear();
    }

    get canSend() {
        return canSend(this.state);
    }

    /** {assistant_id, conversation_id | cloud_service_id}: what the server needs to know which
     * servers this conversation may use. */
    conversationParams() {
        const params = {assistant_id: this.state.assistantId};
        if (this.state.chat.conversationId) {
            params.conversation_id = this.state.chat.conversationId;
        } else if (this.state.cloudServiceId) {
            params.cloud_service_id = this.state.cloudServiceId;
        }
        return params;
    }

    async refreshConversations() {
        try {
            const conversations = await this.services.rpc(
                "/ai_mcp/conversations",
                {},
                {silent: true}
            );
            if (this.alive) {
                this.state.conversations = conversations || [];
            }
        } catch {
            // the list is refreshed again after the next turn
        }
    }
}
