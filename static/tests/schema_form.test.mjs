import assert from "node:assert/strict";
import {spawnSync} from "node:child_process";
import {existsSync} from "node:fs";
import {dirname, join} from "node:path";
import {describe, test} from "node:test";
import {fileURLToPath} from "node:url";

import {jsonEqual, validate} from "../src/schema_form/logic/json_schema.js";
import {compileSchema} from "../src/schema_form/logic/schema_fields.js";
import {
    addItem,
    collect,
    errorsByPath,
    fieldPaths,
    initialFormState,
    moveItem,
    parseArguments,
    parseNumber,
    removeItem,
    setChecked,
    setExtraRaw,
    setIndex,
    setNull,
    setPresent,
    setRaw,
    stateFromValue,
    touchPath,
} from "../src/schema_form/logic/schema_form_state.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

// What FastMCP (pydantic) publishes for the test servers' tools, and a richer hand-written one.
const ADD = {
    type: "object",
    title: "addArguments",
    properties: {a: {title: "A", type: "number"}, b: {title: "B", type: "number"}},
    required: ["a", "b"],
};
const FAIL = {
    type: "object",
    properties: {reason: {default: "boom", title: "Reason", type: "string"}},
};
const OPTIONAL_CITY = {
    type: "object",
    properties: {city: {anyOf: [{type: "string"}, {type: "null"}], default: null, title: "City"}},
};
const ORDER = {
    type: "object",
    $defs: {
        Line: {
            type: "object",
            properties: {
                sku: {type: "string", minLength: 1},
                qty: {type: "integer", minimum: 1},
                gift: {type: "boolean"},
            },
            required: ["sku", "qty"],
            additionalProperties: false,
        },
    },
    properties: {
        customer: {
            type: "object",
            title: "Customer",
            properties: {name: {type: "string"}, vip: {type: "boolean"}},
            required: ["name"],
        },
        priority: {enum: ["low", "normal", "high"], default: "normal"},
        lines: {type: "array", items: {$ref: "#/$defs/Line"}, minItems: 1},
        tags: {type: "array", items: {type: "string"}, uniqueItems: true},
        note: {type: ["string", "null"]},
        discount: {type: "number", minimum: 0, maximum: 1},
        extra: {anyOf: [{type: "string"}, {type: "integer"}]},
    },
    required: ["customer", "lines"],
};

function fields(desc) {
    return Object.fromEntries(desc.fields.map((f) => [f.key, f]));
}

function roundTrip(schema, value) {
    const desc = compileSchema(schema);
    return collect(desc, stateFromValue(desc, value));
}

describe("compileSchema", () => {
    test("maps each JSON type to a field kind, required marked", () => {
        const desc = compileSchema(ORDER);
        assert.equal(desc.kind, "object");
        const f = fields(desc);
        assert.equal(f.customer.kind, "object");
        assert.equal(f.customer.required, true);
        assert.equal(f.customer.label, "Customer");
        assert.deepEqual(
            fields(f.customer).name && [
                fields(f.customer).name.kind,
                fields(f.customer).name.required,
            ],
            ["string", true]
        );
        assert.equal(fields(f.customer).vip.kind, "boolean");
        assert.equal(fields(f.customer).vip.required, false);
        assert.equal(f.priority.kind, "enum");
        assert.deepEqual(
            f.priority.options.map((o) => o.value),
            ["low", "normal", "high"]
        );
        assert.equal(f.lines.kind, "array");
        assert.equal(f.lines.required, true);
        assert.equal(f.lines.item.kind, "object", "a $ref is followed");
        assert.deepEqual(
            f.lines.item.fields.map((x) => [x.key, x.kind, x.required]),
            [
                ["sku", "string", true],
                ["qty", "integer", true],
                ["gift", "boolean", false],
            ]
        );
        assert.equal(f.tags.item.kind, "string");
        assert.equal(f.note.kind, "string");
        assert.equal(f.note.nullable, true);
        assert.equal(f.discount.kind, "number");
        assert.equal(f.extra.kind, "json", "a union of types becomes a JSON input");
    });

    test("pydantic's Optional[str] = None is a nullable string with its default", () => {
        const city = fields(compileSchema(OPTIONAL_CITY)).city;
        assert.equal(city.kind, "string");
        assert.equal(city.nullable, true);
        assert.equal(city.label, "City");
        assert.equal(city.hasDefault, true);
        assert.equal(city.default, null);
    });

    test("recursive schemas stop at a JSON input instead of looping", () => {
        const tree = {
            $defs: {node: {type: "object", properties: {child: {$ref: "#/$defs/node"}}}},
            $ref: "#/$defs/node",
        };
        const desc = compileSchema(tree);
        assert.equal(desc.kind, "object");
        assert.equal(fields(desc).child.kind, "json");
    });

    test("no schema, an empty schema or a tuple become JSON inputs", () => {
        assert.equal(compileSchema(undefined).kind, "json");
        assert.equal(compileSchema({}).kind, "json");
        assert.equal(compileSchema({type: "array", prefixItems: [{type: "string"}]}).kind, "json");
        assert.equal(
            compileSchema({type: "object"}).extra,
            true,
            "a free-form object offers other properties"
        );
        assert.equal(compileSchema(ADD).extra, false);
        assert.equal(
            compileSchema({type: "object", properties: {}}).extra,
            false,
            "a tool that takes no arguments"
        );
        assert.equal(
            compileSchema({type: "object", properties: {}, additionalProperties: true}).extra,
            true
        );
    });
});

