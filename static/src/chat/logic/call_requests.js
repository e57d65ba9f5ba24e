/** @odoo-module */
import {cancelRequested, reduce} from "./chat_state.js";
import {CallStatus} from "../../common/chat_status.js";

/**
 * What the user asks about a call that is running: stop it, or answer the question its server
 * asked or its request for a completion of the assistant's model. Each is a JSON request any worker
 * may take; the worker running the turn reads it from the database.
 */
export class CallRequests {
    /** `taskEvents`: the chat's TaskEvents, which reads what a stopped task added to the conversation. */
    constructor(store, taskEvents = null) {
        this.store = store;
        this.taskEvents = taskEvents;
    }

    /** The tool block `key` (unique in the conversation; a task's question may be on an earlier
     * answer's block), with the conversation it belongs to. */
    block(key) {
        const chat = this.store.chat;
        const block = chat.messages
            .flatMap((message) => message.parts ?? [])
            .find((part) => part.key === key);
        return {chat, block};
    }

    /**
     * Answer the question a running call's server asked, or (`kind` "sampling") its request for a
     * completion of the assistant's model; resolves to the server's check of the answer.
     */
    async answer(key, action, content, kind = "question") {
        const {chat, block} = this.block(key);
        if (kind === "sampling") {
            return this.answerSampling(chat, block, action, content);
        }
        if (!block?.question || !chat.conversationId) {
            return {answered: false, errors: []};
        }
        const {elicitation, task} = block.question;
        const checked = await this.store.services.rpc("/ai_mcp/chat/elicitation", {
            conversation_id: chat.conversationId,
            call_id: block.id,
            elicitation,
            action,
            content,
        });
        if (task && checked?.answered) {
            // no turn streams the question's end: the answer went to the server, the card closes
            this.store.update(reduce, {
                type: "elicitation_done",
                id: block.id,
                elicitation,
                action,
            });
        }
        return checked;
    }

    /** Approve (`content`: the request as edited), decline or cancel a running call's sampling request. */
    async answerSampling(chat, block, action, content) {
        if (!block?.sampling || !chat.conversationId) {
            return {answered: false, errors: []};
        }
        return this.store.services.rpc("/ai_mcp/chat/sampling", {
            conversation_id: chat.conversationId,
            call_id: block.id,
            sampling: block.sampling.sampling,
            action,
            content,
        });
    }

    /** Stop one running call (the worker running the turn, whichever it is, reads the request), or
     * the task a call left running (the server is asked at once, its end comes as a task_result). */
    async cancel(key) {
        const {chat, block} = this.block(key);
        const stoppable = block && (block.status === CallStatus.RUNNING || block.taskRunning);
        if (!stoppable || block.cancelling || !chat.conversationId) {
            return;
        }
        const {rpc, notify, words} = this.store.services;
        this.store.update(cancelRequested, key);
        try {
            await rpc("/ai_mcp/chat/cancel_call", {
                conversation_id: chat.conversationId,
                call_id: block.id,
            });
        } catch (error) {
            notify(words.notStopped(error.message), "danger");
            return;
        }
        if (block.taskRunning) {
            // the task's end was added to the conversation as the server answered: read it now
            // rather than wait for the bus
            await this.taskEvents?.read(chat.conversationId);
        }
    }
}
