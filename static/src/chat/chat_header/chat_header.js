/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {clickedRecord} from "@ai_mcp/common/chat_view";
import {RememberedApprovals} from "../remembered_approvals/remembered_approvals";
import {UsageSummary} from "../usage_summary/usage_summary";

/**
 * The conversation's title with the assistant picker and, for users who have cloud services, the
 * cloud-service picker (whose servers add tools to the conversation). Both are fixed once the
 * conversation has started. A started conversation lists the tools the user allowed in it. The
 * tokens the conversation and the user's month used are shown small (`usage`: usage_totals.js).
 * A conversation about a record (`subject`) links to that record's form.
 */
export class ChatHeader extends Component {
    static template = "ai_mcp.ChatHeader";
    static components = {RememberedApprovals, UsageSummary};
    static props = {
        conversationId: {type: [Number, {value: null}], optional: true},
        title: String,
        assistants: Array,
        assistantId: {type: [Number, {value: null}], optional: true},
        cloudServiceId: {type: [Number, {value: null}], optional: true},
        subject: {type: [Object, {value: null}], optional: true},
        locked: Boolean,
        usage: {type: Object, optional: true},
        onToggleList: Function,
        onAssistantChange: Function,
        onCloudServiceChange: Function,
    };

    get assistant() {
        return (
            this.props.assistants.find((assistant) => assistant.id === this.props.assistantId) ||
            null
        );
    }

    get cloudServices() {
        return this.assistant?.cloud_services || [];
    }

    get lockedTitle() {
        return this.props.locked ? _t("Start a new chat to change this") : "";
    }

    get subjectLabel() {
        const {model_name: model, display_name: name} = this.props.subject;
        return model ? _t("%(model)s: %(name)s", {model, name}) : name;
    }

    openSubject(ev) {
        const record = clickedRecord(ev);
        if (record && this.env.aiMcpOpenRecord) {
            ev.preventDefault();
            this.env.aiMcpOpenRecord(record);
        }
    }

    onAssistantChange(ev) {
        this.props.onAssistantChange(parseInt(ev.target.value, 10) || null);
    }

    onCloudServiceChange(ev) {
        this.props.onCloudServiceChange(parseInt(ev.target.value, 10) || null);
    }
}
