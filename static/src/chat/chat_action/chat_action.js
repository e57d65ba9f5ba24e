/** @odoo-module */
import {
    Component,
    onMounted,
    onWillStart,
    onWillUnmount,
    useEffect,
    useRef,
    useState,
    useSubEnv,
} from "@odoo/owl";
import {router} from "@web/core/browser/router";
import {_t} from "@web/core/l10n/translation";
import {rpc} from "@web/core/network/rpc";
import {registry} from "@web/core/registry";
import {useService} from "@web/core/utils/hooks";

import {
    fromHistory,
    initialChatState,
    reduce,
    toggleTool,
    userMessage,
} from "@ai_mcp/logic/chat_state";
import {StickToBottom} from "@ai_mcp/logic/chat_scroll";
import {modelAsks} from "@ai_mcp/logic/approval_gate";
import {ChatStatus, ConversationState, ErrorCode} from "@ai_mcp/logic/chat_status";
import {isStreamingStatus} from "@ai_mcp/logic/chat_view";
import {lastUserText, retryPlan} from "@ai_mcp/logic/retry_plan";
import {newRequestKey} from "@ai_mcp/logic/start_retry";
import {ChatHeader} from "../chat_header/chat_header";
import {ChatNotices} from "../chat_notices/chat_notices";
import {RESUME_URL, STREAM_URL} from "../chat_transport";
import {Composer} from "../composer/composer";
import {PromptSource} from "../composer/prompt_source";
import {ResourceSource} from "../composer/resource_source";
import {ConversationList} from "../conversation_list/conversation_list";
import {MessageList} from "../message_list/message_list";
import {AppApprovals} from "./app_approvals";
import {AppMessages} from "./app_messages";
import {CallRequests} from "./call_requests";
import {PauseDialogs} from "./pause_dialogs";
import {SignInCard} from "../sign_in_card/sign_in_card";
import {SignInPause} from "./sign_in_pause";
import {StatusLine} from "../status_line/status_line";
import {TurnStream} from "./turn_stream";

/** Refusals of a resume that mean another tab of the user resumed the same conversation first. */
const RESUMED_ELSEWHERE = new Set([ErrorCode.CONVERSATION_BUSY, ErrorCode.NOT_WAITING]);

/**
 * The "AI Assistant" client action (tag ai_mcp.chat_action). The view state is chat_state.js's,
 * held in `state.chat` and replaced by `reduce` for every event; this component does the I/O:
 * JSON routes through rpc, streams through turn_stream.js, a running call's stop and its server's
 * question through call_requests.js; pause_dialogs.js asks the approval and "continue?" questions;
 * sign-in cards ask for the OAuth sign-ins a turn waits for.
 */
export class ChatAction extends Component {
    static template = "ai_mcp.ChatAction";
    static components = {
        ChatHeader,
        ChatNotices,
        Composer,
        ConversationList,
        MessageList,
        SignInCard,
        StatusLine,
    };
    static props = ["*"];

    setup() {
        this.dialog = useService("dialog");
        this.notification = useService("notification");
        this.state = useState({
            chat: initialChatState(),
            assistants: [],
            conversations: [],
            assistantId: null,
            cloudServiceId: null,
            busy: false,
            startRetry: null, // the message's start is being sent again: which try
            loading: true,
            listOpen: false, // small screens: the conversation list shown over the chat
        });
        this.alive = true;
        this.appApprovals = new AppApprovals(this.env.bus);
        // an app asks about a tool only when the model's call of it is not waiting for an answer
        useSubEnv({aiMcpModelAsks: (server, tool) => modelAsks(this.state.chat, server, tool)});
        this.mounted = false;
        this.pauses = new PauseDialogs(this.dialog, (answer) => this.resume(answer));
        this.promptSource = new PromptSource(() => this.conversationParams());
        this.prompts = useState(this.promptSource.state);
        this.resourceSource = new ResourceSource(() => this.conversationParams());
        this.appMessages = new AppMessages(this);
        this.turns = new TurnStream({
            chat: () => this.state.chat,
            apply: (event) => this.apply(event),
            setChat: (chat) => this.setChat(chat),
            fail: (error) => this.fail(error),
            setBusy: (busy) => (this.state.busy = busy),
            retrying: (attempt) => (this.state.startRetry = attempt),
            alive: () => this.alive,
            started: () => {
                router.pushState({active_id: this.state.chat.conversationId});
                this.refreshConversations();
            },
            settled: () => this.refreshConversations(),
        });
        this.calls = new CallRequests({
            chat: () => this.state.chat,
            setChat: (chat) => this.setChat(chat),
            notify: (message) => this.notification.add(message, {type: "danger"}),
        });
        this.scrollRef = useRef("scroll");
        this.threadRef = useRef("thread");
        this.stick = null;
        // an app's frame grows or shrinks without the chat's state changing: the thread's size
        // says so, as the view's says the window or the composer changed
        this.resized = new ResizeObserver(() => this.stick?.changed());
        this.signIn = new SignInPause(useService("bus_service"), {
            chat: () => this.state.chat,
            setChat: (chat) => this.setChat(chat),
            resume: (answer, options) => this.resume(answer, options),
        });

        onWillStart(() => this.load());
        onMounted(() => {
            this.mounted = true;
            this.stick = new StickToBottom(this.scrollRef.el);
            this.resized.observe(this.scrollRef.el);
            this.resized.observe(this.threadRef.el);
            this.afterChange();
        });
        useEffect(
            () => this.stick?.changed(),
            () => [this.state.chat]
        );
        onWillUnmount(() => {
            this.alive = false;
            this.resized.disconnect();
            this.turns.dispose();
            this.pauses.close();
            this.signIn.dispose();
        });
    }

