/** @odoo-module */
import { Component, onMounted, onWillStart, onWillUnmount, useEffect, useRef, useState } from "@odoo/owl";
import { router } from "@web/core/browser/router";
import { _t } from "@web/core/l10n/translation";
import { rpc } from "@web/core/network/rpc";
import { registry } from "@web/core/registry";
import { useService } from "@web/core/utils/hooks";

import {
    cancelRequested,
    eventFromSse,
    fromHistory,
    initialState,
    reduce,
    stopped,
    toggleTool,
    userMessage,
} from "@ai_mcp/core/chat_state";
import { FINAL_TYPES, isStreamingStatus, lastUserText, retryPlan } from "@ai_mcp/core/chat_view";
import { ChatHeader } from "../chat_header/chat_header";
import { ChatNotices } from "../chat_notices/chat_notices";
import { ChatHttpError, postStream, readEventsAfter, RESUME_URL, STREAM_URL } from "../chat_transport";
import { Composer } from "../composer/composer";
import { PromptSource } from "../composer/prompt_source";
import { ResourceSource } from "../composer/resource_source";
import { ConversationList } from "../conversation_list/conversation_list";
import { MessageList } from "../message_list/message_list";
import { PauseDialogs } from "./pause_dialogs";
import { StatusLine } from "../status_line/status_line";

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

/**
 * The "AI Assistant" client action (tag ai_mcp.chat_action). The view state is chat_state.js's,
 * held in `state.chat` and replaced by `reduce` for every event; this component does the I/O:
 * JSON routes through rpc and streams through fetch; pause_dialogs.js asks the approval and
 * "continue?" questions.
 * One request streams at a time; `this.request` is it ({ kind, url, body, received, final,
 * stopped, controller, before }), `this.lastRequest` the last one, for "Retry".
 */
export class ChatAction extends Component {
    static template = "ai_mcp.ChatAction";
    static components = { ChatHeader, ChatNotices, Composer, ConversationList, MessageList, StatusLine };
    static props = ["*"];

    setup() {
        this.dialog = useService("dialog");
        this.notification = useService("notification");
        this.state = useState({
            chat: initialState(),
            assistants: [],
            conversations: [],
            assistantId: null,
            cloudServiceId: null,
            busy: false,
            loading: true,
            listOpen: false, // small screens: the conversation list shown over the chat
        });
        this.request = null;
        this.lastRequest = null;
        this.stoppedAt = 0;
        this.alive = true;
        this.mounted = false;
        this.pauses = new PauseDialogs(this.dialog, (answer) => this.resume(answer));
        this.promptSource = new PromptSource(() => this.conversationParams());
        this.prompts = useState(this.promptSource.state);
        this.resourceSource = new ResourceSource(() => this.conversationParams());
        this.followToken = 0;
        this.scrollRef = useRef("scroll");
        this.stickToBottom = true;

        onWillStart(() => this.load());
        onMounted(() => {
            this.mounted = true;
            this.afterChange();
        });
        useEffect(
            () => {
                const el = this.scrollRef.el;
                if (el && this.stickToBottom) {
                    el.scrollTop = el.scrollHeight;
                }
            },
            () => [this.state.chat]
        );
        onWillUnmount(() => {
            this.alive = false;
            this.followToken++;
            // Leaving the screen cancels the turn (DESIGN.md section 4: nothing runs in the background).
            this.request?.controller.abort();
            this.pauses.close();
        });
    }

    // -- view --------------------------------------------------------------------------------------

    get chat() {
        return this.state.chat;
    }

    get activeConversation() {
        const id = this.chat.conversationId;
        return id ? this.state.conversations.find((conversation) => conversation.id === id) || null : null;
    }

    get title() {
        const conversation = this.activeConversation;
        if (conversation?.name) {
            return conversation.name;
        }
        return this.chat.conversationId ? _t("Conversation") : _t("New conversation");
    }

    get streaming() {
        return this.state.busy || isStreamingStatus(this.chat.status);
    }

    get canSend() {
        return Boolean(this.state.assistantId) && !this.state.busy && ["idle", "error"].includes(this.chat.status);
    }

