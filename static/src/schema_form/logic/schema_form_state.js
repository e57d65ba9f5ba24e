/** @odoo-module */
/**
 * The state of a schema form, as plain data: what its inputs hold, the edits the widget makes, and
 * the value collected from it.
 *
 * The form accepts exactly the values the schema accepts:
 *   - sound:    whatever `collect` returns without errors is valid under the schema (every value
 *               it returns is checked with json_schema.js's `validate`);
 *   - complete: every value the schema accepts can be entered: `stateFromValue` then `collect`
 *               gives that same value back, with no errors.
 *
 *   stateFromValue(desc, value)      -> editable state tree (what the inputs hold), value may be absent
 *   initialFormState(desc, options)  -> the state of a fresh form (options.fillDefaults: every default)
 *   collect(desc, state)             -> { value, present, errors }  (errors: [{ path, code, params }])
 * where `desc` is a descriptor tree of schema_fields.js's `compileSchema`.
 */
import {hasOwn, isPlainObject, jsonEqual, NUMBER_RE, setOwn, validate} from "./json_schema.js";

// -- state: what the inputs hold ------------------------------------------------------------------

/**
 * The editable state of a descriptor for `value` (undefined: the key is absent).
 * Every node has `present` (the key is sent) and `isNull`; then by kind:
 *   string, number, integer, json: raw (the text in the input)
 *   boolean: checked (true, false, or undefined: not chosen)
 *   enum: index (into desc.options, -1: not chosen)
 *   object: fields ({ key: state }), extraRaw (JSON text of other properties)
 *   array: items ([state])
 * `foreign` holds a loaded value of the wrong type for the field, kept (and reported) until the
 * user edits the field.
 */
export function stateFromValue(desc, value) {
    const state = {present: value !== undefined, isNull: false};
    if (value === undefined) {
        return fillEmpty(desc, state);
    }
    if (value === null && desc.nullable) {
        state.isNull = true;
        return fillEmpty(desc, state);
    }
    if (value === null && !desc.required && validate(desc.schema, null, desc.root).length) {
        // a null for an optional field that does not allow one means "not given", as the server
        // side reads it before a call (tool_runner.without_null_optionals)
        state.present = false;
        return fillEmpty(desc, state);
    }
    switch (desc.kind) {
        case "string":
            if (typeof value !== "string") {
                return foreign(desc, state, value);
            }
            state.raw = value;
            return state;
        case "number":
        case "integer":
            if (
                typeof value !== "number" ||
                (desc.kind === "integer" && !Number.isInteger(value))
            ) {
                return foreign(desc, state, value);
            }
            state.raw = formatNumber(value);
            return state;
        case "boolean":
            if (typeof value !== "boolean") {
                return foreign(desc, state, value);
            }
            state.checked = value;
            return state;
        case "enum": {
            const index = desc.options.findIndex((o) => jsonEqual(o.value, value));
            if (index < 0) {
                return foreign(desc, state, value);
            }
            state.index = index;
            return state;
        }
        case "object": {
            if (!isPlainObject(value)) {
                return foreign(desc, state, value);
            }
            state.fields = {};
            for (const field of desc.fields) {
                setOwn(
                    state.fields,
                    field.key,
                    stateFromValue(field, hasOwn(value, field.key) ? value[field.key] : undefined)
                );
            }
            const extra = {};
            for (const key of Object.keys(value)) {
                if (!desc.fields.some((f) => f.key === key)) {
                    setOwn(extra, key, value[key]);
                }
            }
            state.extraRaw = Object.keys(extra).length ? JSON.stringify(extra, null, 2) : "";
            return state;
        }
        case "array":
            if (!Array.isArray(value)) {
                return foreign(desc, state, value);
            }
            state.items = value.map((item) => stateFromValue(desc.item, item));
            return state;
        default:
            state.raw = JSON.stringify(value, null, 2);
            return state;
    }
}

