/** @odoo-module */
import {Component, onWillStart, onWillUnmount, reactive, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {FieldCompleter} from "@ai_mcp/composer/logic/field_completer";
import {pickerEntries, templateSchema} from "@ai_mcp/composer/logic/resource_attach";
import {SchemaFormNode, useSchemaForm} from "@ai_mcp/schema_form";

/**
 * Picks a resource of the conversation's servers to attach to the next message: a search over
 * their resources and templates; a template asks its values with the schema form, with its server's
 * suggestions as the user types when the server completes. `onAttach(read)`
 * receives /ai_mcp/resources/read's answer.
 */
export class ResourcePicker extends Component {
    static template = "ai_mcp.ResourcePicker";
    static components = {SchemaFormNode};
    static props = {source: Object, onAttach: Function, onClose: Function};

    setup() {
        this.state = useState({
            loading: true,
            servers: [],
            warnings: [],
            query: "",
            template: null,
            reading: false,
        });
        this.form = useSchemaForm(this.state);
        this.completer = null;
        onWillStart(() => this.load());
        onWillUnmount(() => this.completer?.close());
    }

    async load() {
        try {
            const result = await this.props.source.list();
            this.state.servers = result.servers || [];
            this.state.warnings = result.warnings || [];
        } catch {
            this.state.problems = [_t("The resources could not be listed; try again.")];
        }
        this.state.loading = false;
    }

    get entries() {
        return pickerEntries(this.state.servers, this.state.query);
    }

    pick(entry) {
        if (entry.kind === "template") {
            this.form.load(templateSchema(entry));
            this.completer?.close();
            this.completer = new FieldCompleter({
                ask: (variable, value, context) =>
                    this.props.source.complete(entry, variable, value, context),
                context: () => this.form.partial(),
                enabled: entry.completions,
                reactive,
            });
            this.state.template = entry;
            return;
        }
        this.read({server_id: entry.serverId, uri: entry.uri});
    }

    onChange(path) {
        this.form.onChange(path);
    }

    readTemplate() {
        const values = this.form.value();
        if (values === undefined) {
            return;
        }
        const template = this.state.template;
        this.read({
            server_id: template.serverId,
            template: template.uri_template,
            arguments: values,
        });
    }

    async read(ref) {
        this.state.reading = true;
        this.state.problems = [];
        try {
            const result = await this.props.source.read(ref);
            if (result.error) {
                this.state.problems = [result.error.message];
                return;
            }
            this.props.onAttach(result);
        } catch {
            this.state.problems = [_t("The resource could not be read; try again.")];
        } finally {
            this.state.reading = false;
        }
    }
}