    // -- view --------------------------------------------------------------------------------------

    get chat() {
        return this.state.chat;
    }

    get activeConversation() {
        const id = this.chat.conversationId;
        return id
            ? this.state.conversations.find((conversation) => conversation.id === id) || null
            : null;
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
        return (
            Boolean(this.state.assistantId) &&
            !this.state.busy &&
            [ChatStatus.IDLE, ChatStatus.ERROR].includes(this.chat.status)
        );
    }

    get composerPlaceholder() {
        if (!this.state.assistants.length) {
            return _t("No assistant is available to you. Ask an administrator for access.");
        }
        if (this.chat.status === ChatStatus.AWAITING_APPROVAL) {
            return _t("Allow or deny the pending tool calls first.");
        }
        if (this.chat.status === ChatStatus.AWAITING_CONFIRMATION) {
            return _t("Tell the assistant whether to go on first.");
        }
        if (this.chat.status === ChatStatus.AWAITING_AUTH) {
            return _t("Sign in, or continue without the server, first.");
        }
        return "";
    }

    get showStatus() {
        return (
            isStreamingStatus(this.chat.status) ||
            (this.state.busy &&
                ![
                    ChatStatus.ERROR,
                    ChatStatus.AWAITING_APPROVAL,
                    ChatStatus.AWAITING_CONFIRMATION,
                    ChatStatus.AWAITING_AUTH,
                ].includes(this.chat.status))
        );
    }

    get paused() {
        return [ChatStatus.AWAITING_APPROVAL, ChatStatus.AWAITING_AUTH].includes(this.chat.status);
    }

    get canRetry() {
        return !this.state.busy && Boolean(this.retryPlan());
    }

