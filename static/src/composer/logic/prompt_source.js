/** @odoo-module */
/**
 * The prompts of the servers a conversation may use (/ai_mcp/prompts), fetched each time the `/`
 * menu opens, so a server's changed list shows at once; and the text a picked prompt renders to
 * (/ai_mcp/prompts/get), which the chat then sends as the user's message; the server's suggestions
 * for an argument as the user types it (/ai_mcp/complete). The conversation is the
 * store's (chat_store.js); `state` is made with its `reactive`, for the composer's menu.
 */
export class PromptSource {
    constructor(store) {
        this.store = store;
        const reactive = store.services.reactive || ((object) => object);
        this.state = reactive({prompts: [], loading: false});
        this.pending = null;
    }

    async search() {
        const params = this.store.conversationParams();
        const key = JSON.stringify(params);
        if (!params.assistant_id || this.pending === key) {
            return;
        }
        this.pending = key;
        this.state.loading = true;
        let prompts = [];
        try {
            const answer = await this.store.services.rpc("/ai_mcp/prompts", params, {
                silent: true,
            });
            prompts = answer.prompts || [];
        } catch {
            // no menu rather than an error dialog: the composer says no prompt matches
        }
        if (this.pending === key) {
            this.state.prompts = prompts;
            this.state.loading = false;
            this.pending = null;
        }
    }

    /** {values, has_more}: the server's suggestions for `argument` of `prompt` as typed so far
     * (`value`), the other arguments filled in being `context`. */
    complete(prompt, argument, value, context) {
        return this.store.services.rpc(
            "/ai_mcp/complete",
            {
                ...this.store.conversationParams(),
                server_id: prompt.server_id,
                prompt: prompt.name,
                argument,
                value,
                arguments: context,
            },
            {silent: true}
        );
    }

    /** {text} or {error: {code, message}} */
    async text(prompt, values) {
        return this.store.services.rpc(
            "/ai_mcp/prompts/get",
            {
                ...this.store.conversationParams(),
                server_id: prompt.server_id,
                name: prompt.name,
                arguments: values,
            },
            {silent: true}
        );
    }
}
