/** @odoo-module */
/**
 * A form generated from a JSON Schema (a tool's input schema), as plain data: no Odoo, no DOM.
 *
 * The contract (seed 001, property 4): the form accepts exactly the values the schema accepts.
 *   - sound:    whatever `collect` returns without errors is valid under the schema (every value
 *               it returns is checked with `validate`, a JSON Schema 2020-12 validator);
 *   - complete: every value the schema accepts can be entered: `stateFromValue` then `collect`
 *               gives that same value back, with no errors.
 * Parts of a schema a form cannot show well (anyOf of several types, tuples, schemas with no type)
 * become a "json" field: a small JSON editor whose value is still validated against its schema.
 *
 *   compileSchema(schema)          -> descriptor tree (what to render)
 *   stateFromValue(desc, value)    -> editable state tree (what the inputs hold), value may be absent
 *   initialState(desc, options)    -> the state of a fresh form (options.fillDefaults: every default)
 *   collect(desc, state)           -> { value, present, errors }  (errors: [{ path, code, params }])
 *   validate(schema, value)        -> errors, the validator used by collect
 *
 * Error codes (the widget turns them into translated messages): required, type, number, integer,
 * json, enum, const, false, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
 * exclusiveMaximum, multipleOf, minItems, maxItems, uniqueItems, contains, minContains,
 * maxContains, additionalProperties, minProperties, maxProperties, propertyNames,
 * dependentRequired, anyOf, oneOf, not, if, duplicate, ref, object.
 */

const MAX_DEPTH = 8;
const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

// -- helpers ---------------------------------------------------------------------------------------

export function isPlainObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** JSON equality: key order does not matter, 1 and 1.0 are equal, true and 1 are not. */
export function jsonEqual(a, b) {
    if (a === b) {
        return true;
    }
    if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
        return false;
    }
    if (Array.isArray(a) !== Array.isArray(b)) {
        return false;
    }
    if (Array.isArray(a)) {
        return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
    }
    const keys = Object.keys(a);
    return (
        keys.length === Object.keys(b).length &&
        keys.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
}

function hasOwn(obj, key) {
    return Object.prototype.hasOwnProperty.call(obj, key);
}

/** obj[key] = value, also for a key such as "__proto__" that plain assignment would not store. */
function setOwn(obj, key, value) {
    Object.defineProperty(obj, key, {value, enumerable: true, writable: true, configurable: true});
}

function codePoints(text) {
    return [...text].length;
}

function jsonType(value) {
    if (value === null) {
        return "null";
    }
    if (Array.isArray(value)) {
        return "array";
    }
    if (typeof value === "number") {
        return Number.isInteger(value) ? "integer" : "number";
    }
    return typeof value; // string, boolean, object
}

function hasType(value, type) {
    const actual = jsonType(value);
    return actual === type || (type === "number" && actual === "integer");
}

function compileRegex(pattern) {
    try {
        return new RegExp(pattern, "u");
    } catch {
        try {
            return new RegExp(pattern);
        } catch {
            return null;
        }
    }
}

/** The schema a local "$ref" points to ("#", "#/$defs/x", "#/definitions/x"), or undefined. */
export function resolveRef(ref, root) {
    if (typeof ref !== "string" || !ref.startsWith("#")) {
        return undefined;
    }
    const pointer = decodeURIComponent(ref.slice(1));
    if (pointer === "") {
        return root;
    }
    if (!pointer.startsWith("/")) {
        return undefined;
    }
    let node = root;
    for (const raw of pointer.slice(1).split("/")) {
        const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
        if (node === null || typeof node !== "object" || !hasOwn(node, token)) {
            return undefined;
        }
        node = node[token];
    }
    return node;
}

// -- validation ------------------------------------------------------------------------------------

/**
 * Errors of `value` under `schema` (JSON Schema 2020-12, the keywords tools use; `format` is an
 * annotation, as in Python's jsonschema without a format checker). Each error is
 * { path: [key or index...], code, params }; a missing required property is reported at the
 * property's own path so a form can show it next to that field.
 */
export function validate(schema, value, root = schema, path = [], depth = 0) {
    const errors = [];
    check(schema, value, root, path, errors, depth);
    return errors;
}

function isValid(schema, value, root, depth) {
    const errors = [];
    check(schema, value, root, [], errors, depth);
    return errors.length === 0;
}