function foreign(desc, state, value) {
    fillEmpty(desc, state);
    state.foreign = {value};
    return state;
}

function fillEmpty(desc, state, options = {}) {
    switch (desc.kind) {
        case "boolean":
            state.checked = desc.required ? false : undefined;
            break;
        case "enum":
            state.index = -1;
            break;
        case "object":
            state.fields = {};
            for (const field of desc.fields) {
                setOwn(state.fields, field.key, initialFormState(field, options));
            }
            state.extraRaw = "";
            break;
        case "array":
            state.items = [];
            break;
        default:
            state.raw = "";
    }
    return state;
}

/**
 * The state of a fresh form.
 *
 * Without options (a tool's arguments in the Try wizard, a prompt's arguments): a required field
 * starts with its default, if any; an optional one starts empty, shows its default as a hint and is
 * not sent unless the user sets it, since a server applies its own default to an argument left out.
 *
 * `{ fillDefaults: true }` (only the answer to a server's question, MCP elicitation, where the client
 * is to apply each field's default): every field whose schema has a default starts filled with it
 * and is sent as it is, optional fields too; the user may still clear an optional one. A default the
 * field's own schema refuses (wrong type, not among the choices, out of range) is not filled in: it
 * stays a hint.
 */
export function initialFormState(desc, options = {}) {
    if (desc.hasDefault && (desc.required || options.fillDefaults)) {
        const state = defaultState(desc, Boolean(options.fillDefaults));
        if (state) {
            return state;
        }
    }
    const state = fillEmpty(desc, {present: false, isNull: false}, options);
    if (desc.kind === "object" && desc.required) {
        state.present = true;
    }
    return state;
}

/** The state holding the field's default, or undefined when the field cannot hold it (or, when
 * `checked`, its schema refuses it). */
function defaultState(desc, checked) {
    if (checked && validate(desc.schema, desc.default, desc.root).length) {
        return undefined;
    }
    const state = stateFromValue(desc, desc.default);
    return state.foreign ? undefined : state;
}

/** A new array item's state (an item is always sent). */
export function newItemState(arrayDesc) {
    const state = initialFormState({...arrayDesc.item, required: true});
    state.present = true;
    return state;
}

export function formatNumber(value) {
    return Object.is(value, -0) ? "0" : String(value);
}

/** Parse what a user typed in a number input: a JSON-style number, finite. */
export function parseNumber(raw) {
    const text = String(raw).trim();
    if (!NUMBER_RE.test(text)) {
        return undefined;
    }
    const value = Number(text);
    return Number.isFinite(value) ? value : undefined;
}

// -- state edits, as the widget makes them ---------------------------------------------------------

/** A text input changed: an optional field left empty is no longer sent. */
export function setRaw(desc, state, raw) {
    state.raw = raw;
    state.present = desc.required || raw !== "";
    state.isNull = false;
    delete state.foreign;
}

export function setChecked(desc, state, checked) {
    state.checked = checked;
    state.present = desc.required || checked !== undefined;
    state.isNull = false;
    delete state.foreign;
}

export function setIndex(desc, state, index) {
    state.index = index;
    state.present = desc.required || index >= 0;
    state.isNull = false;
    delete state.foreign;
}

export function setNull(desc, state, isNull) {
    state.isNull = Boolean(isNull) && desc.nullable;
    if (state.isNull) {
        state.present = true;
    } else {
        state.present = desc.required || hasContent(desc, state);
    }
    delete state.foreign;
}

/** Send or stop sending an optional object or array. */
export function setPresent(desc, state, present) {
    state.present = desc.required || Boolean(present);
    if (!state.present) {
        state.isNull = false;
    }
    delete state.foreign;
}

export function setExtraRaw(desc, state, raw) {
    state.extraRaw = raw;
    state.present = true;
    delete state.foreign;
}

export function addItem(desc, state) {
    state.items.push(newItemState(desc));
    state.present = true;
    state.isNull = false;
    delete state.foreign;
}

