/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {ChatStatus} from "@ai_mcp/common/chat_status";

/**
 * The notices under the answer: warnings (discreet: the turn went on), the error that ended the
 * turn with a Retry button, and a reminder when the assistant waits for an approval or for
 * "continue?" (its dialog can be closed and opened again from here).
 */
export class ChatNotices extends Component {
    static template = "ai_mcp.ChatNotices";
    static props = {
        status: String,
        error: {type: [Object, {value: null}], optional: true},
        warnings: Array,
        pendingCount: Number,
        confirm: {type: [Object, {value: null}], optional: true},
        canRetry: Boolean,
        onRetry: Function,
        onReview: Function,
    };

    get pauseText() {
        if (this.props.status === ChatStatus.AWAITING_APPROVAL) {
            return _t("The assistant waits for your approval of %(count)s tool call(s).", {
                count: this.props.pendingCount,
            });
        }
        if (this.props.status === ChatStatus.AWAITING_CONFIRMATION) {
            return _t(
                "The assistant has used %(used)s of %(max)s rounds and asks whether to go on.",
                {
                    used: this.props.confirm?.roundsUsed ?? "?",
                    max: this.props.confirm?.maxRounds ?? "?",
                }
            );
        }
        return "";
    }

    get errorText() {
        return this.props.error?.message || _t("The answer stopped with an error.");
    }
}