function check(schema, value, root, path, errors, depth) {
    if (schema === true || schema === undefined) {
        return;
    }
    if (schema === false) {
        errors.push({path, code: "false", params: {}});
        return;
    }
    if (!isPlainObject(schema)) {
        return;
    }
    if (depth > 64) {
        errors.push({path, code: "ref", params: {}});
        return;
    }
    const push = (code, params = {}, at = path) => errors.push({path: at, code, params});

    if (schema.$ref !== undefined) {
        const target = resolveRef(schema.$ref, root);
        if (target === undefined) {
            push("ref", {ref: schema.$ref});
        } else {
            check(target, value, root, path, errors, depth + 1);
        }
    }
    if (schema.type !== undefined) {
        const types = Array.isArray(schema.type) ? schema.type : [schema.type];
        if (!types.some((t) => hasType(value, t))) {
            push("type", {expected: types});
            return; // the other keywords would only repeat the problem
        }
    }
    if (
        schema.enum !== undefined &&
        Array.isArray(schema.enum) &&
        !schema.enum.some((v) => jsonEqual(v, value))
    ) {
        push("enum", {values: schema.enum});
    }
    if (hasOwn(schema, "const") && !jsonEqual(schema.const, value)) {
        push("const", {value: schema.const});
    }
    if (typeof value === "string") {
        checkString(schema, value, push);
    } else if (typeof value === "number") {
        checkNumber(schema, value, push);
    } else if (Array.isArray(value)) {
        checkArray(schema, value, root, path, errors, depth, push);
    } else if (isPlainObject(value)) {
        checkObject(schema, value, root, path, errors, depth, push);
    }
    checkCombinators(schema, value, root, path, errors, depth, push);
}

function checkString(schema, value, push) {
    if (typeof schema.minLength === "number" && codePoints(value) < schema.minLength) {
        push("minLength", {limit: schema.minLength});
    }
    if (typeof schema.maxLength === "number" && codePoints(value) > schema.maxLength) {
        push("maxLength", {limit: schema.maxLength});
    }
    if (typeof schema.pattern === "string") {
        const re = compileRegex(schema.pattern);
        if (re && !re.test(value)) {
            push("pattern", {pattern: schema.pattern});
        }
    }
}

function checkNumber(schema, value, push) {
    if (typeof schema.minimum === "number" && value < schema.minimum) {
        push("minimum", {limit: schema.minimum});
    }
    if (typeof schema.maximum === "number" && value > schema.maximum) {
        push("maximum", {limit: schema.maximum});
    }
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
        push("exclusiveMinimum", {limit: schema.exclusiveMinimum});
    }
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
        push("exclusiveMaximum", {limit: schema.exclusiveMaximum});
    }
    if (typeof schema.multipleOf === "number" && schema.multipleOf > 0) {
        // as Python's jsonschema: an exact remainder for a whole divisor (1e21 is no multiple of
        // 3, though 1e21 / 3 rounds to a whole float), the float quotient otherwise
        const m = schema.multipleOf;
        const quotient = value / m;
        const failed = Number.isInteger(m)
            ? value % m !== 0
            : !Number.isFinite(quotient) || !Number.isInteger(quotient);
        if (failed) {
            push("multipleOf", {limit: m});
        }
    }
}

function checkArray(schema, value, root, path, errors, depth, push) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
        push("minItems", {limit: schema.minItems});
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
        push("maxItems", {limit: schema.maxItems});
    }
    if (schema.uniqueItems === true) {
        const duplicate = value.some((item, i) =>
            value.slice(0, i).some((other) => jsonEqual(item, other))
        );
        if (duplicate) {
            push("uniqueItems");
        }
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, i) => {
        if (i < prefix.length) {
            check(prefix[i], item, root, [...path, i], errors, depth + 1);
        } else if (schema.items !== undefined && !Array.isArray(schema.items)) {
            check(schema.items, item, root, [...path, i], errors, depth + 1);
        }
    });
    if (schema.contains !== undefined) {
        const matches = value.filter((item) =>
            isValid(schema.contains, item, root, depth + 1)
        ).length;
        const min = typeof schema.minContains === "number" ? schema.minContains : 1;
        if (matches < min) {
            push(min === 1 && schema.minContains === undefined ? "contains" : "minContains", {
                limit: min,
            });
        }
        if (typeof schema.maxContains === "number" && matches > schema.maxContains) {
            push("maxContains", {limit: schema.maxContains});
        }
    }
}

