/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {promptSchema} from "@ai_mcp/core/prompt_menu";
import {
    collect,
    compileSchema,
    errorsByPath,
    initialState,
    touchPath,
} from "@ai_mcp/core/schema_form_model";
import {errorMessage, SchemaFormNode} from "../../schema_form/schema_form";

/**
 * The arguments of the prompt picked in the `/` menu, asked with the schema form. `onSubmit(values)`
 * resolves to an error text to show, or nothing when the prompt was sent.
 */
export class PromptForm extends Component {
    static template = "ai_mcp.PromptForm";
    static components = {SchemaFormNode};
    static props = {prompt: Object, onSubmit: Function, onCancel: Function};

    setup() {
        const desc = compileSchema(promptSchema(this.props.prompt));
        this.state = useState({
            desc,
            root: initialState(desc),
            errors: {},
            problems: [],
            sending: false,
        });
        this.idPrefix = `o_ai_chat_prompt_${this.props.prompt.server_id}_${this.props.prompt.name}`;
    }

    get heading() {
        return _t("%(prompt)s of %(server)s", {
            prompt: this.props.prompt.title || this.props.prompt.name,
            server: this.props.prompt.server,
        });
    }

    onChange(path) {
        touchPath(this.state.desc, this.state.root, path);
        this.state.errors = errorsByPath(collect(this.state.desc, this.state.root).errors);
    }

    async submit() {
        const result = collect(this.state.desc, this.state.root);
        this.state.errors = errorsByPath(result.errors);
        if (result.errors.length) {
            this.state.problems = result.errors.map(
                (e) => `${e.path.join(".")}: ${errorMessage(e)}`
            );
            return;
        }
        this.state.sending = true;
        this.state.problems = [];
        try {
            const error = await this.props.onSubmit(result.value ?? {});
            if (error) {
                this.state.problems = [error];
            }
        } finally {
            this.state.sending = false;
        }
    }
}