    get composerPlaceholder() {
        if (!this.state.assistants.length) {
            return _t("No assistant is available to you. Ask an administrator for access.");
        }
        if (this.chat.status === "awaiting_approval") {
            return _t("Allow or deny the pending tool calls first.");
        }
        if (this.chat.status === "awaiting_confirmation") {
            return _t("Tell the assistant whether to go on first.");
        }
        return "";
    }

    get showStatus() {
        return isStreamingStatus(this.chat.status) || (this.state.busy && !["error", "awaiting_approval", "awaiting_confirmation"].includes(this.chat.status));
    }

    get canRetry() {
        return !this.state.busy && Boolean(this.retryPlan());
    }

    onScroll() {
        const el = this.scrollRef.el;
        if (el) {
            this.stickToBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }
    }

    // -- loading -----------------------------------------------------------------------------------

    async load() {
        try {
            const [assistants, conversations] = await Promise.all([
                rpc("/ai_mcp/assistants"),
                rpc("/ai_mcp/conversations"),
            ]);
            this.state.assistants = assistants || [];
            this.state.conversations = conversations || [];
        } catch (error) {
            this.state.loading = false;
            throw error;
        }
        this.state.assistantId = this.state.assistants[0]?.id ?? null;
        const action = this.props.action || {};
        const activeId = parseInt(action.context?.active_id ?? action.params?.active_id, 10);
        if (activeId) {
            await this.openConversation(activeId, { push: false });
        }
        this.state.loading = false;
    }

    async refreshConversations() {
        try {
            const conversations = await rpc("/ai_mcp/conversations", {}, { silent: true });
            if (this.alive) {
                this.state.conversations = conversations || [];
            }
        } catch {
            // the list is refreshed again after the next turn
        }
    }

    async openConversation(id, { push = true } = {}) {
        if (this.state.busy) {
            return;
        }
        let data;
        try {
            data = await rpc(`/ai_mcp/conversation/${id}/history`);
        } catch {
            // Deleted, someone else's, or the network: the same answer for all (the route says 404).
            this.notification.add(_t("This conversation could not be opened."), { type: "danger" });
            return;
        }
        if (!this.alive) {
            return;
        }
        this.followToken++;
        this.pauses.close();
        this.lastRequest = null;
        const conversation = data.conversation || {};
        let chat = fromHistory(data.messages || [], data.events || []);
        chat = { ...chat, conversationId: conversation.id || id };
        this.state.assistantId = relationId(conversation.assistant_id) ?? this.state.assistantId;
        this.state.cloudServiceId = relationId(conversation.cloud_service_id);
        this.stickToBottom = true;
        if (isStreamingStatus(chat.status) && conversation.state !== "running") {
            // The stored turn never got its last event (the server stopped in the middle of it).
            chat = reduce(chat, {
                type: "error",
                code: "INTERRUPTED",
                message: _t("This answer was interrupted before it finished."),
            });
        }
        this.setChat(chat);
        if (push) {
            router.pushState({ active_id: chat.conversationId });
        }
        if (isStreamingStatus(chat.status)) {
            this.follow(chat.conversationId);
        }
    }

    newChat() {
        if (this.state.busy) {
            return;
        }
        this.followToken++;
        this.pauses.close();
        this.lastRequest = null;
        this.state.cloudServiceId = null;
        if (!this.state.assistants.some((assistant) => assistant.id === this.state.assistantId)) {
            this.state.assistantId = this.state.assistants[0]?.id ?? null;
        }
        this.setChat(initialState());
        router.pushState({ active_id: undefined });
    }

    toggleList() {
        this.state.listOpen = !this.state.listOpen;
    }

    selectConversation(id) {
        this.state.listOpen = false;
        this.openConversation(id);
    }

    startNewChat() {
        this.state.listOpen = false;
        this.newChat();
    }

    onAssistantChange(id) {
        this.state.assistantId = id;
        this.state.cloudServiceId = null;
    }

    onCloudServiceChange(id) {
        this.state.cloudServiceId = id;
    }

    // -- the reducer -------------------------------------------------------------------------------

    setChat(chat) {
        this.state.chat = chat;
        this.afterChange();
    }

    apply(event) {
        this.setChat(reduce(this.state.chat, event));
    }

    fail(error) {
        this.apply({ type: "error", code: error.code, message: error.message || this.errorMessage(error) });
    }

