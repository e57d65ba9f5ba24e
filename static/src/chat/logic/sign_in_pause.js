/** @odoo-module */
import {signedIn, signInAnswer, signInDeclined, signInOpened} from "./chat_state.js";
import {ChatStatus} from "../../common/chat_status.js";

/** The bus notification Odoo's OAuth callback sends to the user who signed in: { server_id }. */
export const SIGNED_IN = "ai_mcp.oauth_signed_in";

/**
 * A turn paused for OAuth sign-ins (chat_state.js `pendingSignIn`): what the sign-in cards' buttons
 * do, and the bus notification that a sign-in finished in another tab. The turn resumes
 * (chat_turns.js) once every server it waits for is signed in or declined.
 */
export class SignInPause {
    constructor(store, turns) {
        this.store = store;
        this.turns = turns;
        this.busService = store.services.busService;
        // Every tab of the user hears it, so another tab on the same conversation may resume first.
        this.onSignedIn = (payload) => this.signedIn(payload?.server_id, {elsewhere: true});
        // mail starts the bus in the backend, and the partner's channel the callback notifies is
        // listened to by default: subscribing is enough.
        this.busService.subscribe(SIGNED_IN, this.onSignedIn);
    }

    dispose() {
        this.busService.unsubscribe(SIGNED_IN, this.onSignedIn);
    }

    /** The servers to show a card for: none unless the turn waits for sign-ins. */
    servers(chat) {
        return chat.status === ChatStatus.AWAITING_AUTH ? chat.pendingSignIn?.servers || [] : [];
    }

    open(serverId) {
        const server = this.servers(this.store.chat).find(
            (candidate) => candidate.serverId === serverId
        );
        if (!server) {
            return;
        }
        // Odoo's own route; a new tab, so that this one keeps the paused turn.
        this.store.services.openWindow(server.url);
        this.store.update(signInOpened, serverId);
    }

    decline(serverId) {
        this.answer(signInDeclined(this.store.chat, serverId));
    }

    signedIn(serverId, {elsewhere = false} = {}) {
        this.answer(signedIn(this.store.chat, serverId), {elsewhere});
    }

    answer(chat, {elsewhere = false} = {}) {
        if (chat === this.store.chat) {
            return; // not a server this conversation waits for
        }
        this.store.replace(chat);
        const answer = signInAnswer(chat);
        if (answer) {
            this.turns.resume(answer, {elsewhere});
        }
    }
}
