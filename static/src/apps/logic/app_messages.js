/** @odoo-module */
/**
 * The messages apps send in the user's name (ui/message, from an AppFrame): each goes through the
 * chat's normal send path (chat_turns.js) with the call whose app sent it (`app_call_id`), so the
 * server stores which app it was and the conversation shows it, then and when reopened. An app may
 * only send while the user could: not while an answer streams or a pause waits for the user.
 */
export class AppMessages {
    constructor(store, turns) {
        this.store = store;
        this.turns = turns;
    }

    /** { callId, title, text } from the app of call `callId`: null once the message is on its
     * way, else why it was not sent (the app is told, and so is the user). */
    send({callId, title, text}) {
        if (!this.store.canSend) {
            const reason = this.store.services.words.appBusy(title);
            this.store.services.notify(reason, "warning");
            return reason;
        }
        // Not awaited: the app hears that its message was taken, not how long the answer takes.
        this.turns.send(text, {app: {callId, title}});
        return null;
    }
}
