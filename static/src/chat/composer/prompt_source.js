/** @odoo-module */
import {reactive} from "@odoo/owl";
import {rpc} from "@web/core/network/rpc";

/**
 * The prompts of the servers a conversation may use (/ai_mcp/prompts), fetched each time the `/`
 * menu opens, so a server's changed list shows at once; and the text a picked prompt renders to
 * (/ai_mcp/prompts/get), which the chat then sends as the user's message.
 * `params()` gives the conversation's {assistant_id, conversation_id | cloud_service_id}.
 */
export class PromptSource {
    constructor(params) {
        this.params = params;
        this.state = reactive({prompts: [], loading: false});
        this.pending = null;
    }

    async search() {
        const params = this.params();
        const key = JSON.stringify(params);
        if (!params.assistant_id || this.pending === key) {
            return;
        }
        this.pending = key;
        this.state.loading = true;
        let prompts = [];
        try {
            prompts = (await rpc("/ai_mcp/prompts", params, {silent: true})).prompts || [];
        } catch {
            // no menu rather than an error dialog: the composer says no prompt matches
        }
        if (this.pending === key) {
            this.state.prompts = prompts;
            this.state.loading = false;
            this.pending = null;
        }
    }

    /** {text} or {error: {code, message}} */
    async text(prompt, values) {
        return rpc(
            "/ai_mcp/prompts/get",
            {...this.params(), server_id: prompt.server_id, name: prompt.name, arguments: values},
            {silent: true}
        );
    }
}
