/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {CallStatus} from "@ai_mcp/common/chat_status";
import {formatDuration, iconSrc, prettyJson, progressPercent} from "@ai_mcp/common/chat_view";
import {AppFrame} from "@ai_mcp/apps";
import {ElicitationCard} from "../elicitation_card/elicitation_card";
import {SamplingCard} from "../sampling_card/sampling_card";
import {ToolResult} from "../tool_result/tool_result";

const STATUS_ICONS = {
    preparing: "fa fa-pencil text-muted",
    running: "fa fa-circle-o-notch fa-spin text-primary",
    waiting: "fa fa-pause-circle-o text-muted",
    pending_approval: "fa fa-hand-paper-o text-warning",
    pending_sign_in: "fa fa-key text-warning",
    done: "fa fa-check-circle text-success",
    error: "fa fa-exclamation-circle text-danger",
    denied: "fa fa-ban text-muted",
    cancelled: "fa fa-stop-circle text-muted",
};

const INTERRUPTED = {
    stopped: () => _t("Not finished: you stopped the answer."),
    error: () => _t("Not finished: the answer stopped with an error."),
};

/**
 * One tool call of an answer (a "tool" part of chat_state.js): a header with the tool's title,
 * server, status and duration that expands to the arguments and the result. While the call runs
 * it shows the server's progress and a stop control; the server's log messages are listed in the
 * expanded block. A call rendered by an app shows the app (AppFrame) below its arguments, from
 * the moment the model starts writing them; the app stays loaded, hidden, while the block is
 * collapsed for a moment.
 */
export class ToolBlock extends Component {
    static template = "ai_mcp.ToolBlock";
    static components = {AppFrame, ElicitationCard, SamplingCard, ToolResult};
    static props = {
        block: Object,
        paused: {type: Boolean, optional: true},
        onToggle: Function,
        onCancel: {type: Function, optional: true},
        onAnswer: {type: Function, optional: true},
        onOpenResource: {type: Function, optional: true},
        conversationId: {type: [Number, {value: null}], optional: true},
        store: Object, // the chat's store and its turns, for the apps of tool calls
        turns: Object,
    };

    /** The shown status: a call that was not started because its round waits for an approval is
     * "waiting", not "running" (the reducer keeps it running: it starts as soon as the turn resumes). */
    get status() {
        const status = this.props.block.status;
        return status === CallStatus.RUNNING && this.props.paused ? "waiting" : status;
    }

    get title() {
        const block = this.props.block;
        return block.title || block.tool || block.name || _t("Tool");
    }

    get statusLabel() {
        const labels = {
            preparing: _t("Preparing"),
            running: _t("Running"),
            waiting: _t("Waiting"),
            pending_approval: _t("Awaiting approval"),
            pending_sign_in: _t("Awaiting sign-in"),
            done: _t("Done"),
            error: _t("Error"),
            denied: _t("Denied"),
            cancelled: _t("Cancelled"),
        };
        if (
            this.props.block.cancelling &&
            (this.status === CallStatus.RUNNING || this.props.block.taskRunning)
        ) {
            return _t("Stopping…");
        }
        if (this.props.block.taskRunning) {
            return _t("Task running");
        }
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

    get icon() {
        return iconSrc(this.props.block.icon);
    }

    get canStop() {
        const block = this.props.block;
        return (
            Boolean(this.props.onCancel) &&
            (this.status === CallStatus.RUNNING || Boolean(block.taskRunning)) &&
            !block.cancelling
        );
    }

    get stopTitle() {
        return this.props.block.taskRunning
            ? _t("Stop the task its server still runs")
            : _t("Stop this call; the answer goes on without it");
    }

    get percent() {
        return progressPercent(this.props.block.progress);
    }

    get progressWidth() {
        return this.percent === null ? "" : `width: ${this.percent.toFixed(1)}%`;
    }

    get progressLabel() {
        const progress = this.props.block.progress;
        if (this.percent === null) {
            return _t("Progress: %(progress)s", {progress: progress.progress});
        }
        return _t("Progress: %(progress)s of %(total)s", {
            progress: progress.progress,
            total: progress.total,
        });
    }

    get elapsed() {
        return formatDuration(this.props.block.progress?.elapsedMs);
    }

    get argumentsJson() {
        return prettyJson(this.props.block.arguments ?? {});
    }

    get toggleLabel() {
        return this.props.block.expanded
            ? _t("Hide the call's details")
            : _t("Show the call's details");
    }

    toggle() {
        this.props.onToggle(this.props.block.key);
    }

    cancel() {
        this.props.onCancel(this.props.block.key);
    }

    get showQuestion() {
        return Boolean(
            this.props.block.question &&
            this.props.onAnswer &&
            (this.status === CallStatus.RUNNING || this.props.block.question.task)
        );
    }

    answer(action, content) {
        return this.props.onAnswer(this.props.block.key, action, content);
    }

    get showSampling() {
        return Boolean(
            this.props.block.sampling && this.props.onAnswer && this.status === CallStatus.RUNNING
        );
    }

    answerSampling(action, content) {
        return this.props.onAnswer(this.props.block.key, action, content, "sampling");
    }

    /** What became of each request of the server for a completion: the model's answer it got, or why none. */
    sampledLine(outcome) {
        if (outcome.action === "accept") {
            return _t("The assistant's model answered %s:", outcome.server);
        }
        if (outcome.action === "decline") {
            return _t("You declined the request of %s for a completion.", outcome.server);
        }
        return (
            outcome.note || _t("The request of %s for a completion was cancelled.", outcome.server)
        );
    }

    get openResource() {
        const open = this.props.onOpenResource;
        return open ? (uri) => open(this.props.block.id, uri) : undefined;
    }
}