    onScroll() {
        this.stick?.scrolled();
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
            await this.openConversation(activeId, {push: false});
        }
        this.state.loading = false;
    }

    async refreshConversations() {
        try {
            const conversations = await rpc("/ai_mcp/conversations", {}, {silent: true});
            if (this.alive) {
                this.state.conversations = conversations || [];
            }
        } catch {
            // the list is refreshed again after the next turn
        }
    }

    async openConversation(id, {push = true} = {}) {
        if (this.state.busy) {
            return;
        }
        let data;
        try {
            data = await rpc(`/ai_mcp/conversation/${id}/history`);
        } catch {
            // Deleted, someone else's, or the network: the same answer for all (the route says 404).
            this.notification.add(_t("This conversation could not be opened."), {type: "danger"});
            return;
        }
        if (!this.alive) {
            return;
        }
        this.turns.forget();
        this.pauses.close();
        const conversation = data.conversation || {};
        let chat = fromHistory(data.messages || [], data.events || []);
        chat = {...chat, conversationId: conversation.id || id};
        this.state.assistantId = relationId(conversation.assistant_id) ?? this.state.assistantId;
        this.state.cloudServiceId = relationId(conversation.cloud_service_id);
        this.stickToBottom = true;
        if (isStreamingStatus(chat.status) && conversation.state !== ConversationState.RUNNING) {
            // The stored turn never got its last event (the server stopped in the middle of it).
            chat = reduce(chat, {
                type: "error",
                code: "INTERRUPTED",
                message: _t("This answer was interrupted before it finished."),
            });
        }
        this.setChat(chat);
        if (push) {
            router.pushState({active_id: chat.conversationId});
        }
        if (isStreamingStatus(chat.status)) {
            this.turns.follow(chat.conversationId);
        }
    }

    newChat() {
        if (this.state.busy) {
            return;
        }
        this.turns.forget();
        this.pauses.close();
        this.state.cloudServiceId = null;
        if (!this.state.assistants.some((assistant) => assistant.id === this.state.assistantId)) {
            this.state.assistantId = this.state.assistants[0]?.id ?? null;
        }
        this.setChat(initialChatState());
        router.pushState({active_id: undefined});
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
        this.appApprovals.applied(event);
    }

    fail(error) {
        this.apply({
            type: "error",
            code: error.code,
            message: error.message || this.errorMessage(error),
        });
    }

    errorMessage(error) {
        if (error.code === "NETWORK_ERROR") {
            return _t("The connection to the server was lost.");
        }
        if (error.code === "HTTP_ERROR" && error.status === 200) {
            return _t(
                "The server did not answer with a stream. Your session may have expired: reload the page."
            );
        }
        if (error.code === "HTTP_ERROR") {
            return _t("The server answered with an error (HTTP %(status)s).", {
                status: error.status,
            });
        }
        return _t("The request was refused (%(code)s).", {code: error.code});
    }

    /** A resource link in a call's result, read from that call's server: {contents} or {error}. */
    openResource(callId, uri) {
        return this.resourceSource.openLink(callId, uri);
    }

    toggleTool(key) {
        this.state.chat = toggleTool(this.state.chat, key);
    }

    /** Opens the approval or "continue?" dialog once for each pause the reducer reports. */
    afterChange() {
        if (this.mounted && this.alive) {
            this.pauses.show(this.state.chat);
        }
    }

    review() {
        this.pauses.show(this.state.chat, {again: true});
    }

    // -- requests ----------------------------------------------------------------------------------

    /** {assistant_id, conversation_id | cloud_service_id}: what the server needs to know which
     * servers this conversation may use. */
    conversationParams() {
        const params = {assistant_id: this.state.assistantId};
        if (this.chat.conversationId) {
            params.conversation_id = this.chat.conversationId;
        } else if (this.state.cloudServiceId) {
            params.cloud_service_id = this.state.cloudServiceId;
        }
        return params;
    }

    /** `requestKey`: the name of a message sent again in place of one that may have been stored;
     * `app`: { callId, title } of the app that sends the message in the user's name. */
    async send(text, {requestKey = newRequestKey(), app = null} = {}) {
        if (!text.trim() || !this.canSend) {
            return;
        }
        const before = this.state.chat;
        this.stickToBottom = true;
        this.setChat(userMessage(before, text, app));
        let storedIn = null;
        const refused = (error) => {
            storedIn = error.code === ErrorCode.ALREADY_RECEIVED ? error.conversation_id : null;
            return Boolean(storedIn);
        };
        const body = {...this.conversationParams(), message: text, request_key: requestKey};
        if (app) {
            body.app_call_id = app.callId;
        }
        await this.turns.run("message", STREAM_URL, body, {before, refused});
        if (storedIn && this.alive) {
            await this.openConversation(storedIn, {push: storedIn !== before.conversationId});
        }
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

    /** `elsewhere`: the answer did not come from this tab, so another tab may have resumed first. */
    async resume(answer, {elsewhere = false} = {}) {
        const conversationId = this.state.chat.conversationId;
        if (!conversationId || this.state.busy) {
            return;
        }
        this.stickToBottom = true;
        this.appApprovals.answering(this.state.chat, conversationId, answer.approvals);
        let taken = false;
        const refused = (error) => (taken = elsewhere && RESUMED_ELSEWHERE.has(error.code));
        await this.turns.run(
            "resume",
            RESUME_URL,
            {conversation_id: conversationId, ...answer},
            {refused}
        );
        if (taken && this.alive) {
            await this.openConversation(conversationId, {push: false}); // shows, or follows, that tab's answer
        }
    }

    stop() {
        this.turns.stop();
    }

    retryPlan() {
        return retryPlan({
            lastRequest: this.turns.lastRequest,
            error: this.state.chat.error,
            lastUserText: lastUserText(this.state.chat.messages),
        });
    }

    async retry() {
        const plan = this.state.chat.status === ChatStatus.ERROR ? this.retryPlan() : null;
        if (!plan || this.state.busy) {
            return;
        }
        if (plan.kind === "resume") {
            await this.turns.run("resume", RESUME_URL, plan.body);
            return;
        }
        const last = this.turns.lastRequest;
        if (plan.replaceLast && last?.before) {
            // That message never got an answer: send it again in its place, under the same name in
            // case it was stored after all.
            this.setChat({...last.before, error: null, status: ChatStatus.IDLE});
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

registry.category("actions").add("ai_mcp.chat_action", ChatAction);
