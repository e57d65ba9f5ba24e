/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {rpc} from "@web/core/network/rpc";

/**
 * The tools the user allowed for the rest of this conversation (or for one of its apps), read
 * when the list is opened, each with a button that revokes it: the tool asks again from its next
 * call. They end with the conversation.
 */
export class RememberedApprovals extends Component {
    static template = "ai_mcp.RememberedApprovals";
    static props = {conversationId: Number};

    setup() {
        this.state = useState({open: false, loading: false, approvals: []});
    }

    async toggle() {
        this.state.open = !this.state.open;
        if (this.state.open) {
            this.state.loading = true;
            this.show(await rpc("/ai_mcp/chat/approvals", this.params()));
        }
    }

    async revoke(approval) {
        this.show(
            await rpc("/ai_mcp/chat/approvals/revoke", {...this.params(), approval_id: approval.id})
        );
    }

    show(approvals) {
        this.state.approvals = approvals;
        this.state.loading = false;
    }

    params() {
        return {conversation_id: this.props.conversationId};
    }
}
