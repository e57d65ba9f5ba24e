/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

/**
 * One server a paused turn needs a sign-in to (a server of chat_state.js's `pendingSignIn`). The
 * sign-in runs in another tab, so this one keeps the turn; the card then waits for the bus to say
 * it is done, and keeps a link to say so by hand for a browser the bus does not reach. The user may
 * also go on without the server. Each callback gets the server's id.
 */
export class SignInCard extends Component {
    static template = "ai_mcp.SignInCard";
    static props = {
        server: Object,
        disabled: {type: Boolean, optional: true},
        onOpen: Function,
        onDecline: Function,
        onDone: Function,
    };

    get signInLabel() {
        const server = this.props.server;
        return server.stepUp
            ? _t("Sign in again to %s", server.server)
            : _t("Sign in to %s", server.server);
    }

    get declineLabel() {
        return _t("Continue without %s", this.props.server.server);
    }

    /** Why a user already signed in is asked again, in case the server's message does not say. */
    get stepUpNote() {
        const server = this.props.server;
        if (!server.stepUp) {
            return "";
        }
        return server.scope
            ? _t("You are signed in, but this call needs a wider permission (%s).", server.scope)
            : _t("You are signed in, but this call needs a wider permission.");
    }

    get outcomeText() {
        const server = this.props.server;
        if (server.outcome === "signed_in") {
            return _t("Signed in to %s.", server.server);
        }
        return server.outcome === "declined" ? _t("Going on without %s.", server.server) : "";
    }

    open() {
        this.props.onOpen(this.props.server.serverId);
    }

    decline() {
        this.props.onDecline(this.props.server.serverId);
    }

    done() {
        this.props.onDone(this.props.server.serverId);
    }
}