export function removeItem(desc, state, index) {
    state.items.splice(index, 1);
    delete state.foreign;
}

export function moveItem(desc, state, index, delta) {
    const target = index + delta;
    if (target < 0 || target >= state.items.length) {
        return;
    }
    const [item] = state.items.splice(index, 1);
    state.items.splice(target, 0, item);
}

/**
 * An input at `path` changed: every optional object or array on the way to it is sent from now on
 * (typing in a field of an optional object means the object is wanted).
 */
export function touchPath(rootDesc, rootState, path) {
    let desc = rootDesc;
    let state = rootState;
    for (const step of path) {
        if (!state || !desc) {
            return;
        }
        if (!state.isNull) {
            state.present = true;
        }
        delete state.foreign;
        if (desc.kind === "object") {
            const next = desc.fields.find((f) => f.key === step);
            state = state.fields?.[step];
            desc = next;
        } else if (desc.kind === "array") {
            state = state.items?.[step];
            desc = desc.item;
        } else {
            return;
        }
    }
}

function hasContent(desc, state) {
    switch (desc.kind) {
        case "boolean":
            return state.checked !== undefined;
        case "enum":
            return state.index >= 0;
        case "object":
        case "array":
            return state.present;
        default:
            return state.raw !== "";
    }
}

// -- collecting the value --------------------------------------------------------------------------

/**
 * The JSON value the state stands for: { present, value, errors }. With errors the value is not to
 * be used (it is undefined where a field could not be read). Every value read is validated against
 * its own schema, so an error-free result is valid under the whole schema.
 */
export function collect(desc, state, path = []) {
    const errors = [];
    const result = read(desc, state, path, errors);
    const seen = new Set();
    const unique = errors.filter((e) => {
        const key = `${JSON.stringify(e.path)}|${e.code}|${JSON.stringify(e.params)}`;
        if (seen.has(key)) {
            return false;
        }
        seen.add(key);
        return true;
    });
    return {
        present: result.present,
        value: unique.length ? undefined : result.value,
        errors: unique,
        partial: result.value,
    };
}

function read(desc, state, path, errors) {
    const before = errors.length;
    const push = (code, params = {}, at = path) => errors.push({path: at, code, params});
    if (!state) {
        state = initialFormState(desc);
    }
    if (!state.present && !desc.required) {
        return {present: false};
    }
    if (state.foreign) {
        push("type", {expected: expectedTypes(desc), value: state.foreign.value});
        return {present: true};
    }
    const field = {path, errors, push};
    const got = state.isNull && desc.nullable ? {value: null} : readKind(desc, state, field);
    if (got.stopped) {
        return {present: got.present};
    }
    if (errors.length === before) {
        // the field's own constraints; its children were checked against theirs already
        for (const error of validate(desc.schema, got.value, desc.root, path)) {
            errors.push(error);
        }
    }
    return {present: true, value: got.value};
}

// Each kind's reader gives { value }, or a result that stops the reading of the field there:
// { stopped, present } (present: the key is sent, with an error already pushed if it is wrong).

function unreadable() {
    return {stopped: true, present: true};
}

// an empty input: the field is left out, unless the schema requires it
function missing(desc, {push}) {
    if (desc.required) {
        push("required");
        return unreadable();
    }
    return {stopped: true, present: false};
}

function readString(desc, state) {
    return {value: state.raw ?? ""};
}

function readNumber(desc, state, field) {
    const text = String(state.raw ?? "").trim();
    if (text === "") {
        return missing(desc, field);
    }
    const value = parseNumber(text);
    if (value === undefined) {
        field.push("number");
        return unreadable();
    }
    if (desc.kind === "integer" && !Number.isInteger(value)) {
        field.push("integer");
        return unreadable();
    }
    return {value};
}

function readBoolean(desc, state, field) {
    if (state.checked === undefined) {
        return missing(desc, field);
    }
    return {value: Boolean(state.checked)};
}

