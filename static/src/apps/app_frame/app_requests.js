/** @odoo-module */
import {markup} from "@odoo/owl";
import {ConfirmationDialog} from "@web/core/confirmation_dialog/confirmation_dialog";
import {_t} from "@web/core/l10n/translation";
import {rpc} from "@web/core/network/rpc";
import {humanSize} from "@web/core/utils/binary";
import {escape} from "@web/core/utils/strings";

import {
    checkDownload,
    checkModelContext,
    checkOpenLink,
    messageText,
} from "@ai_mcp/apps/logic/app_host";
import {ApprovalGate, approvedParam, argumentsKey, RETRY} from "@ai_mcp/common/approval_gate";
import {ErrorCode} from "@ai_mcp/common/chat_status";
import {prettyJson} from "@ai_mcp/common/chat_view";

import {AppApprovalDialog} from "../app_approval_dialog/app_approval_dialog";

const SHOWN_ARGUMENTS = 2000;
/** How long a saved file's data stays in memory: the browser reads it when the download starts,
 * which may be after a "save as" dialog. */
const REVOKE_AFTER_MS = 60_000;

/** An app's request the host refuses: the app gets the message as the request's error. */
export class AppRequestError extends Error {}

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

function refuse(error) {
    throw new AppRequestError(refusal(error));
}

/**
 * What an app asks of the host, each request answered for the bridge (app_session.js): the server's
 * tools and resources and the model context through the Odoo server's app routes (which check
 * every call against the conversation and the app's server), links, downloads and messages after
 * the checks of apps/logic/app_host.js, with the user's consent where the request leaves the chat. The
 * calls of one tool waiting for the user's approval share one dialog (common/approval_gate.js),
 * which closes by itself when the user allows the tool elsewhere meanwhile (`release`).
 *
 * `host`: { dialog, params() -> { conversation_id, call_id }, title() -> the app's name,
 *           sendMessage(text) -> null when sent, else why not,
 *           modelAsks(tool) -> whether the model's call of `tool` waits for the user's approval,
 *           waiting(titles) -> the tools whose calls wait for that question, to show,
 *           allowed({tool, scope}) -> the user allowed `tool` for the conversation or this app, and
 *           the server remembers it: other apps waiting for it may go on }
 */
export class AppRequests {
    constructor(host) {
        this.host = host;
        this.approvals = new ApprovalGate();
        this.dialogs = new Map(); // tool -> closes its open approval dialog
        this.behindModel = new Map(); // tool -> its title, while its calls wait for the model's question
    }

    /** The user allowed `tool` elsewhere: the calls waiting for its dialog are sent again. */
    release(tool) {
        if (this.approvals.release(tool)) {
            this.dialogs.get(tool)?.();
            this.dialogs.delete(tool);
        }
        if (this.behindModel.delete(tool)) {
            this.host.waiting([...this.behindModel.values()]);
        }
    }

    /** What the app is and what its call is: the server's /ai_mcp/app/open answer (`writing`: the
     * server, tool and app of a call the model still writes, see AppFrame.writing). */
    open(writing = null) {
        return this.post("/ai_mcp/app/open", writing ? {writing} : {});
    }

    async callTool({name, arguments: args}) {
        const body = {name, arguments: args ?? {}, approved: false};
        const key = argumentsKey(body.arguments);
        let ticket = this.approvals.ticket();
        let answer = await this.post("/ai_mcp/app/call_tool", body);
        while (answer?.error?.code === ErrorCode.APPROVAL_REQUIRED) {
            const tool = answer.error.tool || {name};
            const shown = answer.error.arguments ?? args ?? {};
            // the model's call of the tool is being asked about: its answer is released to this
            // call (the chat action), which then runs or asks
            const choice = await this.approvals.decide(
                name,
                ticket,
                () =>
                    this.host.modelAsks(name)
                        ? this.waitBehindModel(name, tool)
                        : this.askApproval(name, tool, shown),
                key
            );
            if (choice === RETRY) {
                ticket = this.approvals.ticket();
                answer = await this.post("/ai_mcp/app/call_tool", body);
                continue;
            }
            const approved = approvedParam(choice);
            if (!approved) {
                const text = _t("The user declined the call to %(tool)s.", {tool: tool.name});
                return {content: [{type: "text", text}], isError: true};
            }
            answer = await this.post("/ai_mcp/app/call_tool", {...body, approved});
            if (approved !== "once" && !answer?.error) {
                this.host.allowed({tool: name, scope: approved});
            }
            break;
        }
        return this.answer(answer);
    }

