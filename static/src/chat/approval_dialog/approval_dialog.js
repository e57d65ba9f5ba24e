/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {Dialog} from "@web/core/dialog/dialog";
import {_t} from "@web/core/l10n/translation";

import {allDecided, approvalsFor, prettyJson} from "@ai_mcp/common/chat_view";

/**
 * The calls the assistant wants to make with tools that require approval (approval_required's
 * `calls`), each with its arguments, to allow once, allow for the rest of the conversation, or
 * deny, one by one. Closing the dialog without sending decides nothing: the turn keeps waiting and
 * the dialog can be opened again.
 */
export class ApprovalDialog extends Component {
    static template = "ai_mcp.ApprovalDialog";
    static components = {Dialog};
    static props = {calls: Array, onSubmit: Function, close: Function};

    setup() {
        this.decisions = useState({});
        this.title = _t("Allow these tool calls?");
    }

    get ready() {
        return allDecided(this.props.calls, this.decisions);
    }

    argumentsJson(call) {
        return prettyJson(call.arguments ?? {});
    }

    /** `answer`: true (once), "conversation" or false (chat_view.js approvalsFor). */
    decide(call, answer) {
        this.decisions[call.id] = answer;
    }

    decideAll(allowed) {
        for (const call of this.props.calls) {
            this.decisions[call.id] = allowed;
        }
    }

    submit() {
        if (!this.ready) {
            return;
        }
        const approvals = approvalsFor(this.props.calls, this.decisions);
        this.props.close();
        this.props.onSubmit(approvals);
    }
}
