import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    matchPrompts,
    moveIndex,
    promptSchema,
    slashQuery,
} from "../src/composer/logic/prompt_menu.js";
import {compileSchema} from "../src/schema_form/logic/schema_fields.js";
import {collect, initialFormState, setRaw} from "../src/schema_form/logic/schema_form_state.js";

const PROMPTS = [
    {
        server_id: 1,
        server: "Docs",
        name: "review",
        title: "Review a file",
        description: "Review with its contents",
        arguments: [{name: "path", required: true}],
    },
    {
        server_id: 1,
        server: "Docs",
        name: "daily_summary",
        title: "Daily summary",
        description: "What happened today",
        arguments: [],
    },
    {
        server_id: 2,
        server: "Greeter",
        name: "greeting",
        title: "Write a greeting",
        description: "A greeting, in a style",
        arguments: [
            {name: "name", description: "Who to greet", required: true},
            {name: "style", required: false},
        ],
    },
];

describe("slashQuery", () => {
    test("a message that starts with / and has no space is a prompt search", () => {
        assert.equal(slashQuery("/"), "");
        assert.equal(slashQuery("/gree"), "gree");
    });

    test("anything else is a message", () => {
        for (const text of ["", "hello /x", " /x", "/x y", "/x\n", null, undefined]) {
            assert.equal(slashQuery(text), null, JSON.stringify(text));
        }
    });
});

describe("matchPrompts", () => {
    test("an empty search lists every prompt in the servers' order", () => {
        assert.deepEqual(
            matchPrompts(PROMPTS, "").map((p) => p.name),
            ["review", "daily_summary", "greeting"]
        );
    });

    test("names and titles that start with the search come first, then those containing it, then descriptions and servers", () => {
        assert.deepEqual(
            matchPrompts(PROMPTS, "gr").map((p) => p.name),
            ["greeting"]
        );
        assert.deepEqual(
            matchPrompts(PROMPTS, "re").map((p) => p.name),
            ["review", "greeting"]
        );
        assert.deepEqual(
            matchPrompts(PROMPTS, "today").map((p) => p.name),
            ["daily_summary"]
        );
        assert.deepEqual(
            matchPrompts(PROMPTS, "GREETER").map((p) => p.name),
            ["greeting"]
        );
        assert.deepEqual(matchPrompts(PROMPTS, "nothing like it"), []);
    });

    test("at most the limit is shown", () => {
        const many = Array.from({length: 30}, (_, i) => ({name: `p${i}`, arguments: []}));
        assert.equal(matchPrompts(many, "p").length, 20);
    });
});

describe("promptSchema", () => {
    test("the form asks every argument as text, the required ones marked and not left empty", () => {
        const schema = promptSchema(PROMPTS[2]);
        assert.deepEqual(schema, {
            type: "object",
            properties: {
                name: {type: "string", title: "name", description: "Who to greet", minLength: 1},
                style: {type: "string", title: "style"},
            },
            required: ["name"],
        });
        const desc = compileSchema(schema);
        const state = initialFormState(desc);
        assert.ok(
            collect(desc, state).errors.some((e) => e.path.join(".") === "name"),
            "an empty required argument is an error"
        );
        setRaw(
            desc.fields.find((f) => f.key === "name"),
            state.fields.name,
            "Ada"
        );
        const filled = collect(desc, state);
        assert.deepEqual(filled.errors, []);
        assert.equal(filled.value.name, "Ada");
    });

    test("a prompt without arguments needs no form", () => {
        assert.deepEqual(promptSchema(PROMPTS[1]), {type: "object", properties: {}, required: []});
    });
});

describe("moveIndex", () => {
    test("arrow keys move through the rows and wrap around", () => {
        assert.equal(moveIndex(0, 1, 3), 1);
        assert.equal(moveIndex(2, 1, 3), 0);
        assert.equal(moveIndex(0, -1, 3), 2);
        assert.equal(moveIndex(5, 1, 0), 0);
    });
});
