/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {SchemaFormNode, useSchemaForm} from "@ai_mcp/schema_form";
import {useServerRequest} from "../server_request/use_server_request";

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
        this.state = useState({});
        this.request = useServerRequest(this.state, (action, content) =>
            this.props.onAnswer(action, content)
        );
        // MCP asks the client to apply a field's default: the form starts with every default filled in
        this.form = useSchemaForm(this.state, {fillDefaults: true});
        this.form.load(question.requestedSchema || {type: "object", properties: {}});
        this.idPrefix = `o_ai_chat_question_${question.elicitation}`;
    }

    get askedBy() {
        return _t("%s asks:", this.props.question.server);
    }

    /** The host, never the bare link: the user sees where the page leads before opening it. */
    get openLabel() {
        return _t("Open the page on %s", this.props.question.host);
    }

    get waited() {
        return this.request.waited;
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

    answer(action, content = null) {
        return this.request.answer(action, content);
    }

    openPage() {
        window.open(this.props.question.url, "_blank", "noopener,noreferrer");
    }
}
