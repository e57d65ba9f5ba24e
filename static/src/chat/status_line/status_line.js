/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {ChatStatus} from "@ai_mcp/common/chat_status";
import {START_RETRY_LIMIT} from "@ai_mcp/chat/logic/start_retry";

/** What the assistant is doing while a turn streams: thinking, running tools, and "Round N/M";
 * before that, a message's start being sent again because the server was busy (`retry`: which try). */
export class StatusLine extends Component {
    static template = "ai_mcp.StatusLine";
    static props = {
        status: String,
        round: Number,
        maxRounds: Number,
        retry: {type: [Number, {value: null}], optional: true},
    };

    get label() {
        if (this.props.retry) {
            return _t("The server is busy: trying again (%(n)s of %(max)s)…", {
                n: this.props.retry,
                max: START_RETRY_LIMIT,
            });
        }
        return this.props.status === ChatStatus.RUNNING_TOOLS
            ? _t("Running tools")
            : _t("Thinking");
    }

    get roundLabel() {
        return this.props.round > 0
            ? _t("Round %(n)s/%(max)s", {n: this.props.round, max: this.props.maxRounds})
            : "";
    }
}
