/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {editedRequest} from "../logic/sampling_state";
import {useServerRequest} from "../server_request/use_server_request";

const PROBLEMS = {
    max_tokens: () => _t("The maximum tokens must be a whole number of at least 1."),
    empty: () => _t("Each message needs a text."),
};

/**
 * A running call's server asks the assistant's model for a completion (the block's `sampling` of
 * sampling_state.js): which server asks, its instructions, the messages and the output cap, as
 * text the user may edit before she approves, or declines. Nothing reaches the model before she
 * approves. `onAnswer(action, content)` resolves to the server-side check: { answered } or
 * { answered: false, errors }.
 */
export class SamplingCard extends Component {
    static template = "ai_mcp.SamplingCard";
    static props = {request: Object, onAnswer: Function};

    setup() {
        const request = this.props.request;
        this.state = useState({
            messages: request.messages.map((message) => ({...message})),
            maxTokens: String(request.maxTokens),
        });
        this.request = useServerRequest(this.state, (action, content) =>
            this.props.onAnswer(action, content)
        );
        this.idPrefix = `o_ai_chat_sampling_${request.sampling}`;
    }

    get askedBy() {
        return _t("%s asks the assistant's model for an answer:", this.props.request.server);
    }

    roleLabel(role) {
        return role === "assistant" ? _t("Assistant message") : _t("User message");
    }

    get waited() {
        return this.request.waited;
    }

    async approve() {
        const {request, problem} = editedRequest(this.state.messages, this.state.maxTokens);
        if (!request) {
            this.state.problems = [PROBLEMS[problem]()];
            return;
        }
        await this.answer("accept", request);
    }

    answer(action, content = null) {
        return this.request.answer(action, content);
    }
}
