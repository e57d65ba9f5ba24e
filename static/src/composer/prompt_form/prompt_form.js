/** @odoo-module */
import {Component, onWillUnmount, reactive, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {FieldCompleter} from "@ai_mcp/composer/logic/field_completer";
import {promptSchema} from "@ai_mcp/composer/logic/prompt_menu";
import {SchemaFormNode, useSchemaForm} from "@ai_mcp/schema_form";

/**
 * The arguments of the prompt picked in the `/` menu, asked with the schema form. `onSubmit(values)`
 * resolves to an error text to show, or nothing when the prompt was sent. When the prompt's server
 * completes, `onComplete(prompt, argument, value, context)` gives its suggestions as the user types.
 */
export class PromptForm extends Component {
    static template = "ai_mcp.PromptForm";
    static components = {SchemaFormNode};
    static props = {
        prompt: Object,
        onSubmit: Function,
        onCancel: Function,
        onComplete: {type: Function, optional: true},
    };

    setup() {
        this.state = useState({sending: false});
        this.form = useSchemaForm(this.state);
        this.form.load(promptSchema(this.props.prompt));
        this.idPrefix = `o_ai_chat_prompt_${this.props.prompt.server_id}_${this.props.prompt.name}`;
        this.completer = new FieldCompleter({
            ask: (argument, value, context) =>
                this.props.onComplete(this.props.prompt, argument, value, context),
            context: () => this.form.partial(),
            enabled: Boolean(this.props.onComplete && this.props.prompt.completions),
            reactive,
        });
        onWillUnmount(() => this.completer.close());
    }

    get heading() {
        return _t("%(prompt)s of %(server)s", {
            prompt: this.props.prompt.title || this.props.prompt.name,
            server: this.props.prompt.server,
        });
    }

    onChange(path) {
        this.form.onChange(path);
    }

    async submit() {
        const value = this.form.value();
        if (value === undefined) {
            return;
        }
        this.state.sending = true;
        this.state.problems = [];
        try {
            const error = await this.props.onSubmit(value);
            if (error) {
                this.state.problems = [error];
            }
        } finally {
            this.state.sending = false;
        }
    }
}