function checkObject(schema, value, root, path, errors, depth, push) {
    const keys = Object.keys(value);
    const properties = isPlainObject(schema.properties) ? schema.properties : {};
    const patterns = isPlainObject(schema.patternProperties)
        ? Object.entries(schema.patternProperties).map(([p, s]) => [compileRegex(p), s])
        : [];
    if (Array.isArray(schema.required)) {
        for (const name of schema.required) {
            if (!hasOwn(value, name)) {
                push("required", {property: name}, [...path, name]);
            }
        }
    }
    if (typeof schema.minProperties === "number" && keys.length < schema.minProperties) {
        push("minProperties", {limit: schema.minProperties});
    }
    if (typeof schema.maxProperties === "number" && keys.length > schema.maxProperties) {
        push("maxProperties", {limit: schema.maxProperties});
    }
    for (const key of keys) {
        let evaluated = false;
        if (hasOwn(properties, key)) {
            evaluated = true;
            check(properties[key], value[key], root, [...path, key], errors, depth + 1);
        }
        for (const [re, sub] of patterns) {
            if (re && re.test(key)) {
                evaluated = true;
                check(sub, value[key], root, [...path, key], errors, depth + 1);
            }
        }
        if (!evaluated && schema.additionalProperties !== undefined) {
            if (schema.additionalProperties === false) {
                push("additionalProperties", {property: key}, [...path, key]);
            } else {
                check(
                    schema.additionalProperties,
                    value[key],
                    root,
                    [...path, key],
                    errors,
                    depth + 1
                );
            }
        }
        if (
            schema.propertyNames !== undefined &&
            !isValid(schema.propertyNames, key, root, depth + 1)
        ) {
            push("propertyNames", {property: key});
        }
    }
    if (isPlainObject(schema.dependentRequired)) {
        for (const [key, needed] of Object.entries(schema.dependentRequired)) {
            if (hasOwn(value, key) && Array.isArray(needed)) {
                for (const name of needed) {
                    if (!hasOwn(value, name)) {
                        push("dependentRequired", {property: name, because: key}, [...path, name]);
                    }
                }
            }
        }
    }
    if (isPlainObject(schema.dependentSchemas)) {
        for (const [key, sub] of Object.entries(schema.dependentSchemas)) {
            if (hasOwn(value, key)) {
                check(sub, value, root, path, errors, depth + 1);
            }
        }
    }
}

function checkCombinators(schema, value, root, path, errors, depth, push) {
    if (Array.isArray(schema.allOf)) {
        for (const sub of schema.allOf) {
            check(sub, value, root, path, errors, depth + 1);
        }
    }
    if (
        Array.isArray(schema.anyOf) &&
        !schema.anyOf.some((sub) => isValid(sub, value, root, depth + 1))
    ) {
        push("anyOf");
    }
    if (Array.isArray(schema.oneOf)) {
        const matches = schema.oneOf.filter((sub) => isValid(sub, value, root, depth + 1)).length;
        if (matches !== 1) {
            push("oneOf", {matches});
        }
    }
    if (schema.not !== undefined && isValid(schema.not, value, root, depth + 1)) {
        push("not");
    }
    if (schema.if !== undefined) {
        const branch = isValid(schema.if, value, root, depth + 1) ? schema.then : schema.else;
        if (branch !== undefined) {
            check(branch, value, root, path, errors, depth + 1);
        }
    }
}

// -- compiling a schema into field descriptors ----------------------------------------------------

const COMBINATORS = ["allOf", "anyOf", "oneOf", "not", "if", "prefixItems"];

/**
 * The descriptor tree of a schema. A descriptor:
 *   { kind, key, label, description, required, nullable, schema, root, default, hasDefault,
 *     options (enum: [{ label, value }]), fields (object), item (array), extra (object: offer a
 *     JSON editor for properties the schema does not name), multiline (string), placeholder }
 * kind is one of string, number, integer, boolean, enum, object, array, json.
 */
export function compileSchema(schema) {
    const root = schema === undefined || schema === null ? {} : schema;
    return compile(root, {root, key: null, required: true, depth: 0, refs: []});
}

