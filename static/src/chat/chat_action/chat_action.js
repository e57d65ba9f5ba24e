/** @odoo-module */
import {
    Component,
    onMounted,
    onWillStart,
    onWillUnmount,
    reactive,
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
import {useSetupAction} from "@web/search/action_hook";

import {toggleTool} from "@ai_mcp/chat/logic/chat_state";
import {StickToBottom} from "@ai_mcp/chat/logic/chat_scroll";
import {CallRequests} from "@ai_mcp/chat/logic/call_requests";
import {ChatStatus} from "@ai_mcp/common/chat_status";
import {canSend, ChatStore, systemClock} from "@ai_mcp/chat/logic/chat_store";
import {ChatTurns} from "@ai_mcp/chat/logic/chat_turns";
import {isStreamingStatus} from "@ai_mcp/common/chat_view";
import {SignInPause} from "@ai_mcp/chat/logic/sign_in_pause";
import {TaskEvents} from "@ai_mcp/chat/logic/task_events";
import {UsageTotals} from "@ai_mcp/chat/logic/usage_totals";
import {Composer, PromptSource, ResourceSource} from "@ai_mcp/composer";
import {ChatHeader} from "../chat_header/chat_header";
import {ChatNotices} from "../chat_notices/chat_notices";
import {ConversationList} from "../conversation_list/conversation_list";
import {MessageList} from "../message_list/message_list";
import {chatWords} from "./chat_words";
import {PauseDialogs} from "./pause_dialogs";
import {SignInCard} from "../sign_in_card/sign_in_card";
import {StatusLine} from "../status_line/status_line";

/**
 * The "AI Assistant" client action (tag ai_mcp.chat_action). It makes the chat's store
 * (static/src/chat/logic/chat_store.js: the state, its reducer and the services, Odoo's injected) and
 * hands it to the helpers, which do the work without calling back: chat_turns.js opens
 * conversations and sends, resumes, retries and stops turns (streamed by turn_stream.js);
 * call_requests.js stops a running call or answers its server's question; sign_in_pause.js and
 * pause_dialogs.js ask what a paused turn waits for. The apps of tool calls (AppFrame) take the
 * store and the turns, to send a message in the user's name. This component renders the store's
 * state, through its own `useState`.
 *
 * Opened from a form's "Ask AI" (context `ai_mcp_res_model`, `ai_mcp_res_id`), a new conversation
 * is about that record. A link to a record opens its form over the chat, in the breadcrumbs as
 * Discuss opens the records it names, and coming back shows the same conversation; while an answer
 * streams, the form opens in a new tab instead, so that leaving does not stop the answer. The
 * message list and the tool results reach that through the env (`aiMcpOpenRecord`): opening a form
 * is the action service's, which the store's pure helpers do not know.
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
        this.notification = useService("notification");
        this.store = new ChatStore({
            rpc,
            fetch: (url, init) => fetch(url, init),
            clock: systemClock,
            notify: (message, type) => this.notification.add(message, {type}),
            router,
            envBus: this.env.bus,
            busService: useService("bus_service"),
            openWindow: (url, {referrer = true} = {}) =>
                window.open(url, "_blank", referrer ? "noopener" : "noopener,noreferrer"),
            reactive,
            words: chatWords,
        });
        this.state = useState(this.store.state);
        this.ui = useState({
            loading: true,
            listOpen: false, // small screens: the conversation list shown over the chat
        });
        this.turns = new ChatTurns(this.store);
        this.taskEvents = new TaskEvents(this.store);
        this.calls = new CallRequests(this.store, this.taskEvents);
        this.signIn = new SignInPause(this.store, this.turns);
        this.promptSource = new PromptSource(this.store);
        this.prompts = useState(this.promptSource.state);
        this.resourceSource = new ResourceSource(this.store);
        this.usageTotals = new UsageTotals(this.store);
        this.usage = useState(this.usageTotals.state);
        this.pauses = new PauseDialogs(useService("dialog"), this.turns);
        this.action = useService("action");
        useSubEnv({aiMcpOpenRecord: (record) => this.openRecord(record)});
        useSetupAction({
            getLocalState: () => ({
                conversationId: this.chat.conversationId || null,
                subject: this.chat.conversationId ? null : this.state.subject,
            }),
        });
        this.mounted = false;
        // Opens the approval or "continue?" dialog once for each pause the reducer reports.
        this.store.subscribe((chat) => this.mounted && this.pauses.show(chat));
        this.scrollRef = useRef("scroll");
        this.threadRef = useRef("thread");
        this.stick = null;
        // an app's frame grows or shrinks without the chat's state changing: the thread's size
        // says so, as the view's says the window or the composer changed
        this.resized = new ResizeObserver(() => this.stick?.changed());

        onWillStart(() => this.load());
        onMounted(() => {
            this.mounted = true;
            this.stick = new StickToBottom(this.scrollRef.el);
            this.resized.observe(this.scrollRef.el);
            this.resized.observe(this.threadRef.el);
            this.pauses.show(this.store.chat);
        });
        useEffect(
            () => this.stick?.changed(),
            () => [this.state.chat]
        );
        onWillUnmount(() => {
            this.store.close();
            this.resized.disconnect();
            this.turns.dispose();
            this.pauses.close();
            this.signIn.dispose();
            this.taskEvents.dispose();
            this.usageTotals.dispose();
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
        return canSend(this.state);
    }

    get composerPlaceholder() {
        if (this.state.readOnly) {
            return _t("This conversation is another user's: it is read only to you.");
        }
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
        return !this.state.busy && this.turns.canRetry;
    }

    onScroll() {
        this.stick?.scrolled();
    }

    // -- loading -----------------------------------------------------------------------------------

    async load() {
        const action = this.props.action || {};
        const back = this.props.state || {}; // what the chat showed before a record was opened over it
        const context = action.context || {};
        const activeId = parseInt(
            back.conversationId ?? context.active_id ?? action.params?.active_id,
            10
        );
        const subject = back.subject || {
            res_model: context.ai_mcp_res_model,
            res_id: context.ai_mcp_res_id,
        };
        try {
            await this.turns.start(activeId || null);
            if (
                !activeId &&
                subject.res_model &&
                !(await this.turns.newChatAbout(subject.res_model, subject.res_id))
            ) {
                this.notification.add(
                    _t("This record cannot be opened; the chat is not about it."),
                    {
                        type: "warning",
                    }
                );
            }
        } catch (error) {
            this.ui.loading = false;
            throw error;
        }
        this.usageTotals.opened();
        this.ui.loading = false;
    }

    // -- what the user does ---------------------------------------------------------------------------

    toggleList() {
        this.ui.listOpen = !this.ui.listOpen;
    }

    selectConversation(id) {
        this.ui.listOpen = false;
        this.turns.openConversation(id);
    }

    startNewChat() {
        this.ui.listOpen = false;
        this.turns.newChat();
    }

    onAssistantChange(id) {
        this.state.assistantId = id;
        this.state.cloudServiceId = null;
    }

    onCloudServiceChange(id) {
        this.state.cloudServiceId = id;
    }

    /** A link to a record ({model, id, href}): its form, in the breadcrumbs over the chat. */
    openRecord({model, id, href}) {
        if (this.streaming) {
            window.open(href, "_blank", "noopener");
            return;
        }
        this.action.doAction({
            type: "ir.actions.act_window",
            res_model: model,
            res_id: id,
            views: [[false, "form"]],
        });
    }

    /** A resource link in a call's result, read from that call's server: {contents} or {error}. */
    openResource(callId, uri) {
        return this.resourceSource.openLink(callId, uri);
    }

    toggleTool(key) {
        this.store.update(toggleTool, key);
    }

    review() {
        this.pauses.show(this.store.chat, {again: true});
    }

    send(text) {
        return this.turns.send(text);
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
        await this.turns.send(reply.text);
        return null;
    }

    stop() {
        this.turns.stop();
    }

    retry() {
        return this.turns.retry();
    }
}

registry.category("actions").add("ai_mcp.chat_action", ChatAction);
