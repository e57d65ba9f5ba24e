/**
 * The user's approval of the tool calls an MCP App makes (pure logic, no Odoo imports).
 *
 * An app may call one tool many times at once (a dashboard polling every two seconds): the calls
 * the server says need approval wait for one question per tool instead of opening a dialog each,
 * and the one answer goes to every call of that tool sent before it was given. A call sent after the
 * answer that still needs approval (the user allowed only once, or revoked a remembered approval)
 * asks again. While the model's own call of the tool waits for the user's answer, an app's call of
 * it waits for that answer instead of opening a dialog over it. A question becomes moot when the
 * user answers about the tool elsewhere (the model's call of it, or another app, allowed for the
 * conversation): it is released with RETRY, and its calls are sent again as they were, for the
 * server to run them under the remembered approval or ask again.
 */
import {ChatStatus} from "./chat_status.js";

/** What the user may answer an app's call: this call, every later one of the tool in the
 * conversation (the model's too), those of this app in the conversation, or no. */
export const APP_CHOICES = ["once", "app", "conversation", "deny"];

/** The env.bus event of a tool the user answered about in a conversation (the model's call of it,
 * or an app's allowed for the conversation or for that app): {conversationId, server, tool, app
 * (null: every app)}. The apps' questions about it are released. */
export const TOOL_ANSWERED = "AI_MCP:TOOL_ANSWERED";

/** What a released question answers: send the calls again without an answer. */
export const RETRY = "retry";

/** The `approved` of /ai_mcp/app/call_tool for a choice: false asks (or refuses) nothing. */
export function approvedParam(choice) {
    return APP_CHOICES.includes(choice) && choice !== "deny" ? choice : false;
}

/** One gate per app frame: questions by tool name. */
export class ApprovalGate {
    constructor() {
        this.sent = 0; // calls sent so far: the ticket of the last one
        this.questions = new Map(); // tool -> the promise of the question being asked
        this.answers = new Map(); // tool -> {choice, upTo}: the last answer and the calls it covers
    }

    /** Ends the open question about `tool`, if any, with RETRY; whether there was one. */
    release(tool) {
        const open = this.questions.get(tool);
        open?.release(RETRY);
        return Boolean(open);
    }

    /** The ticket of a call about to be sent: what tells which answers it may take. */
    ticket() {
        this.sent += 1;
        return this.sent;
    }

    /** The answer already given that covers the call `ticket` of `tool` (it was sent before the
     * answer), or null. */
    answered(tool, ticket) {
        const answer = this.answers.get(tool);
        return answer && ticket <= answer.upTo ? answer.choice : null;
    }

    /**
     * The user's choice for the call `ticket` of `tool`, which the server says needs approval: the
     * question already open for the tool, else the answer that covers the call, else `ask()`'s
     * (a promise of one of APP_CHOICES; anything else is "deny"); RETRY when the question is
     * released before the user answers it.
     */
    decide(tool, ticket, ask) {
        const open = this.questions.get(tool);
        if (open) {
            return open.promise;
        }
        const answered = this.answered(tool, ticket);
        if (answered) {
            return Promise.resolve(answered);
        }
        let release = null;
        const released = new Promise((resolve) => (release = resolve));
        const promise = Promise.race([Promise.resolve().then(ask), released]).then(
            (choice) => {
                this.questions.delete(tool);
                if (choice === RETRY) {
                    return RETRY;
                }
                const known = APP_CHOICES.includes(choice) ? choice : "deny";
                this.answers.set(tool, {choice: known, upTo: this.sent});
                return known;
            },
            (error) => {
                this.questions.delete(tool);
                throw error;
            }
        );
        this.questions.set(tool, {promise, release});
        return promise;
    }
}

/** The tools (`{server, tool}`) of the model's `calls` waiting for approval, each once: the apps'
 * calls waiting for the same answer are released once the turn goes on with it. */
export function pendingTools(calls) {
    const tools = new Map();
    for (const {server, tool} of calls ?? []) {
        tools.set(`${server}\u0000${tool}`, {server, tool});
    }
    return [...tools.values()];
}

/** Whether the model's call of `tool` of `server` waits for the user's approval in `chat` (the
 * reducer's state): an app's call of the tool waits for that answer. */
export function modelAsks(chat, server, tool) {
    return (
        chat?.status === ChatStatus.AWAITING_APPROVAL &&
        (chat.pendingApproval ?? []).some((call) => call.server === server && call.tool === tool)
    );
}
