/** @odoo-module */
import {_t} from "@web/core/l10n/translation";
import {rpc} from "@web/core/network/rpc";

import {cancelRequested} from "@ai_mcp/logic/chat_state";
import {CallStatus} from "@ai_mcp/logic/chat_status";

/**
 * What the user asks about a call that is running: stop it, or answer the question its server
 * asked. Both are JSON requests any worker may take; the worker running the turn reads them from
 * the database. `host`: { chat(), setChat(chat), notify(message) }.
 */
export class CallRequests {
    constructor(host) {
        this.host = host;
    }

    /** The tool block `key` of the last message, with the conversation it belongs to. */
    block(key) {
        const chat = this.host.chat();
        const block = chat.messages.at(-1)?.parts?.find((part) => part.key === key);
        return {chat, block};
    }

    /** Answer the question a running call's server asked; resolves to the server's check of it. */
    async answer(key, action, content) {
        const {chat, block} = this.block(key);
        if (!block?.question || !chat.conversationId) {
            return {answered: false, errors: []};
        }
        return rpc("/ai_mcp/chat/elicitation", {
            conversation_id: chat.conversationId,
            call_id: block.id,
            elicitation: block.question.elicitation,
            action,
            content,
        });
    }

    /** Stop one running call: the worker running the turn, whichever it is, reads the request. */
    async cancel(key) {
        const {chat, block} = this.block(key);
        if (!block || block.status !== CallStatus.RUNNING || !chat.conversationId) {
            return;
        }
        this.host.setChat(cancelRequested(chat, key));
        try {
            await rpc("/ai_mcp/chat/cancel_call", {
                conversation_id: chat.conversationId,
                call_id: block.id,
            });
        } catch (error) {
            this.host.notify(
                _t("The call could not be stopped: %(error)s", {error: error.message})
            );
        }
    }
}
