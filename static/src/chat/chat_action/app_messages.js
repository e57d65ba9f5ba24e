/** @odoo-module */
import {_t} from "@web/core/l10n/translation";

/**
 * The messages apps send in the user's name (ui/message, from an AppFrame): the chat action sends
 * each through its normal send path with the call whose app sent it (`app_call_id`), so the server
 * stores which app it was and the conversation shows it, then and when reopened. An app may only
 * send while the user could: not while an answer streams or a pause waits for the user.
 *
 * `action`: the ChatAction ({ canSend, send(text, { app }), notification }).
 */
export class AppMessages {
    constructor(action) {
        this.action = action;
    }

    /** { callId, title, text } from the app of call `callId`: null once the message is on its
     * way, else why it was not sent (the app is told, and so is the user). */
    send({callId, title, text}) {
        if (!this.action.canSend) {
            const reason = _t(
                "%(app)s sent a message while the assistant was busy; it was not sent. Try again once the answer is finished.",
                {app: title}
            );
            this.action.notification.add(reason, {type: "warning"});
            return reason;
        }
        // Not awaited: the app hears that its message was taken, not how long the answer takes.
        this.action.send(text, {app: {callId, title}});
        return null;
    }
}