function compile(schema, ctx) {
    const desc = {
        key: ctx.key,
        required: ctx.required,
        schema,
        root: ctx.root,
        nullable: false,
        label: ctx.key === null ? "" : String(ctx.key),
        description: "",
        hasDefault: false,
        default: undefined,
    };
    if (!isPlainObject(schema)) {
        return {...desc, kind: "json"}; // true, false or nonsense: the validator has the last word
    }
    let effective = schema;
    const refs = [...ctx.refs];
    // follow plain $refs (a $ref with no siblings but annotations) to show the target's fields
    while (isPlainObject(effective) && typeof effective.$ref === "string") {
        const target = resolveRef(effective.$ref, ctx.root);
        if (!isPlainObject(target) || refs.includes(effective.$ref) || refs.length > MAX_DEPTH) {
            return {...desc, ...annotations(schema), kind: "json"};
        }
        refs.push(effective.$ref);
        const {$ref, ...rest} = effective;
        if (Object.keys(rest).some((k) => !ANNOTATIONS.has(k))) {
            return {...desc, ...annotations(schema), kind: "json"}; // $ref plus constraints
        }
        effective = {...target, ...rest};
    }
    Object.assign(desc, annotations(effective));
    if (ctx.depth > MAX_DEPTH) {
        return {...desc, kind: "json"};
    }

    // T | null, as type: [T, "null"] or pydantic's anyOf: [{...T}, {type: null}]
    let base = effective;
    if (Array.isArray(effective.type)) {
        const types = [...new Set(effective.type)];
        const others = types.filter((t) => t !== "null");
        if (others.length === 1) {
            desc.nullable = types.includes("null");
            base = {...effective, type: others[0]};
        } else if (others.length === 0) {
            base = {...effective, type: "null"};
        } else {
            return {...desc, kind: "json"};
        }
    } else if (Array.isArray(effective.anyOf) || Array.isArray(effective.oneOf)) {
        const alternatives = effective.anyOf || effective.oneOf;
        const oneKind = !(effective.anyOf && effective.oneOf);
        // a titled choice (MCP elicitation's titled enums): [{const, title}, ...]
        const titled = oneKind && titledOptions(alternatives);
        if (titled) {
            return {...desc, kind: "enum", options: titled};
        }
        const other = alternatives.filter((s) => !isNullSchema(s));
        if (alternatives.length === 2 && other.length === 1 && oneKind) {
            const {anyOf, oneOf, ...rest} = effective;
            const inner = compile(other[0], {...ctx, refs});
            const outer = Object.keys(rest).filter((k) => !ANNOTATIONS.has(k));
            if (inner.kind !== "json" && outer.length === 0) {
                return {
                    ...inner,
                    ...desc,
                    kind: inner.kind,
                    schema,
                    nullable: true,
                    label: desc.label || inner.label,
                    description: desc.description || inner.description,
                    hasDefault: desc.hasDefault || inner.hasDefault,
                    default: desc.hasDefault ? desc.default : inner.default,
                };
            }
        }
        return {...desc, kind: "json"};
    }
    if (COMBINATORS.some((k) => base[k] !== undefined)) {
        return {...desc, kind: "json"};
    }
    const childCtx = {...ctx, refs, depth: ctx.depth + 1};
    if (Array.isArray(base.enum) || hasOwn(base, "const")) {
        const values = hasOwn(base, "const") ? [base.const] : base.enum;
        // enumNames: the labels older JSON Schema tools (and MCP elicitation's legacy form) give
        const names =
            Array.isArray(base.enumNames) && base.enumNames.length === values.length
                ? base.enumNames
                : null;
        return {
            ...desc,
            kind: "enum",
            options: values.map((value, i) => ({
                value,
                label: typeof names?.[i] === "string" ? names[i] : optionLabel(value),
            })),
        };
    }
    switch (base.type) {
        case "string":
            return {
                ...desc,
                kind: "string",
                multiline: typeof base.maxLength === "number" && base.maxLength > 200,
                format: base.format || "",
            };
        case "number":
        case "integer":
            return {...desc, kind: base.type};
        case "boolean":
            return {...desc, kind: "boolean"};
        case "null":
            return {...desc, kind: "enum", options: [{value: null, label: "null"}]};
        case "object":
            return compileObject(base, desc, childCtx);
        case "array":
            if (Array.isArray(base.items)) {
                return {...desc, kind: "json"};
            }
            return {
                ...desc,
                kind: "array",
                item: compile(base.items === undefined ? true : base.items, {
                    ...childCtx,
                    key: null,
                    required: true,
                }),
            };
        default:
            return {...desc, kind: "json"};
    }
}

// keywords that constrain nothing: a schema made of these and a $ref is the $ref's target
const ANNOTATIONS = new Set([
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
]);

function annotations(schema) {
    const out = {};
    if (typeof schema.title === "string" && schema.title) {
        out.label = schema.title;
    }
    if (typeof schema.description === "string") {
        out.description = schema.description;
    }
    if (hasOwn(schema, "default")) {
        out.hasDefault = true;
        out.default = schema.default;
    }
    return out;
}

function isNullSchema(schema) {
    return (
        isPlainObject(schema) &&
        schema.type === "null" &&
        Object.keys(schema).every((k) => k === "type" || ANNOTATIONS.has(k))
    );
}

/** Options of alternatives that are each a constant with annotations only, labelled by their
 * titles; null when any alternative is more than that. */
