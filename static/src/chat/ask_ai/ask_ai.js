/** @odoo-module */
import {onWillStart, useState} from "@odoo/owl";
import {Chatter} from "@mail/chatter/web_portal/chatter";
import {user} from "@web/core/user";
import {useService} from "@web/core/utils/hooks";
import {patch} from "@web/core/utils/patch";

/**
 * "Ask AI" beside the chatter of every form (mail's Chatter, the same component and template in
 * Odoo 18 and 19): for users of the AI user group, on a saved record, it opens the AI Assistant
 * with a new conversation about that record (chat_action.js reads the context; the server checks
 * that the user may read the record before the conversation is about it).
 */
patch(Chatter.prototype, {
    setup() {
        super.setup(...arguments);
        this.aiMcpAction = useService("action");
        this.aiMcp = useState({mayAsk: false});
        onWillStart(async () => {
            this.aiMcp.mayAsk = await user.hasGroup("ai_mcp.group_ai_user");
        });
    },

    get aiMcpCanAsk() {
        return this.aiMcp.mayAsk && Boolean(this.props.threadId) && Boolean(this.props.threadModel);
    },

    aiMcpAsk() {
        this.aiMcpAction.doAction("ai_mcp.action_ai_chat", {
            additionalContext: {
                ai_mcp_res_model: this.props.threadModel,
                ai_mcp_res_id: this.props.threadId,
            },
        });
    },
});
