/** @odoo-module */
import {ConfirmationDialog} from "@web/core/confirmation_dialog/confirmation_dialog";
import {_t} from "@web/core/l10n/translation";

import {ChatStatus} from "@ai_mcp/common/chat_status";
import {ApprovalDialog} from "../approval_dialog/approval_dialog";

/**
 * The questions a paused turn asks: the approval dialog for `pendingApproval`, "Continue?" for
 * `confirm` (chat_state.js). Each pause opens its dialog once; a closed dialog leaves the turn
 * waiting until the user reviews it again. The answer, { approvals } or { go_on }, resumes the turn
 * (static/src/chat/logic/chat_turns.js).
 */
export class PauseDialogs {
    constructor(dialog, turns) {
        this.dialog = dialog;
        this.turns = turns;
        this.shown = null; // the pendingApproval or confirm object whose dialog was opened
        this.closeDialog = null;
    }

    /** Shows what `chat` waits for, unless it was shown already (`again`: show it anyway). */
    show(chat, {again = false} = {}) {
        if (chat.status === ChatStatus.AWAITING_APPROVAL && chat.pendingApproval) {
            if (again || this.shown !== chat.pendingApproval) {
                this.openApproval(chat.pendingApproval);
            }
        } else if (chat.status === ChatStatus.AWAITING_CONFIRMATION && chat.confirm) {
            if (again || this.shown !== chat.confirm) {
                this.openConfirm(chat.confirm);
            }
        } else if (this.shown && !again) {
            this.close();
        }
    }

    close() {
        const close = this.closeDialog;
        this.closeDialog = null;
        this.shown = null;
        close?.();
    }

    openApproval(calls) {
        this.close();
        this.shown = calls;
        this.closeDialog = this.dialog.add(
            ApprovalDialog,
            {calls, onSubmit: (approvals) => this.turns.resume({approvals})},
            {onClose: () => (this.closeDialog = null)}
        );
    }

    openConfirm(confirm) {
        const {roundsUsed, maxRounds} = confirm;
        this.close();
        this.shown = confirm;
        this.closeDialog = this.dialog.add(
            ConfirmationDialog,
            {
                title: _t("Continue?"),
                body: _t(
                    "The assistant has used %(used)s of its %(max)s rounds and still wants to use tools. Let it go on, or have it answer now with what it has found?",
                    {used: roundsUsed, max: maxRounds}
                ),
                confirmLabel: _t("Go on"),
                cancelLabel: _t("Answer now"),
                // Not awaited: the dialog closes at once while the answer streams.
                confirm: () => {
                    this.turns.resume({go_on: true});
                },
                cancel: () => {
                    this.turns.resume({go_on: false});
                },
                dismiss: () => {}, // closing the dialog answers nothing: the turn keeps waiting
            },
            {onClose: () => (this.closeDialog = null)}
        );
    }
}