describe("collect: values from the inputs", () => {
    test("a fresh form of `add` asks for both numbers", () => {
        const desc = compileSchema(ADD);
        const state = initialFormState(desc);
        const result = collect(desc, state);
        assert.equal(result.value, undefined);
        assert.deepEqual(Object.keys(errorsByPath(result.errors)).sort(), ["a", "b"]);
        assert.ok(result.errors.every((e) => e.code === "required"));
        setRaw(fields(desc).a, state.fields.a, "2");
        setRaw(fields(desc).b, state.fields.b, " -3.5e1 ");
        assert.deepEqual(collect(desc, state), {
            present: true,
            value: {a: 2, b: -35},
            errors: [],
            partial: {a: 2, b: -35},
        });
    });

    test("numbers and integers are parsed strictly", () => {
        assert.equal(parseNumber("12"), 12);
        assert.equal(parseNumber(".5"), 0.5);
        assert.equal(parseNumber("1e3"), 1000);
        for (const bad of ["", "abc", "1,5", "0x10", "Infinity", "NaN", "1e999", "--1", "1 2"]) {
            assert.equal(parseNumber(bad), undefined, bad);
        }
        const desc = compileSchema({
            type: "object",
            properties: {n: {type: "integer"}},
            required: ["n"],
        });
        const state = initialFormState(desc);
        setRaw(desc.fields[0], state.fields.n, "1.5");
        assert.deepEqual(
            collect(desc, state).errors.map((e) => [e.path, e.code]),
            [[["n"], "integer"]]
        );
        setRaw(desc.fields[0], state.fields.n, "x");
        assert.equal(collect(desc, state).errors[0].code, "number");
        setRaw(desc.fields[0], state.fields.n, "4.0");
        assert.deepEqual(collect(desc, state).value, {n: 4});
    });

    test("optional fields left empty are not sent; defaults are left to the server", () => {
        const desc = compileSchema(FAIL);
        const state = initialFormState(desc);
        assert.deepEqual(collect(desc, state).value, {});
        setRaw(desc.fields[0], state.fields.reason, "bad day");
        assert.deepEqual(collect(desc, state).value, {reason: "bad day"});
        setRaw(desc.fields[0], state.fields.reason, "");
        assert.deepEqual(collect(desc, state).value, {});
    });

    test("an invalid input reports an error at its own path and yields no value", () => {
        const desc = compileSchema(ORDER);
        const f = fields(desc);
        const state = initialFormState(desc);
        assert.equal(
            state.fields.priority.index,
            -1,
            "an optional default is not forced on the user"
        );
        setRaw(fields(f.customer).name, state.fields.customer.fields.name, "Ada");
        addItem(f.lines, state.fields.lines);
        const line = state.fields.lines.items[0];
        setRaw(f.lines.item.fields[0], line.fields.sku, "");
        setRaw(f.lines.item.fields[1], line.fields.qty, "0");
        setRaw(f.discount, state.fields.discount, "2");
        const result = collect(desc, state);
        assert.equal(result.value, undefined);
        const byPath = errorsByPath(result.errors);
        assert.deepEqual(
            byPath["lines/0/sku"].map((e) => e.code),
            ["minLength"]
        );
        assert.deepEqual(
            byPath["lines/0/qty"].map((e) => [e.code, e.params.limit]),
            [["minimum", 1]]
        );
        assert.deepEqual(
            byPath.discount.map((e) => e.code),
            ["maximum"]
        );

        setRaw(f.lines.item.fields[0], line.fields.sku, "A-1");
        setRaw(f.lines.item.fields[1], line.fields.qty, "3");
        setChecked(f.lines.item.fields[2], line.fields.gift, true);
        setRaw(f.discount, state.fields.discount, "0.25");
        setIndex(f.priority, state.fields.priority, 2);
        addItem(f.tags, state.fields.tags);
        setRaw(f.tags.item, state.fields.tags.items[0], "red");
        addItem(f.tags, state.fields.tags);
        setRaw(f.tags.item, state.fields.tags.items[1], "red");
        assert.deepEqual(
            collect(desc, state).errors.map((e) => [e.path, e.code]),
            [[["tags"], "uniqueItems"]]
        );
        setRaw(f.tags.item, state.fields.tags.items[1], "blue");
        moveItem(f.tags, state.fields.tags, 1, -1);
        setRaw(f.extra, state.fields.extra, "42");
        assert.deepEqual(collect(desc, state).value, {
            customer: {name: "Ada"},
            lines: [{sku: "A-1", qty: 3, gift: true}],
            priority: "high",
            tags: ["blue", "red"],
            discount: 0.25,
            extra: 42,
        });
        removeItem(f.lines, state.fields.lines, 0);
        assert.deepEqual(
            collect(desc, state).errors.map((e) => [e.path, e.code]),
            [[["lines"], "minItems"]]
        );
    });

    test("enum, boolean and null choices", () => {
        const schema = {
            type: "object",
            properties: {
                level: {type: "integer", enum: [1, 2, 3]},
                on: {type: "boolean"},
                must: {type: "boolean"},
                maybe: {type: ["integer", "null"]},
            },
            required: ["level", "must"],
        };
        const desc = compileSchema(schema);
        const f = fields(desc);
        const state = initialFormState(desc);
        assert.equal(state.fields.must.checked, false, "a required checkbox starts unchecked");
        assert.equal(state.fields.on.checked, undefined, "an optional boolean is unset, not false");
        assert.deepEqual(
            collect(desc, state).errors.map((e) => [e.path, e.code]),
            [[["level"], "required"]]
        );
        setIndex(f.level, state.fields.level, 1);
        setChecked(f.on, state.fields.on, false);
        setNull(f.maybe, state.fields.maybe, true);
        assert.deepEqual(collect(desc, state).value, {
            level: 2,
            must: false,
            on: false,
            maybe: null,
        });
        setNull(f.maybe, state.fields.maybe, false);
        setChecked(f.on, state.fields.on, undefined);
        assert.deepEqual(collect(desc, state).value, {level: 2, must: false});
    });

    test("optional objects are sent once touched or switched on", () => {
        const schema = {
            type: "object",
            properties: {opt: {type: "object", properties: {x: {type: "string"}}}},
        };
        const desc = compileSchema(schema);
        const state = initialFormState(desc);
        assert.deepEqual(collect(desc, state).value, {});
        setPresent(fields(desc).opt, state.fields.opt, true);
        assert.deepEqual(collect(desc, state).value, {opt: {}});
        setPresent(fields(desc).opt, state.fields.opt, false);
        setRaw(fields(desc).opt.fields[0], state.fields.opt.fields.x, "hi");
        touchPath(desc, state, ["opt", "x"]);
        assert.deepEqual(collect(desc, state).value, {opt: {x: "hi"}});
    });

    test("JSON inputs and other properties must parse", () => {
        const desc = compileSchema({type: "object"});
        const state = initialFormState(desc);
        setExtraRaw(desc, state, "{bad");
        assert.deepEqual(
            collect(desc, state).errors.map((e) => [e.path, e.code]),
            [[["*"], "json"]]
        );
        setExtraRaw(desc, state, "[1]");
        assert.equal(collect(desc, state).errors[0].code, "object");
        setExtraRaw(desc, state, '{"k": [1, {"z": null}]}');
        assert.deepEqual(collect(desc, state).value, {k: [1, {z: null}]});
        const named = compileSchema({type: "object", properties: {k: {type: "string"}}});
        const namedState = initialFormState(named);
        setExtraRaw(named, namedState, '{"k": "x"}');
        assert.equal(collect(named, namedState).errors[0].code, "duplicate");
    });

    test("a loaded value of the wrong type is reported, not silently converted", () => {
        const result = roundTrip(ADD, {a: "2", b: 3});
        assert.deepEqual(
            result.errors.map((e) => [e.path, e.code]),
            [[["a"], "type"]]
        );
        const desc = compileSchema(ADD);
        const state = stateFromValue(desc, {a: "2", b: 3});
        setRaw(fields(desc).a, state.fields.a, "2");
        assert.deepEqual(
            collect(desc, state).value,
            {a: 2, b: 3},
            "editing the field clears the problem"
        );
    });

    test("a null for an optional field that does not allow one is read as not given", () => {
        const flags = {
            type: "object",
            properties: {
                name: {type: "string"},
                verbose: {type: "boolean"},
                note: {type: ["string", "null"]},
            },
            required: ["name"],
        };
        const result = roundTrip(flags, {name: "a", verbose: null, note: null});
        assert.deepEqual(result.errors, []);
        assert.deepEqual(result.value, {name: "a", note: null});
        assert.deepEqual(
            roundTrip(flags, {name: null}).errors.map((e) => [e.path, e.code]),
            [[["name"], "type"]],
            "a required field's null is still refused"
        );
    });

    test("unknown keys are kept through a round trip", () => {
        assert.deepEqual(roundTrip(ADD, {a: 1, b: 2, c: [true]}).value, {a: 1, b: 2, c: [true]});
        assert.equal(
            roundTrip({...ADD, additionalProperties: false}, {a: 1, b: 2, c: 1}).errors[0].code,
            "additionalProperties"
        );
    });

    test("fieldPaths lists the inputs shown, so errors elsewhere can be shown apart", () => {
        const desc = compileSchema(ORDER);
        const state = stateFromValue(desc, {customer: {name: "x"}, lines: [{sku: "a", qty: 1}]});
        const paths = fieldPaths(desc, state);
        for (const key of [
            "",
            "customer",
            "customer/name",
            "lines",
            "lines/0",
            "lines/0/qty",
            "tags",
            "*",
        ]) {
            assert.ok(paths.has(key), key);
        }
        assert.ok(!paths.has("tags/0"));
        assert.ok(!paths.has("other"));
    });

    test("parseArguments reads the stored text", () => {
        assert.deepEqual(parseArguments(""), {});
        assert.deepEqual(parseArguments(false), {});
        assert.deepEqual(parseArguments('{"a": 1}'), {a: 1});
        assert.equal(parseArguments("{"), undefined);
    });
});

