/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

/** What the assistant is doing while a turn streams: thinking, running tools, and "Round N/M". */
export class StatusLine extends Component {
    static template = "ai_mcp.StatusLine";
    static props = {status: String, round: Number, maxRounds: Number};

    get label() {
        return this.props.status === "running_tools" ? _t("Running tools") : _t("Thinking");
    }

    get roundLabel() {
        return this.props.round > 0
            ? _t("Round %(n)s/%(max)s", {n: this.props.round, max: this.props.maxRounds})
            : "";
    }
}