function readEnum(desc, state, field) {
    if (!(state.index >= 0 && state.index < desc.options.length)) {
        return missing(desc, field);
    }
    return {value: desc.options[state.index].value};
}

function readObject(desc, state, field) {
    const value = {};
    for (const sub of desc.fields) {
        const got = read(
            sub,
            state.fields && hasOwn(state.fields, sub.key) ? state.fields[sub.key] : undefined,
            [...field.path, sub.key],
            field.errors
        );
        if (got.present && got.value !== undefined) {
            setOwn(value, sub.key, got.value);
        }
    }
    addExtraProperties(desc, state, value, field);
    return {value};
}

// the properties the schema does not name, typed as a JSON object in a box of their own
function addExtraProperties(desc, state, value, {path, push}) {
    const extraText = String(state.extraRaw ?? "").trim();
    if (!extraText) {
        return;
    }
    let extra;
    try {
        extra = JSON.parse(extraText);
    } catch (e) {
        push("json", {message: e.message}, [...path, "*"]);
        return;
    }
    if (!isPlainObject(extra)) {
        push("object", {}, [...path, "*"]);
        return;
    }
    for (const [key, item] of Object.entries(extra)) {
        if (desc.fields.some((f) => f.key === key)) {
            push("duplicate", {property: key}, [...path, "*"]);
        } else {
            setOwn(value, key, item);
        }
    }
}

function readArray(desc, state, field) {
    return {
        value: (state.items || []).map(
            (item, i) => read(desc.item, item, [...field.path, i], field.errors).value
        ),
    };
}

// any other schema: the JSON text of the value
function readJson(desc, state, field) {
    const text = String(state.raw ?? "").trim();
    if (text === "") {
        return missing(desc, field);
    }
    try {
        return {value: JSON.parse(text)};
    } catch (e) {
        field.push("json", {message: e.message});
        return unreadable();
    }
}

const READERS = {
    string: readString,
    number: readNumber,
    integer: readNumber,
    boolean: readBoolean,
    enum: readEnum,
    object: readObject,
    array: readArray,
};

function readKind(desc, state, field) {
    const reader = hasOwn(READERS, desc.kind) ? READERS[desc.kind] : readJson;
    return reader(desc, state, field);
}

function expectedTypes(desc) {
    const base = desc.kind === "enum" ? "enum" : desc.kind === "json" ? "json" : desc.kind;
    return desc.nullable ? [base, "null"] : [base];
}

/**
 * The path keys of the inputs a form shows for this state (objects that are sent show their
 * fields, arrays their items); an error at any other path has no input of its own to sit by.
 */
export function fieldPaths(desc, state, path = [], out = new Set()) {
    out.add(pathKey(path));
    if (!state || state.isNull || state.foreign || (!state.present && !desc.required)) {
        return out;
    }
    if (desc.kind === "object") {
        for (const field of desc.fields) {
            fieldPaths(field, state.fields?.[field.key], [...path, field.key], out);
        }
        out.add(pathKey([...path, "*"]));
    } else if (desc.kind === "array") {
        (state.items || []).forEach((item, i) => fieldPaths(desc.item, item, [...path, i], out));
    }
    return out;
}

/** Errors grouped by field: { "a/0/b": [error...] } ("" for the root, "a/*" for extra properties). */
export function errorsByPath(errors) {
    const grouped = {};
    for (const error of errors) {
        const key = pathKey(error.path);
        (grouped[key] ||= []).push(error);
    }
    return grouped;
}

export function pathKey(path) {
    return path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
}

/** Parse the arguments JSON kept in the record: an object, or undefined when it is not one. */
export function parseArguments(text) {
    if (text === undefined || text === null || text === false || String(text).trim() === "") {
        return {};
    }
    try {
        return JSON.parse(text);
    } catch {
        return undefined;
    }
}

export function toJsonText(value) {
    return JSON.stringify(value === undefined ? {} : value, null, 2);
}