function titledOptions(alternatives) {
    const plain = (alt) =>
        isPlainObject(alt) &&
        hasOwn(alt, "const") &&
        Object.keys(alt).every((k) => k === "const" || ANNOTATIONS.has(k));
    if (!alternatives.length || !alternatives.every(plain)) {
        return null;
    }
    return alternatives.map((alt) => ({
        value: alt.const,
        label: typeof alt.title === "string" && alt.title ? alt.title : optionLabel(alt.const),
    }));
}

function optionLabel(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
}

function compileObject(schema, desc, ctx) {
    const properties = isPlainObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required)
        ? schema.required.filter((k) => typeof k === "string")
        : [];
    const fields = Object.entries(properties).map(([key, sub]) =>
        compile(sub, {...ctx, key, required: required.includes(key)})
    );
    // required names with no property schema still need an input
    for (const key of required) {
        if (!hasOwn(properties, key) && !fields.some((f) => f.key === key)) {
            fields.push(compile(true, {...ctx, key, required: true}));
        }
    }
    const closed =
        schema.additionalProperties === false && !isPlainObject(schema.patternProperties);
    return {
        ...desc,
        kind: "object",
        fields,
        // offered when the schema invites other keys, or is a free-form object (no "properties");
        // `"properties": {}` is a tool that takes no arguments
        extra:
            !closed &&
            (schema.properties === undefined ||
                schema.additionalProperties !== undefined ||
                schema.patternProperties !== undefined),
        closed,
    };
}

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
                setOwn(state.fields, field.key, initialState(field, options));
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
export function initialState(desc, options = {}) {
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
    const state = initialState({...arrayDesc.item, required: true});
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
    // an empty number or JSON box: the field is left out, unless the schema requires it
    const blank = () => {
        if (desc.required) {
            push("required");
            return {present: true};
        }
        return {present: false};
    };
    if (!state) {
        state = initialState(desc);
    }
    if (!state.present && !desc.required) {
        return {present: false};
    }
    if (state.foreign) {
        push("type", {expected: expectedTypes(desc), value: state.foreign.value});
        return {present: true};
    }
    let value;
    if (state.isNull && desc.nullable) {
        value = null;
    } else {
        switch (desc.kind) {
            case "string":
                value = state.raw ?? "";
                break;
            case "number":
            case "integer": {
                const text = String(state.raw ?? "").trim();
                if (text === "") {
                    return blank();
                }
                value = parseNumber(text);
                if (value === undefined) {
                    push("number");
                    return {present: true};
                }
                if (desc.kind === "integer" && !Number.isInteger(value)) {
                    push("integer");
                    return {present: true};
                }
                break;
            }
            case "boolean":
                if (state.checked === undefined) {
                    if (desc.required) {
                        push("required");
                        return {present: true};
                    }
                    return {present: false};
                }
                value = Boolean(state.checked);
                break;
            case "enum":
                if (!(state.index >= 0 && state.index < desc.options.length)) {
                    if (desc.required) {
                        push("required");
                        return {present: true};
                    }
                    return {present: false};
                }
                value = desc.options[state.index].value;
                break;
            case "object": {
                value = {};
                for (const field of desc.fields) {
                    const sub = read(
                        field,
                        state.fields && hasOwn(state.fields, field.key)
                            ? state.fields[field.key]
                            : undefined,
                        [...path, field.key],
                        errors
                    );
                    if (sub.present && sub.value !== undefined) {
                        setOwn(value, field.key, sub.value);
                    }
                }
                const extraText = String(state.extraRaw ?? "").trim();
                if (extraText) {
                    let extra;
                    try {
                        extra = JSON.parse(extraText);
                    } catch (e) {
                        push("json", {message: e.message}, [...path, "*"]);
                    }
                    if (extra !== undefined && !isPlainObject(extra)) {
                        push("object", {}, [...path, "*"]);
                    } else if (extra !== undefined) {
                        for (const [key, item] of Object.entries(extra)) {
                            if (desc.fields.some((f) => f.key === key)) {
                                push("duplicate", {property: key}, [...path, "*"]);
                            } else {
                                setOwn(value, key, item);
                            }
                        }
                    }
                }
                break;
            }
            case "array":
                value = (state.items || []).map(
                    (item, i) => read(desc.item, item, [...path, i], errors).value
                );
                break;
            default: {
                const text = String(state.raw ?? "").trim();
                if (text === "") {
                    return blank();
                }
                try {
                    value = JSON.parse(text);
                } catch (e) {
                    push("json", {message: e.message});
                    return {present: true};
                }
            }
        }
    }
    if (errors.length === before) {
        // the field's own constraints; its children were checked against theirs already
        for (const error of validate(desc.schema, value, desc.root, path)) {
            errors.push(error);
        }
    }
    return {present: true, value};
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
