/** @odoo-module */
/**
 * The resources of the servers a conversation may use (/ai_mcp/resources, /ai_mcp/resources/read),
 * and the suggestions for a template's values as the user types them (/ai_mcp/complete),
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

    /** {values, has_more}: the server's suggestions for variable `argument` of `template` (an
     * entry of pickerEntries) as typed so far (`value`), the others filled in being `context`. */
    complete(template, argument, value, context) {
        return this.store.services.rpc(
            "/ai_mcp/complete",
            {
                ...this.store.conversationParams(),
                server_id: template.serverId,
                template: template.uri_template,
                argument,
                value,
                arguments: context,
            },
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
