/**
 * The user's approval of the tool calls an MCP App makes (pure logic, no Odoo imports).
 *
 * An app may call one tool many times at once (a dashboard polling every two seconds): the calls
 * the server says need approval wait for one question per tool instead of opening a dialog each,
 * and the one answer goes to every call of that tool sent before it was given ("Allow once" to the
 * identical ones only: same arguments, as the user was shown). A call sent after the answer that
 * still needs approval (the user allowed only once, or revoked a remembered approval)
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

    /** The answer already given that covers the call `ticket` of `tool` with the arguments `key`
     * (argumentsKey), or null: it was sent before the answer and, when the answer is "once", it is
     * the very call the user was shown. */
    answered(tool, ticket, key = "") {
        const answer = this.answers.get(tool);
        const covers =
            answer && ticket <= answer.upTo && (answer.choice !== "once" || answer.key === key);
        return covers ? answer.choice : null;
    }

    /**
     * The user's choice for the call `ticket` of `tool` with the arguments `key` (argumentsKey),
     * which the server says needs approval: the answer that covers the call, else the question
     * already open for the tool (its answer, when it covers the call; else the call asks after
     * it), else `ask()`'s (a promise of one of APP_CHOICES; anything else is "deny"); RETRY when
     * the question is released before the user answers it.
     */
    decide(tool, ticket, ask, key = "") {
        const answered = this.answered(tool, ticket, key);
        if (answered) {
            return Promise.resolve(answered);
        }
        const open = this.questions.get(tool);
        if (open) {
            return open.promise.then((choice) =>
                choice === RETRY ? RETRY : this.decide(tool, ticket, ask, key)
            );
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
                this.answers.set(tool, {choice: known, upTo: this.sent, key});
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

/** The arguments of a call as a key that names the same arguments alike, whatever the order of
 * their properties: what tells identical calls, which one "Allow once" covers. */
export function argumentsKey(args) {
    const sorted = (value) => {
        if (Array.isArray(value)) {
            return value.map(sorted);
        }
        if (value && typeof value === "object") {
            return Object.fromEntries(
                Object.keys(value)
                    .sort()
                    .map((key) => [key, sorted(value[key])])
            );
        }
        return value;
    };
    return JSON.stringify(sorted(args ?? {}));
}
