/** @odoo-module */
/**
 * JSON Schema (2020-12) for the schema forms, as plain data: no Odoo, no DOM. `validate(schema,
 * value)` returns the errors of `value` ([{ path, code, params }]); the helpers here are shared by
 * the form's compiler (schema_fields.js) and its state (schema_form_state.js).
 *
 * Error codes (the widget turns them into translated messages): required, type, number, integer,
 * json, enum, const, false, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
 * exclusiveMaximum, multipleOf, minItems, maxItems, uniqueItems, contains, minContains,
 * maxContains, additionalProperties, minProperties, maxProperties, propertyNames,
 * dependentRequired, anyOf, oneOf, not, if, duplicate, ref, object.
 */

export const MAX_DEPTH = 8;
export const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

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

export function hasOwn(obj, key) {
    return Object.prototype.hasOwnProperty.call(obj, key);
}

/** obj[key] = value, also for a key such as "__proto__" that plain assignment would not store. */
export function setOwn(obj, key, value) {
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
