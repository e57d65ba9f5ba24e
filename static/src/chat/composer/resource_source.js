/** @odoo-module */
import {rpc} from "@web/core/network/rpc";

/**
 * The resources of the servers a conversation may use (/ai_mcp/resources, /ai_mcp/resources/read),
 * for the composer's picker and for links in tool results. `params()` gives the conversation's
 * {assistant_id, conversation_id | cloud_service_id}. Answers are {..} or {error: {code, message}}.
 */
export class ResourceSource {
    constructor(params) {
        this.params = params;
    }

    list() {
        return rpc("/ai_mcp/resources", this.params(), {silent: true});
    }

    /** `ref`: {server_id, uri} or {server_id, template, arguments} */
    read(ref) {
        return rpc("/ai_mcp/resources/read", {...this.params(), ...ref}, {silent: true});
    }

    /** A link a call of the open conversation returned, read from that call's server. */
    openLink(callId, uri) {
        return rpc(
            "/ai_mcp/resources/read",
            {conversation_id: this.params().conversation_id, call_id: callId, uri},
            {silent: true}
        );
    }
}
