/** @odoo-module */
import {markup} from "@odoo/owl";
import {ConfirmationDialog} from "@web/core/confirmation_dialog/confirmation_dialog";
import {_t} from "@web/core/l10n/translation";
import {humanSize} from "@web/core/utils/binary";
import {escape} from "@web/core/utils/strings";

import {AppApprovalDialog} from "../app_approval_dialog/app_approval_dialog";

/** How long a saved file's data stays in memory: the browser reads it when the download starts,
 * which may be after a "save as" dialog. */
const REVOKE_AFTER_MS = 60_000;

/** The refusals of apps/logic/app_host.js, in the user's language. */
function refusal({code, ...data}) {
    switch (code) {
        case "link_invalid":
            return _t("This is not a web address: %(url)s", data);
        case "link_refused":
            return _t("Only web and e-mail links can be opened, not %(url)s", data);
        case "download_empty":
            return _t("There is nothing to download.");
        case "download_link_refused":
            return _t("Only files on the web (http or https) can be downloaded, not %(url)s", data);
        case "download_too_large":
            return _t("The files weigh %(size)s, more than the %(limit)s a download may weigh.", {
                size: humanSize(data.size),
                limit: humanSize(data.limit),
            });
        case "download_unsupported":
            return _t("This content cannot be downloaded: %(type)s", data);
        case "context_unsupported":
            return _t("Only text can be added to the assistant's context, not %(type)s.", data);
        case "context_too_long":
            return _t(
                "The context holds %(length)s characters, more than the limit of %(limit)s.",
                data
            );
        case "message_empty":
            return _t("The message has no text.");
        case "message_role":
            return _t("An app can only send messages as the user, not as %(role)s.", data);
        default:
            return code;
    }
}

/**
 * What an app's requests (apps/logic/app_requests.js) show the user, Odoo's side: the questions
 * in Odoo's dialogs, the words in the user's language, a file saved by the browser. `frame`: the
 * AppFrame, which names the app and leaves fullscreen.
 */
export class AppAsk {
    constructor(dialog, frame) {
        this.dialog = dialog;
        this.frame = frame;
    }

    title() {
        return this.frame.title;
    }

    leaveFullscreen() {
        if (this.frame.fullscreen) {
            this.frame.setDisplayMode("inline");
        }
    }

    refusal(error) {
        return refusal(error);
    }

    declined(tool) {
        return _t("The user declined the call to %(tool)s.", {tool});
    }

    /** The user's choice about the app calling `tool`; closing the dialog denies. */
    approval({tool, arguments: args}) {
        let close = null;
        const choice = new Promise((resolve) => {
            close = this.dialog.add(
                AppApprovalDialog,
                {app: this.title(), tool, arguments: args, choose: resolve},
                {onClose: () => resolve("deny")}
            );
        });
        return {choice, close};
    }

    openLink(link) {
        const intro = _t("%(app)s wants to open this address in a new tab:", {app: this.title()});
        return this.confirm({
            title: _t("Open a link?"),
            body: markup(
                `<span class="d-block fs-4 fw-bold text-break mb-2">${escape(link.host)}</span>` +
                    `${escape(intro)}\n<code class="text-break">${escape(link.url)}</code>`
            ),
            confirmLabel: _t("Open"),
            cancelLabel: _t("Cancel"),
        });
    }

    download(files) {
        const list = files
            .map((file) =>
                file.size === null ? file.name : `${file.name} (${humanSize(file.size)})`
            )
            .join("\n");
        return this.confirm({
            title: _t("Download?"),
            body: _t("%(app)s wants to save to your computer:\n%(files)s", {
                app: this.title(),
                files: list,
            }),
            confirmLabel: _t("Download"),
            cancelLabel: _t("Cancel"),
        });
    }

    /** Asks the user; resolves to true only when they confirm (closing the dialog is a no). */
    confirm({title, body, confirmLabel, cancelLabel}) {
        return new Promise((resolve) => {
            this.dialog.add(
                ConfirmationDialog,
                {
                    title,
                    body,
                    confirmLabel,
                    cancelLabel,
                    confirm: () => resolve(true),
                    cancel: () => resolve(false),
                },
                {onClose: () => resolve(false)}
            );
        });
    }

    /** A checked file (apps/logic/app_host.js checkDownload) saved by the browser. */
    save(file) {
        const link = document.createElement("a");
        link.download = file.name;
        link.rel = "noopener noreferrer";
        let objectUrl = null;
        if (file.url) {
            link.href = file.url;
            link.target = "_blank";
        } else {
            const data = file.text ?? Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0));
            objectUrl = URL.createObjectURL(new Blob([data], {type: file.mimeType}));
            link.href = objectUrl;
        }
        document.body.appendChild(link);
        link.click();
        link.remove();
        if (objectUrl) {
            setTimeout(() => URL.revokeObjectURL(objectUrl), REVOKE_AFTER_MS);
        }
    }
}
