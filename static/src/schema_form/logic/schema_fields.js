/** @odoo-module */
/**
 * A JSON Schema compiled into the descriptor tree a schema form renders: `compileSchema(schema)`.
 * Parts of a schema a form cannot show well (anyOf of several types, tuples, schemas with no type)
 * become a "json" field: a small JSON editor whose value is still validated against its schema.
 */
import {hasOwn, isPlainObject, MAX_DEPTH, resolveRef} from "./json_schema.js";

// -- compiling a schema into field descriptors ----------------------------------------------------

const COMBINATORS = ["allOf", "anyOf", "oneOf", "not", "if", "prefixItems"];

/**
 * The descriptor tree of a schema. A descriptor:
 *   { kind, key, label, description, required, nullable, schema, root, default, hasDefault,
 *     options (enum: [{ label, value }]), fields (object), item (array), extra (object: offer a
 *     JSON editor for properties the schema does not name), multiline (string) }
 * kind is one of string, number, integer, boolean, enum, object, array, json.
 */
export function compileSchema(schema) {
    const root = schema === undefined || schema === null ? {} : schema;
    return compile(root, {root, key: null, required: true, depth: 0, refs: []});
}

function compile(schema, ctx) {
    const desc = baseDescriptor(schema, ctx);
    if (!isPlainObject(schema)) {
        return {...desc, kind: "json"}; // true, false or nonsense: the validator has the last word
    }
    const refs = [...ctx.refs];
    const effective = followRefs(schema, ctx.root, refs);
    if (effective === null) {
        return {...desc, ...annotations(schema), kind: "json"};
    }
    Object.assign(desc, annotations(effective));
    if (ctx.depth > MAX_DEPTH) {
        return {...desc, kind: "json"};
    }
    const childCtx = {...ctx, refs, depth: ctx.depth + 1};
    if (Array.isArray(effective.type)) {
        const split = splitNullType(effective);
        if (split === null) {
            return {...desc, kind: "json"};
        }
        desc.nullable = split.nullable;
        return compileTyped(split.base, desc, childCtx);
    }
    if (Array.isArray(effective.anyOf) || Array.isArray(effective.oneOf)) {
        return compileChoice(schema, effective, desc, {...ctx, refs});
    }
    return compileTyped(effective, desc, childCtx);
}

// what every descriptor has, before its schema is read
function baseDescriptor(schema, ctx) {
    return {
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
}

/**
 * The schema with its plain $refs (a $ref with no siblings but annotations) followed, to show the
 * target's fields; each $ref followed is added to `refs`. null when a $ref cannot be followed (not
 * found, a cycle, too deep, or a $ref with constraints beside it).
 */
function followRefs(schema, root, refs) {
    let effective = schema;
    while (isPlainObject(effective) && typeof effective.$ref === "string") {
        const target = resolveRef(effective.$ref, root);
        if (!isPlainObject(target) || refs.includes(effective.$ref) || refs.length > MAX_DEPTH) {
            return null;
        }
        refs.push(effective.$ref);
        const {$ref, ...rest} = effective;
        if (Object.keys(rest).some((k) => !ANNOTATIONS.has(k))) {
            return null;
        }
        effective = {...target, ...rest};
    }
    return effective;
}

// T | null written as type: [T, "null"]: { base: the schema of T, nullable }; null for several types
function splitNullType(schema) {
    const types = [...new Set(schema.type)];
    const others = types.filter((t) => t !== "null");
    if (others.length === 1) {
        return {base: {...schema, type: others[0]}, nullable: types.includes("null")};
    }
    if (others.length === 0) {
        return {base: {...schema, type: "null"}, nullable: false};
    }
    return null;
}

// anyOf / oneOf: a titled choice of constants, or T | null as pydantic writes it:
// anyOf: [{...T}, {type: null}]; anything else is a "json" field
function compileChoice(schema, effective, desc, ctx) {
    const alternatives = effective.anyOf || effective.oneOf;
    const oneKind = !(effective.anyOf && effective.oneOf);
    // a titled choice (MCP elicitation's titled enums): [{const, title}, ...]
    const titled = oneKind && titledOptions(alternatives);
    if (titled) {
        return {...desc, kind: "enum", options: titled};
    }
    const other = alternatives.filter((s) => !isNullSchema(s));
    if (!(alternatives.length === 2 && other.length === 1 && oneKind)) {
        return {...desc, kind: "json"};
    }
    const {anyOf, oneOf, ...rest} = effective;
    const inner = compile(other[0], ctx);
    const outer = Object.keys(rest).filter((k) => !ANNOTATIONS.has(k));
    if (inner.kind === "json" || outer.length > 0) {
        return {...desc, kind: "json"};
    }
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

// a schema of one type (or an enum, or a const); its children are compiled with `childCtx`
function compileTyped(base, desc, childCtx) {
    if (COMBINATORS.some((k) => base[k] !== undefined)) {
        return {...desc, kind: "json"};
    }
    if (Array.isArray(base.enum) || hasOwn(base, "const")) {
        return compileEnum(base, desc);
    }
    switch (base.type) {
        case "string":
            return {
                ...desc,
                kind: "string",
                multiline: typeof base.maxLength === "number" && base.maxLength > 200,
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
            return compileArray(base, desc, childCtx);
        default:
            return {...desc, kind: "json"};
    }
}

function compileEnum(base, desc) {
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

function compileArray(base, desc, childCtx) {
    if (Array.isArray(base.items)) {
        return {...desc, kind: "json"}; // a tuple
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
    };
}
