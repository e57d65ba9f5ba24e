/** @odoo-module */
import {AppMessages} from "./app_messages.js";
import {checkDownload, checkModelContext, checkOpenLink, messageText} from "./app_host.js";
import {
    ApprovalGate,
    approvedParam,
    argumentsKey,
    modelAsks,
    RETRY,
    TOOL_ANSWERED,
} from "../../common/approval_gate.js";
import {ErrorCode} from "../../common/chat_status.js";
import {prettyJson} from "../../common/chat_view.js";

const SHOWN_ARGUMENTS = 2000;

/** An app's request the host refuses: the app gets the message as the request's error. */
export class AppRequestError extends Error {}

/**
 * What the app of one call asks of the host, each request answered for the bridge
 * (app_frame/app_session.js), on the chat's store (chat/logic/chat_store.js) like the chat's other
 * helpers: the server's tools and resources and the model context through the Odoo server's app
 * routes (the store's `rpc`; the routes check every call against the conversation and the app's
 * server), links, downloads and messages after the checks of app_host.js, with the user's consent
 * where the request leaves the chat. Messages go as the user's through the chat's turns
 * (app_messages.js).
 *
 * The calls of one tool waiting for the user's approval share one question
 * (common/approval_gate.js); while the model's call of the tool waits for the user's answer (the
 * store's chat says so), they wait for that answer instead (`state.waitingFor`). The question
 * closes by itself when the user answers about the tool elsewhere: the store's env bus says so
 * (TOOL_ANSWERED, from another app or from common/app_approvals.js), and says so in turn when the
 * user allows a tool here for the conversation or this app.
 *
 * `call`: { conversationId, callId, server, app } of the app's call.
 * `ask`: what the user sees, Odoo's side (app_frame/app_ask.js): the app's `title()`, the
 * questions `approval({tool, arguments})` -> { choice: promise of an APP_CHOICES, close() },
 * `openLink(link)` and `download(files)` -> promise of true when the user agrees, `save(file)`,
 * `leaveFullscreen()` (a message the user should see is sent), and the words `refusal(error)`,
 * `declined(tool)`.
 */
export class AppRequests {
    constructor(store, turns, call, ask) {
        this.store = store;
        this.call = call;
        this.ask = ask;
        this.messages = new AppMessages(store, turns);
        const reactive = store.services.reactive || ((object) => object);
        this.state = reactive({waitingFor: []}); // titles of the tools whose calls wait for the model's question
        this.approvals = new ApprovalGate();
        this.dialogs = new Map(); // tool -> closes its open question
        this.behindModel = new Map(); // tool -> its title, while its calls wait for the model's question
        this.answered = ({detail}) => this.heard(detail);
        store.services.envBus.addEventListener(TOOL_ANSWERED, this.answered);
    }

    dispose() {
        this.store.services.envBus.removeEventListener(TOOL_ANSWERED, this.answered);
    }

    /** The user answered about a tool elsewhere (the model's call, another app): a question about
     * it is moot. */
    heard({conversationId, server, tool, app}) {
        const call = this.call;
        if (conversationId === call.conversationId && server === call.server) {
            if (!app || app === call.app) {
                this.release(tool);
            }
        }
    }

    /** The user allowed `tool` elsewhere: the calls waiting for its question are sent again. */
    release(tool) {
        if (this.approvals.release(tool)) {
            this.dialogs.get(tool)?.();
            this.dialogs.delete(tool);
        }
        if (this.behindModel.delete(tool)) {
            this.state.waitingFor = [...this.behindModel.values()];
        }
    }

    /** What the app is and what its call is: the server's /ai_mcp/app/open answer (`writing`: the
     * server, tool and app of a call the model still writes, see AppFrame.writing). */
    open(writing = null) {
        return this.post("/ai_mcp/app/open", writing ? {writing} : {});
    }

