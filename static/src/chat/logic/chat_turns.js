/** @odoo-module */
import {AppApprovals} from "../../common/app_approvals.js";
import {RESUME_URL, STREAM_URL} from "./chat_transport.js";
import {fromHistory, initialChatState, reduce, userMessage} from "./chat_state.js";
import {ChatStatus, ConversationState, ErrorCode} from "../../common/chat_status.js";
import {isStreamingStatus} from "../../common/chat_view.js";
import {lastUserText, retryPlan} from "./retry_plan.js";
import {newRequestKey} from "./start_retry.js";
import {TurnStream} from "./turn_stream.js";

/** Refusals of a resume that mean another tab of the user resumed the same conversation first. */
const RESUMED_ELSEWHERE = new Set([ErrorCode.CONVERSATION_BUSY, ErrorCode.NOT_WAITING]);

/**
 * What the user does with the conversations, on the store (chat_store.js): open one or start a new
 * one, send a message (typed, or an app's in the user's name), answer a pause, retry, stop. The
 * requests stream through turn_stream.js; app_approvals.js hears which approval questions an answer
 * is about, for the apps' calls that wait for it.
 */
export class ChatTurns {
    constructor(store) {
        this.store = store;
        this.appApprovals = new AppApprovals(store);
        this.stream = new TurnStream(store);
    }

    dispose() {
        this.stream.dispose();
    }

    /** The chat opens: the assistants the user may chat with and the user's conversations, each
     * read once, then the conversation `activeId` (from the URL) if any. A failure to read the
     * first two is the caller's: the chat cannot open without them. */
    async start(activeId = null) {
        const {store} = this;
        const {rpc} = store.services;
        const [assistants, conversations] = await Promise.all([
            rpc("/ai_mcp/assistants"),
            rpc("/ai_mcp/conversations"),
        ]);
        store.state.assistants = assistants || [];
        store.state.conversations = conversations || [];
        store.state.assistantId = store.state.assistants[0]?.id ?? null;
        if (activeId) {
            await this.openConversation(activeId, {push: false});
        }
    }

    async openConversation(id, {push = true} = {}) {
        const {store} = this;
        const {rpc, words} = store.services;
        if (store.state.busy) {
            return;
        }
        let data;
        try {
            data = await rpc(`/ai_mcp/conversation/${id}/history`);
        } catch {
            // Deleted, someone else's, or the network: the same answer for all (the route says 404).
            store.services.notify(words.notOpened(), "danger");
            return;
        }
        if (!store.alive) {
            return;
        }
        this.stream.forget();
        const conversation = data.conversation || {};
        let chat = fromHistory(data.messages || [], data.events || []);
        chat = {...chat, conversationId: conversation.id || id};
        store.state.assistantId = relationId(conversation.assistant_id) ?? store.state.assistantId;
        store.state.cloudServiceId = relationId(conversation.cloud_service_id);
        store.state.subject = conversation.subject || null;
        store.state.readOnly = Boolean(conversation.read_only);
        if (isStreamingStatus(chat.status) && conversation.state !== ConversationState.RUNNING) {
            // The stored turn never got its last event (the server stopped in the middle of it).
            chat = reduce(chat, {type: "error", code: "INTERRUPTED", message: words.interrupted()});
        }
        store.replace(chat);
        if (push) {
            store.services.router.pushState({active_id: chat.conversationId});
        }
        if (isStreamingStatus(chat.status)) {
            this.stream.follow(chat.conversationId);
        }
    }

    newChat() {
        const {store} = this;
        if (store.state.busy) {
            return;
        }
        this.stream.forget();
        store.state.cloudServiceId = null;
        store.state.subject = null;
        store.state.readOnly = false;
        if (!store.state.assistants.some((assistant) => assistant.id === store.state.assistantId)) {
            store.state.assistantId = store.state.assistants[0]?.id ?? null;
        }
        store.replace(initialChatState());
        store.services.router.pushState({active_id: undefined});
    }

    /** A new conversation about a record the user may read ("Ask AI" on its form): its first
     * message starts it with the record as its subject. False, and nothing changes, when the server
     * refuses the record (gone, or closed to her). */
    async newChatAbout(resModel, resId) {
        const {store} = this;
        let subject;
        try {
            subject = await store.services.rpc("/ai_mcp/subject", {
                res_model: resModel,
                res_id: resId,
            });
        } catch {
            return false;
        }
        if (!store.alive || !subject || subject.error) {
            return false;
        }
        this.newChat();
        store.state.subject = subject;
        return true;
    }

    /** `requestKey`: the name of a message sent again in place of one that may have been stored;
     * `app`: { callId, title } of the app that sends the message in the user's name. */
    async send(text, {requestKey = newRequestKey(), app = null} = {}) {
        const {store} = this;
        if (!text.trim() || !store.canSend) {
            return;
        }
        const before = store.chat;
        store.update(userMessage, text, app);
        let storedIn = null;
        const refused = (error) => {
            storedIn = error.code === ErrorCode.ALREADY_RECEIVED ? error.conversation_id : null;
            return Boolean(storedIn);
        };
        const body = {...store.conversationParams(), message: text, request_key: requestKey};
        const subject = store.state.subject;
        if (subject && !before.conversationId) {
            body.res_model = subject.res_model;
            body.res_id = subject.res_id;
        }
        if (app) {
            body.app_call_id = app.callId;
        }
        await this.stream.run("message", STREAM_URL, body, {before, refused});
        if (storedIn && store.alive) {
            await this.openConversation(storedIn, {push: storedIn !== before.conversationId});
        }
    }

    /** `elsewhere`: the answer did not come from this tab, so another tab may have resumed first. */
    async resume(answer, {elsewhere = false} = {}) {
        const {store} = this;
        const conversationId = store.chat.conversationId;
        if (!conversationId || store.state.busy) {
            return;
        }
        this.appApprovals.answering(store.chat, conversationId, answer.approvals);
        let taken = false;
        const refused = (error) => (taken = elsewhere && RESUMED_ELSEWHERE.has(error.code));
        await this.stream.run(
            "resume",
            RESUME_URL,
            {conversation_id: conversationId, ...answer},
            {refused}
        );
        if (taken && store.alive) {
            await this.openConversation(conversationId, {push: false}); // shows, or follows, that tab's answer
        }
    }

    stop() {
        return this.stream.stop();
    }

    retryPlan() {
        return retryPlan({
            lastRequest: this.stream.lastRequest,
            error: this.store.chat.error,
            lastUserText: lastUserText(this.store.chat.messages),
        });
    }

    get canRetry() {
        return !this.store.state.busy && Boolean(this.retryPlan());
    }

    async retry() {
        const {store} = this;
        const plan = store.chat.status === ChatStatus.ERROR ? this.retryPlan() : null;
        if (!plan || store.state.busy) {
            return;
        }
        if (plan.kind === "resume") {
            await this.stream.run("resume", RESUME_URL, plan.body);
            return;
        }
        const last = this.stream.lastRequest;
        if (plan.replaceLast && last?.before) {
            // That message never got an answer: send it again in its place, under the same name in
            // case it was stored after all.
            store.replace({...last.before, error: null, status: ChatStatus.IDLE});
            await this.send(plan.text, {requestKey: last.body.request_key});
            return;
        }
        await this.send(plan.text);
    }
}

/** A record id as /ai_mcp/conversations sends it: an id, or false for none. */
function relationId(value) {
    return typeof value === "number" && value ? value : null;
}
