/** @odoo-module */
import {signedIn, signInAnswer, signInDeclined, signInOpened} from "@ai_mcp/logic/chat_state";
import {ChatStatus} from "@ai_mcp/logic/chat_status";

/** The bus notification Odoo's OAuth callback sends to the user who signed in: { server_id }. */
const SIGNED_IN = "ai_mcp.oauth_signed_in";

/**
 * A turn paused for OAuth sign-ins (chat_state.js `pendingSignIn`): what the sign-in cards' buttons
 * do, and the bus notification that a sign-in finished in another tab. The turn resumes once every
 * server it waits for is signed in or declined.
 * `host`: { chat(), setChat(chat), resume(answer, { elsewhere }) }.
 */
export class SignInPause {
    constructor(busService, host) {
        this.busService = busService;
        this.host = host;
        // Every tab of the user hears it, so another tab on the same conversation may resume first.
        this.onSignedIn = (payload) => this.signedIn(payload?.server_id, {elsewhere: true});
        // mail starts the bus in the backend, and the partner's channel the callback notifies is
        // listened to by default: subscribing is enough.
        busService.subscribe(SIGNED_IN, this.onSignedIn);
    }

    dispose() {
        this.busService.unsubscribe(SIGNED_IN, this.onSignedIn);
    }

    /** The servers to show a card for: none unless the turn waits for sign-ins. */
    servers(chat) {
        return chat.status === ChatStatus.AWAITING_AUTH ? chat.pendingSignIn?.servers || [] : [];
    }

    open(serverId) {
        const chat = this.host.chat();
        const server = this.servers(chat).find((candidate) => candidate.serverId === serverId);
        if (!server) {
            return;
        }
        // Odoo's own route; a new tab, so that this one keeps the paused turn.
        window.open(server.url, "_blank", "noopener");
        this.host.setChat(signInOpened(chat, serverId));
    }

    decline(serverId) {
        this.answer(signInDeclined(this.host.chat(), serverId));
    }

    signedIn(serverId, {elsewhere = false} = {}) {
        this.answer(signedIn(this.host.chat(), serverId), {elsewhere});
    }

    answer(chat, {elsewhere = false} = {}) {
        if (chat === this.host.chat()) {
            return; // not a server this conversation waits for
        }
        this.host.setChat(chat);
        const answer = signInAnswer(chat);
        if (answer) {
            this.host.resume(answer, {elsewhere});
        }
    }
}
