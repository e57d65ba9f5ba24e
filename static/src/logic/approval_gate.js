/**
 * The user's approval of the tool calls an MCP App makes (pure logic, no Odoo imports).
 *
 * An app may call one tool many times at once (a dashboard polling every two seconds): the calls
 * the server says need approval wait for one question per tool instead of opening a dialog each,
 * and the one answer goes to every call of that tool sent before it was given. A call sent after the
 * answer that still needs approval (the user allowed only once, or revoked a remembered approval)
 * asks again.
 */

/** What the user may answer an app's call: this call, every later one of the tool in the
 * conversation (the model's too), those of this app in the conversation, or no. */
export const APP_CHOICES = ["once", "app", "conversation", "deny"];

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
     * (a promise of one of APP_CHOICES; anything else is "deny").
     */
    decide(tool, ticket, ask) {
        const open = this.questions.get(tool);
        if (open) {
            return open;
        }
        const answered = this.answered(tool, ticket);
        if (answered) {
            return Promise.resolve(answered);
        }
        const question = Promise.resolve()
            .then(ask)
            .then(
                (choice) => {
                    const known = APP_CHOICES.includes(choice) ? choice : "deny";
                    this.questions.delete(tool);
                    this.answers.set(tool, {choice: known, upTo: this.sent});
                    return known;
                },
                (error) => {
                    this.questions.delete(tool);
                    throw error;
                }
            );
        this.questions.set(tool, question);
        return question;
    }
}