    errorMessage(error) {
        if (error.code === "NETWORK_ERROR") {
            return _t("The connection to the server was lost.");
        }
        if (error.code === "HTTP_ERROR" && error.status === 200) {
            return _t("The server did not answer with a stream. Your session may have expired: reload the page.");
        }
        if (error.code === "HTTP_ERROR") {
            return _t("The server answered with an error (HTTP %(status)s).", { status: error.status });
        }
        return _t("The request was refused (%(code)s).", { code: error.code });
    }

    /** A resource link in a call's result, read from that call's server: {contents} or {error}. */
    openResource(callId, uri) {
        return this.resourceSource.openLink(callId, uri);
    }

    toggleTool(key) {
        this.state.chat = toggleTool(this.state.chat, key);
    }

    /** Answer the question a running call's server asked; resolves to the server's check of it. */
    async answerTool(key, action, content) {
        const chat = this.state.chat;
        const block = chat.messages.at(-1)?.parts?.find((part) => part.key === key);
        if (!block?.question || !chat.conversationId) {
            return { answered: false, errors: [] };
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
    async cancelTool(key) {
        const chat = this.state.chat;
        const block = chat.messages.at(-1)?.parts?.find((part) => part.key === key);
        if (!block || block.status !== "running" || !chat.conversationId) {
            return;
        }
        this.setChat(cancelRequested(chat, key));
        try {
            await rpc("/ai_mcp/chat/cancel_call", { conversation_id: chat.conversationId, call_id: block.id });
        } catch (error) {
            this.notification.add(_t("The call could not be stopped: %(error)s", { error: error.message }), { type: "danger" });
        }
    }

    /** Opens the approval or "continue?" dialog once for each pause the reducer reports. */
    afterChange() {
        if (this.mounted && this.alive) {
            this.pauses.show(this.state.chat);
        }
    }

    review() {
        this.pauses.show(this.state.chat, { again: true });
    }

    // -- requests ----------------------------------------------------------------------------------

    /** {assistant_id, conversation_id | cloud_service_id}: what the server needs to know which
     * servers this conversation may use. */
    conversationParams() {
        const params = { assistant_id: this.state.assistantId };
        if (this.chat.conversationId) {
            params.conversation_id = this.chat.conversationId;
        } else if (this.state.cloudServiceId) {
            params.cloud_service_id = this.state.cloudServiceId;
        }
        return params;
    }

    async send(text) {
        if (!text.trim() || !this.canSend) {
            return;
        }
        const before = this.state.chat;
        this.stickToBottom = true;
        this.setChat(userMessage(before, text));
        await this.stream("message", STREAM_URL, { ...this.conversationParams(), message: text }, before);
    }

    /** A prompt picked in the composer: its text is the user's message. Resolves to an error text. */
    async sendPrompt(prompt, values) {
        if (!this.canSend) {
            return _t("Wait for the answer to finish, then send the prompt.");
        }
        let reply;
        try {
            reply = await this.promptSource.text(prompt, values);
        } catch {
            return _t("The prompt could not be got from its server; try again.");
        }
        if (reply.error) {
            return reply.error.message;
        }
        await this.send(reply.text);
        return null;
    }

    async resume(answer) {
        const conversationId = this.state.chat.conversationId;
        if (!conversationId || this.state.busy) {
            return;
        }
        this.stickToBottom = true;
        await this.stream("resume", RESUME_URL, { conversation_id: conversationId, ...answer });
    }

    stop() {
        const request = this.request;
        if (!request) {
            return;
        }
        request.stopped = true;
        request.controller.abort();
        this.request = null;
        this.state.busy = false;
        this.stoppedAt = Date.now();
        this.setChat(stopped(this.state.chat));
    }

    retryPlan() {
        return retryPlan({
            lastRequest: this.lastRequest,
            error: this.state.chat.error,
            lastUserText: lastUserText(this.state.chat.messages),
        });
    }

    async retry() {
        const plan = this.state.chat.status === "error" ? this.retryPlan() : null;
        if (!plan || this.state.busy) {
            return;
        }
        if (plan.kind === "resume") {
            await this.stream("resume", RESUME_URL, plan.body);
            return;
        }
        if (plan.replaceLast && this.lastRequest?.before) {
            // That message never reached the server: send it again in its place.
            this.setChat({ ...this.lastRequest.before, error: null, status: "idle" });
        }
        await this.send(plan.text);
    }

    async stream(kind, url, body, before = null) {
        const request = {
            kind,
            url,
            body,
            before,
            received: 0,
            final: false,
            stopped: false,
            controller: new AbortController(),
        };
        this.followToken++;
        this.request = this.lastRequest = request;
        this.state.busy = true;
        try {
            await this.post(request);
            if (!request.final && !request.stopped) {
                await this.catchUp(request); // the stream ended before the turn did
            }
        } catch (error) {
            if (request.stopped || !this.alive) {
                return;
            }
            if (error instanceof ChatHttpError) {
                this.fail(error.error);
            } else if (error?.name === "AbortError") {
                this.setChat(stopped(this.state.chat));
            } else {
                await this.catchUp(request); // the network broke: read what the server stored
            }
        } finally {
            if (this.request === request) {
                this.request = null;
                this.state.busy = false;
            }
            if (this.alive) {
                this.refreshConversations();
            }
        }
    }

    async post(request) {
        const onMessage = (message) => this.receive(request, message);
        for (let attempt = 0; ; attempt++) {
            try {
                await postStream(request.url, request.body, { signal: request.controller.signal, onMessage });
                return;
            } catch (error) {
                const busy = error instanceof ChatHttpError && error.error.code === "CONVERSATION_BUSY";
                const justStopped = Date.now() - this.stoppedAt < BUSY_RETRY_WINDOW;
                if (!busy || !justStopped || request.stopped || !this.alive) {
                    throw error;
                }
                await sleep(BUSY_RETRY_DELAY);
            }
        }
    }

    receive(request, message) {
        if (request.stopped || request !== this.request || !this.alive) {
            return;
        }
        const event = eventFromSse(message);
        request.received++;
        const wasNew = !this.state.chat.conversationId;
        this.apply(event);
        if (event.type === "start" && wasNew && this.state.chat.conversationId) {
            router.pushState({ active_id: this.state.chat.conversationId });
            this.refreshConversations();
        }
        if (FINAL_TYPES.has(event.type)) {
            request.final = true;
        }
    }

    /** The stream broke or ended early: read the conversation's stored events after the last one seen. */
    async catchUp(request) {
        const onMessage = (message) => this.receive(request, message);
        for (const delay of CATCH_UP_DELAYS) {
            const conversationId = this.state.chat.conversationId;
            if (!conversationId || request.stopped || !this.alive) {
                break;
            }
            await sleep(delay);
            if (request.stopped || !this.alive) {
                return;
            }
            try {
                await readEventsAfter(conversationId, this.state.chat.lastEventId, {
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
        if (!request.stopped && this.alive && request === this.request) {
            this.fail({
                code: "NETWORK_ERROR",
                message: this.state.chat.conversationId
                    ? _t("The connection to the server was lost and the answer could not be read again.")
                    : _t("The connection to the server was lost before the answer started."),
            });
        }
    }

    /** A conversation opened while its turn runs elsewhere: poll its stored events until the turn pauses or ends. */
    async follow(conversationId) {
        const token = ++this.followToken;
        const started = Date.now();
        const current = () => token === this.followToken && this.alive && this.state.chat.conversationId === conversationId;
        const onMessage = (message) => current() && this.apply(eventFromSse(message));
        while (current() && isStreamingStatus(this.state.chat.status) && Date.now() - started < FOLLOW_LIMIT) {
            await sleep(FOLLOW_INTERVAL);
            if (!current()) {
                return;
            }
            try {
                await readEventsAfter(conversationId, this.state.chat.lastEventId, { onMessage });
            } catch {
                // try again at the next tick
            }
        }
        if (current()) {
            this.refreshConversations();
        }
    }
}

/** A many2one as a JSON route may send it: an id, [id, name], or {id}. */
function relationId(value) {
    if (Array.isArray(value)) {
        return value[0] ?? null;
    }
    if (value && typeof value === "object") {
        return value.id ?? null;
    }
    return typeof value === "number" && value ? value : null;
}

registry.category("actions").add("ai_mcp.chat_action", ChatAction);
