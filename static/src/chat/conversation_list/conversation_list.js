/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

const STATE_ICONS = {
    running: "fa fa-circle-o-notch fa-spin",
    awaiting_approval: "fa fa-hand-paper-o text-warning",
    awaiting_confirmation: "fa fa-question-circle text-warning",
    awaiting_auth: "fa fa-key text-warning",
};

/** The user's conversations, newest first, and "New chat". */
export class ConversationList extends Component {
    static template = "ai_mcp.ConversationList";
    static props = {
        conversations: Array,
        activeId: {type: [Number, {value: null}], optional: true},
        disabled: Boolean,
        open: {type: Boolean, optional: true},
        onSelect: Function,
        onNew: Function,
    };

    name(conversation) {
        return conversation.name || _t("Untitled conversation");
    }

    stateIcon(conversation) {
        return STATE_ICONS[conversation.state] || "";
    }

    stateLabel(conversation) {
        const labels = {
            running: _t("Answering"),
            awaiting_approval: _t("Waiting for your approval"),
            awaiting_confirmation: _t("Waiting for your answer"),
            awaiting_auth: _t("Waiting for your sign-in"),
        };
        return labels[conversation.state] || "";
    }

    get disabledTitle() {
        return this.props.disabled ? _t("Stop the answer first") : "";
    }
}
