/** @odoo-module */
import { Component } from "@odoo/owl";
import { _t } from "@web/core/l10n/translation";

import { formatDuration, prettyJson } from "@ai_mcp/core/chat_view";
import { ToolResult } from "../tool_result/tool_result";

const STATUS_ICONS = {
    running: "fa fa-circle-o-notch fa-spin text-primary",
    waiting: "fa fa-pause-circle-o text-muted",
    pending_approval: "fa fa-hand-paper-o text-warning",
    done: "fa fa-check-circle text-success",
    error: "fa fa-exclamation-circle text-danger",
    denied: "fa fa-ban text-muted",
};

const INTERRUPTED = {
    stopped: () => _t("Not finished: you stopped the answer."),
    error: () => _t("Not finished: the answer stopped with an error."),
};

/**
 * One tool call of an answer (a "tool" part of chat_state.js): a header with the tool's title,
 * server, status and duration that expands to the arguments and the result.
 */
export class ToolBlock extends Component {
    static template = "ai_mcp.ToolBlock";
    static components = { ToolResult };
    static props = { block: Object, paused: { type: Boolean, optional: true }, onToggle: Function };

    /** The shown status: a call that was not started because its round waits for an approval is
     * "waiting", not "running" (the reducer keeps it running: it starts as soon as the turn resumes). */
    get status() {
        const status = this.props.block.status;
        return status === "running" && this.props.paused ? "waiting" : status;
    }

    get title() {
        const block = this.props.block;
        return block.title || block.tool || block.name || _t("Tool");
    }

    get statusLabel() {
        const labels = {
            running: _t("Running"),
            waiting: _t("Waiting"),
            pending_approval: _t("Awaiting approval"),
            done: _t("Done"),
            error: _t("Error"),
            denied: _t("Denied"),
        };
        return labels[this.status] || this.status;
    }

    get statusIcon() {
        return STATUS_ICONS[this.status] || "fa fa-question-circle text-muted";
    }

    get duration() {
        return this.props.block.result ? formatDuration(this.props.block.durationMs) : "";
    }

    get errorMessage() {
        const result = this.props.block.result;
        return result?.interrupted ? INTERRUPTED[result.interrupted]() : result?.errorMessage;
    }

    get argumentsJson() {
        return prettyJson(this.props.block.arguments ?? {});
    }

    get toggleLabel() {
        return this.props.block.expanded ? _t("Hide the call's details") : _t("Show the call's details");
    }

    toggle() {
        this.props.onToggle(this.props.block.key);
    }
}