    /** A question only a release ends: the model's question about the tool is answered. */
    waitBehindModel(name, tool) {
        this.behindModel.set(name, tool.title || tool.name);
        this.host.waiting([...this.behindModel.values()]);
        return new Promise((resolve) => this.dialogs.set(name, () => resolve("deny")));
    }

    /** The user's choice (common/approval_gate.js APP_CHOICES) about the app calling `tool`;
     * closing the dialog denies. */
    askApproval(name, tool, args) {
        return new Promise((resolve) => {
            const close = this.host.dialog.add(
                AppApprovalDialog,
                {
                    app: this.host.title(),
                    tool,
                    arguments: prettyJson(args).slice(0, SHOWN_ARGUMENTS),
                    choose: resolve,
                },
                {
                    onClose: () => {
                        this.dialogs.delete(name);
                        resolve("deny");
                    },
                }
            );
            this.dialogs.set(name, close);
        });
    }

    async readResource({uri}) {
        return this.answer(await this.post("/ai_mcp/app/read_resource", {uri}));
    }

    async updateModelContext(params) {
        const checked = checkModelContext(params);
        if (checked.error) {
            refuse(checked.error);
        }
        const {content, structuredContent} = checked;
        return this.answer(
            await this.post("/ai_mcp/app/model_context", {content, structuredContent})
        );
    }

    async message(params) {
        const checked = messageText(params);
        if (checked.error) {
            refuse(checked.error);
        }
        const refused = await this.host.sendMessage(checked.text);
        return refused ? {isError: true, message: refused} : {};
    }

    async openLink({url}) {
        const link = checkOpenLink(url);
        if (link.error) {
            refuse(link.error);
        }
        const intro = _t("%(app)s wants to open this address in a new tab:", {
            app: this.host.title(),
        });
        const allowed = await this.confirm({
            title: _t("Open a link?"),
            body: markup(
                `<span class="d-block fs-4 fw-bold text-break mb-2">${escape(link.host)}</span>` +
                    `${escape(intro)}\n<code class="text-break">${escape(link.url)}</code>`
            ),
            confirmLabel: _t("Open"),
            cancelLabel: _t("Cancel"),
        });
        if (!allowed) {
            return {isError: true};
        }
        window.open(link.url, "_blank", "noopener,noreferrer");
        return {};
    }

    async downloadFile({contents}) {
        const checked = checkDownload(contents);
        if (checked.error) {
            refuse(checked.error);
        }
        const list = checked.files
            .map((file) =>
                file.size === null ? file.name : `${file.name} (${humanSize(file.size)})`
            )
            .join("\n");
        const allowed = await this.confirm({
            title: _t("Download?"),
            body: _t("%(app)s wants to save to your computer:\n%(files)s", {
                app: this.host.title(),
                files: list,
            }),
            confirmLabel: _t("Download"),
            cancelLabel: _t("Cancel"),
        });
        if (!allowed) {
            return {isError: true};
        }
        checked.files.forEach(saveFile);
        return {};
    }

    // -- helpers -----------------------------------------------------------------------------------

    post(route, body) {
        return rpc(route, {...this.host.params(), ...body}, {silent: true});
    }

    /** The server's answer, or its refusal ({ error: { code, message } }) as the request's error. */
    answer(answer) {
        if (answer?.error) {
            throw new AppRequestError(answer.error.message || answer.error.code);
        }
        return answer ?? {};
    }

    /** Asks the user; resolves to true only when they confirm (closing the dialog is a no). */
    confirm({title, body, confirmLabel, cancelLabel}) {
        return new Promise((resolve) => {
            this.host.dialog.add(
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
}

/** A checked file (apps/logic/app_host.js checkDownload) saved by the browser. */
function saveFile(file) {
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
