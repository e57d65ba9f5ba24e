/** @odoo-module */
/**
 * The resources of the servers a conversation may use (/ai_mcp/resources, /ai_mcp/resources/read),
 * for the composer's picker and for links in tool results. The conversation is the store's
 * (chat_store.js). Answers are {..} or {error: {code, message}}.
 */
export class ResourceSource {
    constructor(store) {
        this.store = store;
    }

    list() {
        return this.store.services.rpc("/ai_mcp/resources", this.store.conversationParams(), {
            silent: true,
        });
    }

    /** `ref`: {server_id, uri} or {server_id, template, arguments} */
    read(ref) {
        return this.store.services.rpc(
            "/ai_mcp/resources/read",
            {...this.store.conversationParams(), ...ref},
            {silent: true}
        );
    }

    /** A link a call of the open conversation returned, read from that call's server. */
    openLink(callId, uri) {
        return this.store.services.rpc(
            "/ai_mcp/resources/read",
            {conversation_id: this.store.chat.conversationId, call_id: callId, uri},
            {silent: true}
        );
    }
}
