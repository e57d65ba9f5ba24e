/** @odoo-module */
import {pendingTools, TOOL_ANSWERED} from "./approval_gate.js";

/**
 * The apps' calls that wait for the model's approval question about the same tool
 * (approval_gate.js): once the user's answer is stored (the resumed turn starts), they are released
 * through the store's env bus, to run under a remembered approval or to ask.
 */
export class AppApprovals {
    constructor(store) {
        this.bus = store.services.envBus;
        this.answered = null; // {conversationId, tools}: what the answer being sent is about
        store.subscribe((chat, event) => event && this.applied(event));
    }

    /** The user answers `approvals` about the calls `chat` waits for, in `conversationId`. */
    answering(chat, conversationId, approvals) {
        const tools = approvals ? pendingTools(chat.pendingApproval) : [];
        this.answered = tools.length ? {conversationId, tools} : null;
    }

    /** An event of the turn: its start after the answer means the answer is stored. */
    applied(event) {
        if (event.type !== "start" || !this.answered) {
            return;
        }
        const {conversationId, tools} = this.answered;
        this.answered = null;
        for (const {server, tool} of tools) {
            this.bus.trigger(TOOL_ANSWERED, {conversationId, server, tool, app: null});
        }
    }
}
