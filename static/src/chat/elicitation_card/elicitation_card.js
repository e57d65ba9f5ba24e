/** @odoo-module */
import {Component, onWillUnmount, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {formatDuration} from "@ai_mcp/common/chat_view";
import {SchemaFormNode, useSchemaForm} from "@ai_mcp/schema_form";

/**
 * A running call's server asks the user something (a `question` of chat_state.js). Form mode shows
 * the requested schema with the schema form, each field filled with its default (the only form
 * that does so: see initialFormState); URL mode shows the page's host, opens it in a new tab
 * and waits for the user to say they are done. `onAnswer(action, content)` resolves to the
 * server-side check: { answered } or { answered: false, errors }.
 */
export class ElicitationCard extends Component {
    static template = "ai_mcp.ElicitationCard";
    static components = {SchemaFormNode};
    static props = {question: Object, onAnswer: Function};

    setup() {
        const question = this.props.question;
        this.state = useState({sending: false, waitedMs: 0});
        // MCP asks the client to apply a field's default: the form starts with every default filled in
        this.form = useSchemaForm(this.state, {fillDefaults: true});
        this.form.load(question.requestedSchema || {type: "object", properties: {}});
        this.idPrefix = `o_ai_chat_question_${question.elicitation}`;
        const started = Date.now();
        // the call waits within its timeout: show how long it has waited
        const timer = setInterval(() => (this.state.waitedMs = Date.now() - started), 1000);
        onWillUnmount(() => clearInterval(timer));
    }

    get askedBy() {
        return _t("%s asks:", this.props.question.server);
    }

    /** The host, never the bare link: the user sees where the page leads before opening it. */
    get openLabel() {
        return _t("Open the page on %s", this.props.question.host);
    }

    get waited() {
        return this.state.waitedMs >= 1000
            ? _t("Waiting for you for %s", formatDuration(this.state.waitedMs))
            : "";
    }

    onChange(path) {
        this.form.onChange(path);
    }

    async accept() {
        let content = null;
        if (this.props.question.mode === "form") {
            content = this.form.value(_t("answer"));
            if (content === undefined) {
                return;
            }
        }
        await this.answer("accept", content);
    }

    async answer(action, content = null) {
        this.state.sending = true;
        this.state.problems = [];
        try {
            const reply = await this.props.onAnswer(action, content);
            if (reply && !reply.answered) {
                this.state.problems = reply.errors || [];
            }
        } finally {
            this.state.sending = false;
        }
    }

    openPage() {
        window.open(this.props.question.url, "_blank", "noopener,noreferrer");
    }
}
