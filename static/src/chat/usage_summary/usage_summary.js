/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";
import {user} from "@web/core/user";

import {usageLine} from "@ai_mcp/chat/logic/usage_totals";

const words = {tokens: (count) => _t("%(count)s tokens", {count})};

/**
 * The tokens (and cost, when the models have prices) of the open conversation, and the user's
 * month in the current company: small, in the header, read again when a turn ends.
 */
export class UsageSummary extends Component {
    static template = "ai_mcp.UsageSummary";
    static props = {
        conversation: {type: [Object, {value: null}], optional: true},
        month: {type: [Object, {value: null}], optional: true},
    };

    get conversationLine() {
        return usageLine(this.props.conversation, user.lang, words);
    }

    get monthLine() {
        const line = usageLine(this.props.month, user.lang, words);
        return line ? _t("This month: %(usage)s", {usage: line}) : "";
    }
}
