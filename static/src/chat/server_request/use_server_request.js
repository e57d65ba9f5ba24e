/** @odoo-module */
import {onWillUnmount} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {formatDuration} from "@ai_mcp/common/chat_view";

/**
 * What the cards of a running call's server share (its question, its sampling request): the call
 * waits for the user within its timeout, so the card shows how long it has waited; and her answer
 * goes through `onAnswer(action, content)`, whose server-side check ({ answered } or
 * { answered: false, errors }) shows as the card's problems. `state` is the card's own useState:
 * this sets its `sending`, `problems` and `waitedMs`.
 */
export function useServerRequest(state, onAnswer) {
    Object.assign(state, {sending: false, problems: [], waitedMs: 0});
    const started = Date.now();
    const timer = setInterval(() => (state.waitedMs = Date.now() - started), 1000);
    onWillUnmount(() => clearInterval(timer));
    return {
        get waited() {
            return state.waitedMs >= 1000
                ? _t("Waiting for you for %s", formatDuration(state.waitedMs))
                : "";
        },
        async answer(action, content = null) {
            state.sending = true;
            state.problems = [];
            try {
                const reply = await onAnswer(action, content);
                if (reply && !reply.answered) {
                    state.problems = reply.errors || [];
                }
            } finally {
                state.sending = false;
            }
        },
    };
}