describe("validate", () => {
    test("the keywords tools use", () => {
        const codes = (schema, value) => validate(schema, value).map((e) => e.code);
        assert.deepEqual(
            codes({type: "string", minLength: 2}, "😀"),
            ["minLength"],
            "lengths count code points"
        );
        assert.deepEqual(codes({type: "integer"}, 1.0), []);
        assert.deepEqual(codes({type: "number"}, true), ["type"]);
        assert.deepEqual(codes({enum: [1]}, true), ["enum"]);
        assert.deepEqual(codes({const: {a: [1]}}, {a: [1.0]}), []);
        assert.deepEqual(codes({multipleOf: 0.5}, 1.5), []);
        assert.deepEqual(
            codes({multipleOf: 3}, 1e21),
            ["multipleOf"],
            "exact, as Python computes it"
        );
        assert.deepEqual(
            codes({multipleOf: 0.1}, 0.3),
            ["multipleOf"],
            "float quotient, as Python computes it"
        );
        assert.deepEqual(codes({pattern: "^a"}, "ba"), ["pattern"]);
        assert.deepEqual(codes({oneOf: [{type: "integer"}, {type: "number"}]}, 1), ["oneOf"]);
        assert.deepEqual(codes({not: {type: "null"}}, null), ["not"]);
        assert.deepEqual(codes({if: {type: "string"}, then: {minLength: 3}}, "ab"), ["minLength"]);
        assert.deepEqual(codes({dependentRequired: {a: ["b"]}}, {a: 1}), ["dependentRequired"]);
        assert.deepEqual(
            codes(
                {patternProperties: {"^x": {type: "string"}}, additionalProperties: false},
                {x1: "a", y: 1}
            ),
            ["additionalProperties"]
        );
        assert.deepEqual(codes({uniqueItems: true}, [1, true, 0, false]), []);
        assert.deepEqual(codes({uniqueItems: true}, [{a: 1}, {a: 1.0}]), ["uniqueItems"]);
        assert.deepEqual(codes({$ref: "#/nowhere"}, 1), ["ref"]);
        const required = validate({required: ["k"]}, {});
        assert.deepEqual(
            required[0].path,
            ["k"],
            "a missing property is reported where its input is"
        );
    });

    test("jsonEqual follows JSON, not JavaScript", () => {
        assert.ok(jsonEqual({a: 1, b: [2]}, {b: [2], a: 1}));
        assert.ok(!jsonEqual(1, true));
        assert.ok(!jsonEqual({a: undefined}, {}));
        assert.ok(!jsonEqual([1], {0: 1}));
    });
});

