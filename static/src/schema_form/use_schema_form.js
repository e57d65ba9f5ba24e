/** @odoo-module */
import {compileSchema} from "@ai_mcp/schema_form/logic/schema_fields";
import {
    collect,
    errorsByPath,
    initialFormState,
    touchPath,
} from "@ai_mcp/schema_form/logic/schema_form_state";
import {errorMessage} from "./schema_form";

/**
 * The set-up every component that asks with a schema form shares (a prompt's arguments, a server's
 * question, a resource template's values), on the component's reactive `state`: `state.desc` (the
 * compiled schema), `state.root` (what the inputs hold), `state.errors` (by field) and
 * `state.problems` (the lines shown under the form), which its template hands to SchemaFormNode.
 *
 *   load(schema)      a fresh form for `schema` (`fillDefaults`: see initialFormState)
 *   onChange(path)    the form's onChange: marks the field touched and checks the form again
 *   value(rootLabel)  the form's value ({} when empty), or undefined with the problems shown
 *   partial()         what the valid inputs hold so far ({} when none), the problems not shown
 */
export function useSchemaForm(state, {fillDefaults = false} = {}) {
    Object.assign(state, {desc: null, root: null, errors: {}, problems: []});
    return {
        load(schema) {
            const desc = compileSchema(schema);
            Object.assign(state, {
                desc,
                root: initialFormState(desc, {fillDefaults}),
                errors: {},
                problems: [],
            });
        },
        onChange(path) {
            touchPath(state.desc, state.root, path);
            state.errors = errorsByPath(collect(state.desc, state.root).errors);
        },
        value(rootLabel = "") {
            const result = collect(state.desc, state.root);
            state.errors = errorsByPath(result.errors);
            if (result.errors.length) {
                state.problems = result.errors.map(
                    (e) => `${e.path.join(".") || rootLabel}: ${errorMessage(e)}`
                );
                return undefined;
            }
            return result.value ?? {};
        },
        partial() {
            return collect(state.desc, state.root).partial ?? {};
        },
    };
}
