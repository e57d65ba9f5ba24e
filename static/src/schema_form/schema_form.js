/** @odoo-module */
/**
 * `schema_form`: a field widget for a Text field holding a JSON object (a tool's arguments). It
 * renders a form from a JSON Schema kept in another field of the record (option `schema_field`)
 * and writes the JSON back only when every input is valid; while one is not, the error shows
 * next to it, the JSON keeps its last valid value and the field named by option `error_field`
 * (if any) holds a summary, so that the server refuses to use stale arguments.
 *
 *   <field name="input_schema" invisible="1"/>
 *   <field name="arguments_error" invisible="1"/>
 *   <field name="arguments" widget="schema_form"
 *          options="{'schema_field': 'input_schema', 'error_field': 'arguments_error'}"/>
 *
 * The logic lives in ../logic/ (json_schema.js, schema_fields.js, schema_form_state.js, tested
 * with node); this file is the view.
 */
import {Component, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";
import {registry} from "@web/core/registry";
import {useRecordObserver} from "@web/model/relational_model/utils";
import {standardFieldProps} from "@web/views/fields/standard_field_props";

import {isPlainObject} from "./logic/json_schema";
import {compileSchema} from "./logic/schema_fields";
import {
    addItem,
    collect,
    errorsByPath,
    fieldPaths,
    initialFormState,
    moveItem,
    parseArguments,
    pathKey,
    removeItem,
    setChecked,
    setExtraRaw,
    setIndex,
    setNull,
    setPresent,
    setRaw,
    stateFromValue,
    toJsonText,
    touchPath,
} from "./logic/schema_form_state";
import {SuggestionList} from "./suggestion_list";

const TYPE_NAMES = {
    string: () => _t("text"),
    number: () => _t("a number"),
    integer: () => _t("a whole number"),
    boolean: () => _t("true or false"),
    object: () => _t("an object"),
    array: () => _t("a list"),
    null: () => _t("null"),
    enum: () => _t("one of the choices"),
    json: () => _t("JSON"),
};

function typeList(types) {
    return (types || []).map((t) => (TYPE_NAMES[t] ? TYPE_NAMES[t]() : t)).join(" / ");
}

function shortJson(value) {
    const text = JSON.stringify(value);
    return text && text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The translated message of an error of the schema form (json_schema.js codes). */
export function errorMessage(error) {
    const p = error.params || {};
    switch (error.code) {
        case "required":
            return _t("Required");
        case "type":
            return "value" in p
                ? _t("Expected %(expected)s, got %(value)s", {
                      expected: typeList(p.expected),
                      value: shortJson(p.value),
                  })
                : _t("Expected %s", typeList(p.expected));
        case "number":
            return _t("Enter a number, e.g. 3 or 2.5");
        case "integer":
            return _t("Enter a whole number");
        case "json":
            return _t("Invalid JSON: %s", p.message || "");
        case "object":
            return _t('Enter a JSON object, e.g. {"key": "value"}');
        case "duplicate":
            return _t("“%s” has its own input: set it there", p.property);
        case "enum":
            return _t("Choose one of: %s", (p.values || []).map(shortJson).join(", "));
        case "const":
            return _t("Must be %s", shortJson(p.value));
        case "false":
            return _t("No value is allowed here");
        case "minLength":
            return _t("At least %s characters", p.limit);
        case "maxLength":
            return _t("At most %s characters", p.limit);
        case "pattern":
            return _t("Must match the pattern %s", p.pattern);
        case "minimum":
            return _t("Must be at least %s", p.limit);
        case "maximum":
            return _t("Must be at most %s", p.limit);
        case "exclusiveMinimum":
            return _t("Must be greater than %s", p.limit);
        case "exclusiveMaximum":
            return _t("Must be less than %s", p.limit);
        case "multipleOf":
            return _t("Must be a multiple of %s", p.limit);
        case "minItems":
            return _t("At least %s items", p.limit);
        case "maxItems":
            return _t("At most %s items", p.limit);
        case "uniqueItems":
            return _t("Items must all be different");
        case "contains":
        case "minContains":
            return _t("Needs at least %s matching items", p.limit);
        case "maxContains":
            return _t("At most %s matching items", p.limit);
        case "additionalProperties":
            return _t("“%s” is not an accepted property", p.property);
        case "minProperties":
            return _t("At least %s properties", p.limit);
        case "maxProperties":
            return _t("At most %s properties", p.limit);
        case "propertyNames":
            return _t("The property name “%s” is not accepted", p.property);
        case "dependentRequired":
            return _t("Required when “%s” is set", p.because);
        case "anyOf":
            return _t("Does not match any accepted form");
        case "oneOf":
            return _t("Must match exactly one accepted form (matches %s)", p.matches ?? 0);
        case "not":
            return _t("This value is not accepted");
        case "if":
            return _t("Does not meet a condition of the schema");
        case "ref":
            return _t("The schema refers to %s, which it does not define", p.ref || "");
        default:
            return error.code;
    }
}

/** One input (and, for objects and arrays, the inputs inside it). */
export class SchemaFormNode extends Component {
    static template = "ai_mcp.SchemaFormNode";
    static props = {
        desc: Object,
        node: Object,
        path: Array,
        errors: Object,
        readonly: Boolean,
        idPrefix: String,
        onChange: Function,
        label: {type: String, optional: true},
        onRemove: {type: Function, optional: true},
        onMove: {type: Function, optional: true},
        // the server's suggestions for the form's top-level texts (composer/logic/field_completer.js)
        completer: {type: Object, optional: true},
    };

    get key() {
        return pathKey(this.props.path);
    }
    get inputId() {
        return `${this.props.idPrefix}_${this.key.replace(/[^\w-]/g, "_") || "root"}`;
    }
    get label() {
        return this.props.label ?? this.props.desc.label;
    }
    get myErrors() {
        return (this.props.errors[this.key] || []).map(errorMessage);
    }
    get extraErrors() {
        return (this.props.errors[pathKey([...this.props.path, "*"])] || []).map(errorMessage);
    }
    get open() {
        const {desc, node} = this.props;
        return (desc.required || node.present) && !node.isNull && !node.foreign;
    }
    get isRoot() {
        return this.props.path.length === 0;
    }
    get placeholder() {
        const desc = this.props.desc;
        if (desc.hasDefault && desc.default !== null && desc.default !== undefined) {
            return _t(
                "Default: %s",
                typeof desc.default === "string" ? desc.default : JSON.stringify(desc.default)
            );
        }
        if (desc.kind === "json") {
            return _t("JSON value, e.g. %s", '"text", 12, [1, 2] or {"key": "value"}');
        }
        return desc.required ? "" : _t("Not set");
    }
    get typeHint() {
        const desc = this.props.desc;
        const schema = isPlainObject(desc.schema) ? desc.schema : {};
        const hints = [];
        if (desc.kind === "integer") {
            hints.push(_t("whole number"));
        } else if (desc.kind === "number") {
            hints.push(_t("number"));
        } else if (desc.kind === "json") {
            hints.push(_t("JSON"));
        }
        if (typeof schema.format === "string") {
            hints.push(schema.format);
        }
        return hints.join(", ");
    }
    get foreignText() {
        return this.props.node.foreign ? JSON.stringify(this.props.node.foreign.value) : "";
    }

    changed() {
        this.props.onChange(this.props.path);
    }
    get suggests() {
        return Boolean(this.props.completer?.enabled) && this.props.path.length === 1;
    }
    onInput(ev) {
        setRaw(this.props.desc, this.props.node, ev.target.value);
        this.changed();
        if (this.suggests) {
            this.props.completer.typed(String(this.props.path[0]), ev.target.value);
        }
    }
    onSuggestKeydown(ev) {
        const {handled, value} = this.props.completer.keydown(String(this.props.path[0]), ev.key);
        if (handled) {
            ev.preventDefault();
            ev.stopPropagation();
        }
        if (value !== undefined) {
            this.choose(value);
        }
    }
    onSuggestionPick(index) {
        const value = this.props.completer.pick(index);
        if (value !== undefined) {
            this.choose(value);
        }
    }
    choose(value) {
        setRaw(this.props.desc, this.props.node, value);
        this.changed();
    }
    onCheckbox(ev) {
        setChecked(this.props.desc, this.props.node, ev.target.checked);
        this.changed();
    }
    onBooleanSelect(ev) {
        const value = ev.target.value;
        setChecked(this.props.desc, this.props.node, value === "" ? undefined : value === "true");
        this.changed();
    }
    onEnumSelect(ev) {
        setIndex(
            this.props.desc,
            this.props.node,
            ev.target.value === "" ? -1 : Number(ev.target.value)
        );
        this.changed();
    }
    onNull(ev) {
        setNull(this.props.desc, this.props.node, ev.target.checked);
        this.props.onChange(this.props.path.slice(0, -1));
    }
    onPresent(ev) {
        setPresent(this.props.desc, this.props.node, ev.target.checked);
        // switching an input off must not switch its parents on
        this.props.onChange(
            this.props.node.present ? this.props.path : this.props.path.slice(0, -1)
        );
    }
    onExtra(ev) {
        setExtraRaw(this.props.desc, this.props.node, ev.target.value);
        this.changed();
    }
    onClearForeign() {
        const fresh = initialFormState(this.props.desc);
        Object.assign(this.props.node, fresh, {present: this.props.desc.required});
        delete this.props.node.foreign;
        this.props.onChange(this.props.path.slice(0, -1));
    }
    addItem() {
        addItem(this.props.desc, this.props.node);
        this.changed();
    }
    removeItem(index) {
        removeItem(this.props.desc, this.props.node, index);
        this.changed();
    }
    moveItem(index, delta) {
        moveItem(this.props.desc, this.props.node, index, delta);
        this.changed();
    }
    itemLabel(index) {
        return _t("Item %s", index + 1);
    }
}
SchemaFormNode.components = {SchemaFormNode, SuggestionList};

export class SchemaFormField extends Component {
    static template = "ai_mcp.SchemaFormField";
    static components = {SchemaFormNode};
    static props = {
        ...standardFieldProps,
        schemaField: {type: String},
        errorField: {type: String, optional: true},
    };

    setup() {
        this.state = useState({
            desc: null,
            root: null,
            errors: {},
            orphans: [],
            allErrors: [],
            jsonMode: false,
            jsonText: "",
            jsonError: "",
        });
        this.schemaText = undefined;
        this.lastText = undefined;
        this.idPrefix = `o_schema_form_${this.props.id || this.props.name}`;
        useRecordObserver((record) => this.sync(record));
    }

    /** Follow the record: a new schema rebuilds the form, a value changed elsewhere reloads it. */
    sync(record) {
        const schemaText = record.data[this.props.schemaField] || "";
        const text = record.data[this.props.name] || "";
        if (schemaText === this.schemaText && text === this.lastText) {
            return;
        }
        if (schemaText !== this.schemaText) {
            this.schemaText = schemaText;
            let schema;
            try {
                schema = schemaText ? JSON.parse(schemaText) : {type: "object"};
            } catch {
                schema = {type: "object"};
            }
            this.state.desc = compileSchema(schema);
        }
        this.lastText = text;
        const value = parseArguments(text);
        this.state.root =
            value === undefined
                ? initialFormState(this.state.desc)
                : stateFromValue(this.state.desc, value);
        this.state.jsonText = text || "{}";
        this.state.jsonError = "";
        this.refreshErrors();
    }

    refreshErrors() {
        const result = collect(this.state.desc, this.state.root);
        const shown = fieldPaths(this.state.desc, this.state.root);
        this.state.errors = errorsByPath(result.errors);
        const describe = (e) => `${e.path.join(".") || _t("arguments")}: ${errorMessage(e)}`;
        this.state.orphans = result.errors.filter((e) => !shown.has(pathKey(e.path))).map(describe);
        this.state.allErrors = result.errors.map(describe);
        return result;
    }

    /** An input changed at `path`: recompute, and write the JSON when every input is valid. */
    onChange(path) {
        touchPath(this.state.desc, this.state.root, path);
        const result = this.refreshErrors();
        const changes = {};
        if (result.errors.length === 0) {
            const text = toJsonText(result.value === undefined ? {} : result.value);
            this.state.jsonText = text;
            if (text !== (this.props.record.data[this.props.name] || "")) {
                this.lastText = text;
                changes[this.props.name] = text;
            }
            if (this.props.errorField && this.props.record.data[this.props.errorField]) {
                changes[this.props.errorField] = false;
            }
        } else if (this.props.errorField) {
            const first = result.errors[0];
            const where = first.path.join(".") || _t("arguments");
            const summary = _t("%(count)s invalid input(s); first: %(where)s: %(message)s", {
                count: result.errors.length,
                where,
                message: errorMessage(first),
            });
            if (summary !== this.props.record.data[this.props.errorField]) {
                changes[this.props.errorField] = summary;
            }
        }
        if (Object.keys(changes).length) {
            this.props.record.update(changes);
        }
    }

    toggleJsonMode() {
        this.state.jsonMode = !this.state.jsonMode;
        this.state.jsonError = "";
        if (this.state.jsonMode) {
            const result = collect(this.state.desc, this.state.root);
            this.state.jsonText = toJsonText(result.partial === undefined ? {} : result.partial);
        } else {
            // back to the inputs: what they hold decides again (a JSON typo must not linger)
            this.onChange([]);
        }
    }

    onJsonInput(ev) {
        this.state.jsonText = ev.target.value;
        // an emptied editor is a paste about to happen, not a wish to clear every input
        const value = ev.target.value.trim() ? parseArguments(ev.target.value) : undefined;
        if (value === undefined || !isPlainObject(value)) {
            this.state.jsonError = _t('Enter a JSON object, e.g. {"key": "value"}');
            if (this.props.errorField) {
                this.props.record.update({[this.props.errorField]: this.state.jsonError});
            }
            return;
        }
        this.state.jsonError = "";
        this.state.root = stateFromValue(this.state.desc, value);
        this.onChange([]);
    }

    get readonlyText() {
        return this.props.record.data[this.props.name] || "{}";
    }
}

export const schemaFormField = {
    component: SchemaFormField,
    displayName: _t("Form from a JSON schema"),
    supportedTypes: ["text"],
    supportedOptions: [
        {label: _t("Schema field"), name: "schema_field", type: "string"},
        {label: _t("Error field"), name: "error_field", type: "string"},
    ],
    extractProps: ({options}) => ({
        schemaField: options.schema_field || "input_schema",
        errorField: options.error_field || undefined,
    }),
    // the schema and the error summary are read and written even when the view does not list them
    fieldDependencies: ({options}) => {
        const deps = [{name: options.schema_field || "input_schema", type: "text", readonly: true}];
        if (options.error_field) {
            deps.push({name: options.error_field, type: "char", readonly: false});
        }
        return deps;
    },
};

registry.category("fields").add("schema_form", schemaFormField);