// -- property: the form accepts exactly the values the schema accepts --------------------------------
//
// Random schemas and values, judged by Python's jsonschema (the validator the agent loop uses on the
// same arguments before a call) running in one child process per batch. The generator is seeded;
// SCHEMA_FORM_SEED=n runs another sequence (a loop over many seeds finds rarer disagreements).

function findPython() {
    const candidates = [
        process.env.AI_MCP_PYTHON,
        join(ROOT, ".venv", "bin", "python"),
        "/opt/odoo18/.venv/bin/python",
        "python3",
    ].filter(Boolean);
    for (const python of candidates) {
        if (python.includes("/") && !existsSync(python)) {
            continue;
        }
        const probe = spawnSync(python, ["-c", "import jsonschema"], {encoding: "utf8"});
        if (probe.status === 0) {
            return python;
        }
    }
    return null;
}

const ORACLE = `
import json, sys
from jsonschema import Draft202012Validator
out = []
for line in sys.stdin:
    case = json.loads(line)
    out.append(Draft202012Validator(case["schema"]).is_valid(case["value"]))
print(json.dumps(out))
`;

function oracle(python, cases) {
    const input = cases.map((c) => JSON.stringify(c)).join("\n") + "\n";
    const run = spawnSync(python, ["-c", ORACLE], {
        input,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout);
}

function prng(seed) {
    let a = seed >>> 0;
    const next = () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
    const pick = (items) => items[Math.floor(next() * items.length)];
    const chance = (p) => next() < p;
    return {next, int, pick, chance};
}

const KEYS = ["a", "b", "name", "count", "x-y", "ünï", "tags", "", "0"];
const STRINGS = ["", "a", "ab", "abc", "hello", "A1", "😀", "  ", "12", "null", "true", "{}"];

/** A scalar schema: a string, number or integer, bounded or not; a boolean, an enum, a const, null. */
function genScalar(r) {
    return r.pick([
        () => ({
            type: "string",
            ...(r.chance(0.3) ? {minLength: r.int(0, 3)} : {}),
            ...(r.chance(0.2) ? {maxLength: r.int(1, 5)} : {}),
            ...(r.chance(0.15) ? {pattern: r.pick(["^[a-z]+$", "\\d", "^A"])} : {}),
            ...(r.chance(0.1) ? {format: "email"} : {}),
        }),
        () => ({
            type: "number",
            ...(r.chance(0.3) ? {minimum: r.int(-5, 5)} : {}),
            ...(r.chance(0.3) ? {maximum: r.int(5, 20)} : {}),
            ...(r.chance(0.15) ? {exclusiveMinimum: r.int(-3, 3)} : {}),
            ...(r.chance(0.15) ? {multipleOf: r.pick([0.5, 2, 3])} : {}),
        }),
        () => ({
            type: "integer",
            ...(r.chance(0.3) ? {minimum: r.int(-5, 5)} : {}),
            ...(r.chance(0.2) ? {exclusiveMaximum: r.int(5, 20)} : {}),
            ...(r.chance(0.15) ? {multipleOf: r.pick([2, 5])} : {}),
        }),
        () => ({type: "boolean"}),
        () => ({
            enum: r.pick([
                ["x", "y", "z"],
                [1, 2.5, "3"],
                [true, null, 0],
                [{k: 1}, [1]],
            ]),
        }),
        () => ({const: r.pick(["fixed", 7, false, null])}),
        () => ({type: "null"}),
    ])();
}

/** `s` made nullable in one of the three ways a schema says so. */
function genNullable(r, s) {
    return r.pick([
        () => s,
        () => ({...s, type: [s.type, "null"]}),
        () => ({anyOf: [s, {type: "null"}], default: null}),
    ])();
}

/**
 * What a schema may be at `depth`: a scalar (three times as likely), an object or an array while
 * not too deep, then an empty schema, unions, a tuple, a $ref.
 */
function schemaChoices(r, depth, defs) {
    const choices = [() => genScalar(r), () => genScalar(r), () => genScalar(r)];
    if (depth < 3) {
        choices.push(
            () => genObject(r, depth + 1, defs),
            () => ({
                type: "array",
                items: genSchema(r, depth + 1, defs),
                ...(r.chance(0.3) ? {minItems: r.int(0, 2)} : {}),
                ...(r.chance(0.2) ? {maxItems: r.int(1, 3)} : {}),
                ...(r.chance(0.2) ? {uniqueItems: true} : {}),
            }),
            () => ({type: "array"})
        );
    }
    choices.push(
        () => ({}),
        () => ({anyOf: [{type: "string"}, {type: "integer"}]}),
        () => ({
            oneOf: [
                {type: "number", maximum: 3},
                {type: "integer", minimum: 2},
            ],
        }),
        () => ({type: ["string", "boolean"]}),
        () => ({type: "array", prefixItems: [{type: "string"}, {type: "integer"}]}),
        () => {
            const name = `d${Object.keys(defs).length}`;
            defs[name] = depth < 3 ? genObject(r, depth + 1, defs) : genScalar(r);
            return {$ref: `#/$defs/${name}`};
        }
    );
    return choices;
}

function genSchema(r, depth, defs) {
    let schema = r.pick(schemaChoices(r, depth, defs))();
    if (
        schema.type &&
        typeof schema.type === "string" &&
        schema.type !== "null" &&
        r.chance(0.15)
    ) {
        schema = genNullable(r, schema);
    }
    if (r.chance(0.2)) {
        schema = {...schema, title: "T", description: "D"};
    }
    return schema;
}

function genObject(r, depth, defs) {
    const properties = {};
    const count = r.int(0, 4);
    for (let i = 0; i < count; i++) {
        properties[r.pick(KEYS)] = genSchema(r, depth, defs);
    }
    const names = Object.keys(properties);
    const required = names.filter(() => r.chance(0.5));
    if (r.chance(0.1)) {
        required.push("undeclared");
    }
    const schema = {type: "object", properties, ...(required.length ? {required} : {})};
    if (r.chance(0.25)) {
        schema.additionalProperties = false;
    } else if (r.chance(0.1)) {
        schema.additionalProperties = {type: "integer"};
    }
    if (r.chance(0.05)) {
        schema.minProperties = 1;
    }
    return schema;
}

function resolve(schema, root) {
    let s = schema;
    for (let i = 0; i < 10 && s && typeof s === "object" && s.$ref; i++) {
        s = root.$defs[s.$ref.slice("#/$defs/".length)];
    }
    return s;
}

/** A value aimed at the schema (often valid), sometimes broken on purpose. */
function genValue(r, schema, root, depth = 0) {
    if (r.chance(0.04)) {
        return genAny(r, 2);
    }
    schema = resolve(schema, root);
    if (schema === true || !schema || typeof schema !== "object" || depth > 6) {
        return genAny(r, 2);
    }
    if (schema.anyOf || schema.oneOf) {
        return genValue(r, r.pick(schema.anyOf || schema.oneOf), root, depth + 1);
    }
    if (schema.enum) {
        return r.pick(schema.enum);
    }
    if ("const" in schema) {
        return schema.const;
    }
    const type = Array.isArray(schema.type) ? r.pick(schema.type) : schema.type;
    if (schema.prefixItems) {
        return [r.pick(STRINGS), r.int(-2, 9)].slice(0, r.int(0, 2));
    }
    switch (type) {
        case "string":
            return r.pick(STRINGS);
        case "number":
            return r.pick([r.int(-10, 25), r.int(-40, 40) / 4, 0.1 + 0.2, 1e21, -0]);
        case "integer":
            return r.int(-10, 25);
        case "boolean":
            return r.chance(0.5);
        case "null":
            return null;
        case "array": {
            const n = r.int(0, 3);
            const items = [];
            for (let i = 0; i < n; i++) {
                items.push(
                    schema.items === undefined
                        ? genAny(r, 1)
                        : genValue(r, schema.items, root, depth + 1)
                );
            }
            return items;
        }
        case "object": {
            const value = {};
            for (const [key, sub] of Object.entries(schema.properties || {})) {
                const needed = (schema.required || []).includes(key);
                if (needed ? !r.chance(0.05) : r.chance(0.6)) {
                    value[key] = genValue(r, sub, root, depth + 1);
                }
            }
            if ((schema.required || []).includes("undeclared") && r.chance(0.8)) {
                value.undeclared = genAny(r, 1);
            }
            if (r.chance(0.1)) {
                value.other = r.chance(0.5) ? r.int(0, 3) : "s";
            }
            return value;
        }
        default:
            return genAny(r, 2);
    }
}

function genAny(r, depth) {
    const leaf = () => r.pick([null, true, false, 0, 1, -2.5, "", "s", "😀"]);
    if (depth <= 0 || r.chance(0.5)) {
        return leaf();
    }
    if (r.chance(0.5)) {
        return Array.from({length: r.int(0, 2)}, () => genAny(r, depth - 1));
    }
    const obj = {};
    for (let i = r.int(0, 2); i > 0; i--) {
        obj[r.pick(KEYS)] = genAny(r, depth - 1);
    }
    return obj;
}

/** Random edits, as a user makes them through the widget. */
function randomEdits(r, desc, state, rootDesc, rootState, path = []) {
    const edit = () => touchPath(rootDesc, rootState, path);
    if (r.chance(0.1) && desc.nullable) {
        setNull(desc, state, r.chance(0.5));
        return;
    }
    switch (desc.kind) {
        case "string":
        case "json":
            if (r.chance(0.7)) {
                setRaw(
                    desc,
                    state,
                    desc.kind === "json"
                        ? r.pick(["1", '"x"', "[1, 2]", "{", "null", "", '{"a": 1}', "true"])
                        : r.pick(STRINGS)
                );
                edit();
            }
            return;
        case "number":
        case "integer":
            if (r.chance(0.7)) {
                setRaw(
                    desc,
                    state,
                    r.pick(["", "0", "1", "-3", "2.5", "1e2", "abc", " 7 ", "10", "-0", "4.0"])
                );
                edit();
            }
            return;
        case "boolean":
            if (r.chance(0.7)) {
                setChecked(
                    desc,
                    state,
                    desc.required ? r.chance(0.5) : r.pick([true, false, undefined])
                );
                edit();
            }
            return;
        case "enum":
            if (r.chance(0.7)) {
                setIndex(desc, state, r.int(-1, desc.options.length - 1));
                edit();
            }
            return;
        case "object":
            if (!desc.required && r.chance(0.3)) {
                setPresent(desc, state, r.chance(0.5));
            }
            for (const field of desc.fields) {
                randomEdits(r, field, state.fields[field.key], rootDesc, rootState, [
                    ...path,
                    field.key,
                ]);
            }
            if (desc.extra && r.chance(0.2)) {
                setExtraRaw(desc, state, r.pick(["", '{"zz": 1}', "{", "[]", '{"other": "s"}']));
            }
            return;
        case "array":
            for (let i = r.int(0, 2); i > 0; i--) {
                addItem(desc, state);
            }
            if (state.items.length && r.chance(0.2)) {
                removeItem(desc, state, r.int(0, state.items.length - 1));
            }
            state.items.forEach((item, i) =>
                randomEdits(r, desc.item, item, rootDesc, rootState, [...path, i])
            );
            return;
    }
}

describe("property: the form accepts exactly what the schema accepts (Python's jsonschema judges)", () => {
    const python = findPython();
    const skip = python ? false : "no Python with jsonschema (.venv, /opt/odoo18/.venv or python3)";

    test("on random schemas, values and edits", {skip}, () => {
        const r = prng(Number(process.env.SCHEMA_FORM_SEED) || 20240611);
        const cases = [];
        for (let s = 0; s < 400; s++) {
            const defs = {};
            const schema = genObject(r, 0, defs);
            if (Object.keys(defs).length) {
                schema.$defs = defs;
            }
            const desc = compileSchema(schema);
            for (let v = 0; v < 8; v++) {
                const value = genValue(r, schema, schema);
                const result = collect(desc, stateFromValue(desc, value));
                cases.push({
                    kind: "value",
                    schema,
                    value,
                    result,
                    js: validate(schema, value).length === 0,
                });
            }
            for (let e = 0; e < 4; e++) {
                const state = initialFormState(desc);
                randomEdits(r, desc, state, desc, state);
                cases.push({kind: "edit", schema, result: collect(desc, state)});
            }
        }
        // 1. is each generated value valid?
        const valueCases = cases.filter((c) => c.kind === "value");
        const verdicts = oracle(
            python,
            valueCases.map((c) => ({schema: c.schema, value: c.value}))
        );
        let valid = 0;
        valueCases.forEach((c, i) => {
            c.valid = verdicts[i];
            valid += c.valid ? 1 : 0;
            const where = JSON.stringify({schema: c.schema, value: c.value});
            assert.equal(c.js, c.valid, `the form's validator disagrees with jsonschema: ${where}`);
            if (c.valid) {
                assert.deepEqual(c.result.errors, [], `a valid value is refused: ${where}`);
                assert.ok(
                    jsonEqual(c.result.value, c.value),
                    `a valid value comes back changed: ${where} -> ${JSON.stringify(c.result.value)}`
                );
            }
        });
        // 2. whatever the form gives without errors is valid
        const produced = cases.filter(
            (c) => c.result.errors.length === 0 && !(c.kind === "value" && c.valid)
        );
        const verdicts2 = oracle(
            python,
            produced.map((c) => ({schema: c.schema, value: c.result.value}))
        );
        produced.forEach((c, i) => {
            const where = JSON.stringify({schema: c.schema, from: c.value, got: c.result.value});
            assert.ok(verdicts2[i], `the form produced an invalid value: ${where}`);
        });
        // the generators must exercise both sides of the property
        const invalid = valueCases.length - valid;
        const editsOk = cases.filter(
            (c) => c.kind === "edit" && c.result.errors.length === 0
        ).length;
        assert.ok(valid > 800 && invalid > 400, `valid ${valid}, invalid ${invalid}`);
        assert.ok(editsOk > 200, `edits giving a value: ${editsOk}`);
    });
});

describe("MCP elicitation choices (2025-11-25): titled and untitled, single and multiple, with defaults", () => {
    const SHAPES = {
        untitled: {type: "string", enum: ["red", "green"], default: "green"},
        titled: {
            type: "string",
            oneOf: [
                {const: "r", title: "Red"},
                {const: "g", title: "Green"},
            ],
            default: "g",
        },
        legacy: {type: "string", enum: ["r", "g"], enumNames: ["Red", "Green"], default: "r"},
        multiple: {
            type: "array",
            items: {type: "string", enum: ["a", "b", "c"]},
            default: ["b"],
            minItems: 1,
            maxItems: 2,
        },
        multipleTitled: {
            type: "array",
            items: {
                anyOf: [
                    {const: "a", title: "Alpha"},
                    {const: "b", title: "Beta"},
                ],
            },
            default: ["a"],
        },
    };
    const form = (shape) =>
        compileSchema({type: "object", properties: {v: shape}, required: ["v"]});
    const labels = (desc) =>
        desc.fields[0].options?.map((o) => o.label) ??
        desc.fields[0].item.options.map((o) => o.label);

    test("each choice shows its title, or the value when it has none", () => {
        assert.deepEqual(labels(form(SHAPES.untitled)), ["red", "green"]);
        assert.deepEqual(labels(form(SHAPES.titled)), ["Red", "Green"]);
        assert.deepEqual(labels(form(SHAPES.legacy)), ["Red", "Green"]);
        assert.deepEqual(labels(form(SHAPES.multiple)), ["a", "b", "c"]);
        assert.deepEqual(labels(form(SHAPES.multipleTitled)), ["Alpha", "Beta"]);
    });

    test("the server's default is preselected and sent as the value, not the title", () => {
        const sent = Object.fromEntries(
            Object.entries(SHAPES).map(([name, shape]) => {
                const desc = form(shape);
                return [name, collect(desc, initialFormState(desc)).value.v];
            })
        );
        assert.deepEqual(sent, {
            untitled: "green",
            titled: "g",
            legacy: "r",
            multiple: ["b"],
            multipleTitled: ["a"],
        });
    });

    test("picking another choice sends its value; every value the server allows can be chosen", () => {
        const desc = form(SHAPES.titled);
        const state = initialFormState(desc);
        setIndex(desc.fields[0], state.fields.v, 0);
        assert.deepEqual(collect(desc, state), {
            present: true,
            value: {v: "r"},
            errors: [],
            partial: {v: "r"},
        });
        for (const [name, value] of [
            ["titled", "g"],
            ["legacy", "g"],
            ["multiple", ["a", "c"]],
            ["multipleTitled", ["b", "a"]],
        ]) {
            const d = form(SHAPES[name]);
            const result = collect(d, stateFromValue(d, {v: value}));
            assert.deepEqual([result.errors, result.value], [[], {v: value}], name);
        }
    });

    test("more choices than the server allows is an error the user sees", () => {
        const desc = form(SHAPES.multiple);
        const result = collect(desc, stateFromValue(desc, {v: ["a", "b", "c"]}));
        assert.deepEqual(
            result.errors.map((e) => e.code),
            ["maxItems"]
        );
    });
});

describe("elicitation forms start with every default (initialFormState's fillDefaults)", () => {
    // a server's question as the 2025-11-25 specification shapes it: flat, primitive fields
    const QUESTION = {
        type: "object",
        properties: {
            name: {type: "string", default: "Ada"},
            ratio: {type: "number", default: 3.14},
            count: {type: "integer", minimum: 1, default: 2},
            subscribe: {type: "boolean", default: true},
            quiet: {type: "boolean", default: false},
            color: {type: "string", enum: ["red", "green", "blue"], default: "green"},
            size: {
                type: "string",
                oneOf: [
                    {const: "s", title: "Small"},
                    {const: "l", title: "Large"},
                ],
                default: "l",
            },
            legacy: {type: "string", enum: ["r", "g"], enumNames: ["Red", "Green"], default: "g"},
            tags: {
                type: "array",
                items: {type: "string", enum: ["a", "b", "c"]},
                default: ["a", "c"],
            },
            titledTags: {
                type: "array",
                items: {
                    anyOf: [
                        {const: "x", title: "Ex"},
                        {const: "y", title: "Why"},
                    ],
                },
                default: ["y"],
            },
            plain: {type: "string"},
        },
        required: ["count"],
    };
    const DEFAULTS = {
        name: "Ada",
        ratio: 3.14,
        count: 2,
        subscribe: true,
        quiet: false,
        color: "green",
        size: "l",
        legacy: "g",
        tags: ["a", "c"],
        titledTags: ["y"],
    };
    const fresh = (schema) => {
        const desc = compileSchema(schema);
        return {desc, f: fields(desc), state: initialFormState(desc, {fillDefaults: true})};
    };

    test("an untouched form sends every default, each field as its kind holds it", () => {
        const {desc, state} = fresh(QUESTION);
        assert.deepEqual(collect(desc, state), {
            present: true,
            value: DEFAULTS,
            errors: [],
            partial: DEFAULTS,
        });
        const s = state.fields;
        assert.deepEqual(
            [s.name.raw, s.ratio.raw, s.count.raw, s.subscribe.checked, s.quiet.checked],
            ["Ada", "3.14", "2", true, false],
            "the inputs show the defaults"
        );
        assert.deepEqual(
            [s.color.index, s.size.index, s.legacy.index],
            [1, 1, 1],
            "the choices too"
        );
        assert.deepEqual(
            s.tags.items.map((item) => item.index),
            [0, 2]
        );
        assert.deepEqual(
            s.titledTags.items.map((item) => item.index),
            [1]
        );
        assert.equal(s.plain.present, false, "a field without a default starts empty");
    });

    test("the user clears an optional field: it is no longer sent", () => {
        const {desc, f, state} = fresh(QUESTION);
        setRaw(f.ratio, state.fields.ratio, "");
        setRaw(f.name, state.fields.name, "");
        setIndex(f.color, state.fields.color, -1);
        setChecked(f.subscribe, state.fields.subscribe, undefined);
        setPresent(f.tags, state.fields.tags, false);
        const {ratio, name, color, subscribe, tags, ...rest} = DEFAULTS;
        assert.deepEqual(collect(desc, state).value, rest);
        setRaw(f.ratio, state.fields.ratio, "2.5");
        assert.deepEqual(collect(desc, state).value, {...rest, ratio: 2.5});
    });

    test("a required field cleared shows the usual error at its input", () => {
        const {desc, f, state} = fresh(QUESTION);
        setRaw(f.count, state.fields.count, "");
        const result = collect(desc, state);
        assert.equal(result.value, undefined);
        assert.deepEqual(
            result.errors.map((e) => [e.path, e.code]),
            [[["count"], "required"]]
        );
        const choice = fresh({
            type: "object",
            properties: {c: QUESTION.properties.color},
            required: ["c"],
        });
        setIndex(choice.f.c, choice.state.fields.c, -1);
        assert.deepEqual(
            collect(choice.desc, choice.state).errors.map((e) => [e.path, e.code]),
            [[["c"], "required"]]
        );
    });

    test("a default the field's schema refuses is not filled in: it stays a hint", () => {
        const {desc, state} = fresh({
            type: "object",
            properties: {
                wrongType: {type: "integer", default: "many"},
                fraction: {type: "integer", default: 2.5},
                notAChoice: {type: "string", enum: ["red", "green"], default: "pink"},
                notATitledChoice: {
                    type: "string",
                    oneOf: [{const: "s", title: "Small"}],
                    default: "xl",
                },
                outOfRange: {type: "number", maximum: 10, default: 11},
                tooShort: {type: "string", minLength: 3, default: "ab"},
                unknownItem: {
                    type: "array",
                    items: {type: "string", enum: ["a"]},
                    default: ["a", "z"],
                },
                notAList: {type: "array", items: {type: "string", enum: ["a"]}, default: "a"},
                flag: {type: "boolean", default: "yes"},
                requiredWrong: {type: "number", default: "3"},
                good: {type: "string", default: "kept"},
            },
            required: ["requiredWrong"],
        });
        const result = collect(desc, state);
        assert.deepEqual(result.partial, {good: "kept"}, "only the default that fits is sent");
        assert.deepEqual(
            result.errors.map((e) => [e.path, e.code]),
            [[["requiredWrong"], "required"]]
        );
        assert.equal(
            fields(desc).wrongType.default,
            "many",
            "the bad default is still there for the hint"
        );
    });

    test("odd schemas and defaults do not break the form", () => {
        const cases = [
            [{type: "object", properties: {a: {default: {deep: [1]}}}}, {a: {deep: [1]}}],
            [
                {
                    type: "object",
                    properties: {a: true, b: false, c: {$ref: "#/nowhere", default: 1}},
                },
                {},
            ],
            [
                {type: "object", properties: {a: {type: ["string", "null"], default: null}}},
                {a: null},
            ],
            [
                {
                    type: "object",
                    properties: {a: {type: "object", properties: {b: {default: "in"}}}},
                    required: ["a"],
                },
                {a: {b: "in"}},
            ],
            [
                {
                    type: "object",
                    properties: {a: {anyOf: [{type: "string"}, {type: "integer"}], default: 4}},
                },
                {a: 4},
            ],
            [
                {type: "object", properties: {a: {type: "string", pattern: "(", default: "x"}}},
                {a: "x"},
            ],
        ];
        for (const [schema, expected] of cases) {
            const {desc, state} = fresh(schema);
            const result = collect(desc, state);
            const where = JSON.stringify(schema);
            assert.deepEqual([result.errors, result.value], [[], expected], where);
            assert.deepEqual(validate(schema, result.value), [], `what is sent is valid: ${where}`);
        }
    });

    test("the forms of a tool's or a prompt's arguments keep optional defaults as hints", () => {
        const desc = compileSchema(QUESTION);
        const state = initialFormState(desc);
        assert.deepEqual(
            collect(desc, state).value,
            {count: 2},
            "only a required field starts with its default"
        );
        assert.equal(state.fields.ratio.raw, "");
        assert.equal(state.fields.color.index, -1);
        const prompt = compileSchema({
            type: "object",
            properties: {style: {type: "string", default: "warm"}},
        });
        assert.deepEqual(collect(prompt, initialFormState(prompt)).value, {});
    });
});