    async callTool({name, arguments: args}) {
        const body = {name, arguments: args ?? {}, approved: false};
        const key = argumentsKey(body.arguments);
        let ticket = this.approvals.ticket();
        let answer = await this.post("/ai_mcp/app/call_tool", body);
        while (answer?.error?.code === ErrorCode.APPROVAL_REQUIRED) {
            const tool = answer.error.tool || {name};
            const shown = answer.error.arguments ?? args ?? {};
            // the model's call of the tool is being asked about: its answer is released to this
            // call (common/app_approvals.js), which then runs or asks
            const choice = await this.approvals.decide(
                name,
                ticket,
                () =>
                    modelAsks(this.store.chat, this.call.server, name)
                        ? this.waitBehindModel(name, tool)
                        : this.askApproval(name, tool, shown),
                key
            );
            if (choice === RETRY) {
                ticket = this.approvals.ticket();
                answer = await this.post("/ai_mcp/app/call_tool", body);
                continue;
            }
            const approved = approvedParam(choice);
            if (!approved) {
                const text = this.ask.declined(tool.name);
                return {content: [{type: "text", text}], isError: true};
            }
            answer = await this.post("/ai_mcp/app/call_tool", {...body, approved});
            if (approved !== "once" && !answer?.error) {
                this.allowed(name, approved);
            }
            break;
        }
        return this.answer(answer);
    }

    /** The user allowed `tool` for the conversation or this app, and the server remembers it:
     * other apps waiting for it may go on. */
    allowed(tool, scope) {
        const {conversationId, server, app} = this.call;
        this.store.services.envBus.trigger(TOOL_ANSWERED, {
            conversationId,
            server,
            tool,
            app: scope === "app" ? app : null,
        });
    }

    /** A question only a release ends: the model's question about the tool is answered. */
    waitBehindModel(name, tool) {
        this.behindModel.set(name, tool.title || tool.name);
        this.state.waitingFor = [...this.behindModel.values()];
        return new Promise((resolve) => this.dialogs.set(name, () => resolve("deny")));
    }

    /** The user's choice (common/approval_gate.js APP_CHOICES) about the app calling `tool`;
     * closing the question denies. */
    askApproval(name, tool, args) {
        const {choice, close} = this.ask.approval({
            tool,
            arguments: prettyJson(args).slice(0, SHOWN_ARGUMENTS),
        });
        this.dialogs.set(name, close);
        return choice.finally(() => this.dialogs.delete(name));
    }

    async readResource({uri}) {
        return this.answer(await this.post("/ai_mcp/app/read_resource", {uri}));
    }

    async updateModelContext(params) {
        const {content, structuredContent} = this.checked(checkModelContext(params));
        return this.answer(
            await this.post("/ai_mcp/app/model_context", {content, structuredContent})
        );
    }

    /** A ui/message: the chat sends it as the user's, naming the app. */
    async message(params) {
        const {text} = this.checked(messageText(params));
        this.ask.leaveFullscreen(); // the user sees the message and its answer
        const refused = this.messages.send({
            callId: this.call.callId,
            title: this.ask.title(),
            text,
        });
        return refused ? {isError: true, message: refused} : {};
    }

    async openLink({url}) {
        const link = this.checked(checkOpenLink(url));
        if (!(await this.ask.openLink(link))) {
            return {isError: true};
        }
        this.store.services.openWindow(link.url, {referrer: false});
        return {};
    }

    async downloadFile({contents}) {
        const {files} = this.checked(checkDownload(contents));
        if (!(await this.ask.download(files))) {
            return {isError: true};
        }
        files.forEach((file) => this.ask.save(file));
        return {};
    }

    // -- helpers -----------------------------------------------------------------------------------

    post(route, body) {
        const params = {conversation_id: this.call.conversationId, call_id: this.call.callId};
        return this.store.services.rpc(route, {...params, ...body}, {silent: true});
    }

    /** What app_host.js made of a request, or its refusal as the request's error. */
    checked(checked) {
        if (checked.error) {
            throw new AppRequestError(this.ask.refusal(checked.error));
        }
        return checked;
    }

    /** The server's answer, or its refusal ({ error: { code, message } }) as the request's error. */
    answer(answer) {
        if (answer?.error) {
            throw new AppRequestError(answer.error.message || answer.error.code);
        }
        return answer ?? {};
    }
}
