import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    ATTACHED_TEXT_LIMIT,
    attachment,
    composeMessage,
    pickerEntries,
    templateSchema,
} from "../src/composer/logic/resource_attach.js";

const NOTE = {
    uri: "notes://today",
    server: "Docs",
    contents: [{uri: "notes://today", mime_type: "text/markdown", text: "# Today", blob: null}],
};
const DOT = {
    uri: "images://dot.png",
    server: "Docs",
    contents: [{uri: "images://dot.png", mime_type: "image/png", text: null, blob: "iVBORw0KGgo="}],
};

describe("attachment", () => {
    test("a text resource becomes a chip with its text and size", () => {
        assert.deepEqual(attachment(NOTE), {
            key: "Docs:notes://today",
            uri: "notes://today",
            server: "Docs",
            mimeType: "text/markdown",
            text: "# Today",
            size: 7,
        });
    });

    test("a binary one is named with its size, without its data", () => {
        const chip = attachment(DOT);
        assert.equal(chip.text, null);
        assert.equal(chip.size, 8);
        assert.equal(JSON.stringify(chip).includes("iVBOR"), false);
    });
});

describe("composeMessage", () => {
    test("the user's words come first, then each attachment under a header naming it", () => {
        assert.equal(
            composeMessage("Summarise it ", [attachment(NOTE), attachment(DOT)]),
            "Summarise it\n\n[Attached resource notes://today (text/markdown) from Docs]\n# Today\n\n" +
                "[Attached resource images://dot.png (image/png) from Docs]\n[binary, 8 bytes: not included]"
        );
    });

    test("an attachment alone is a message", () => {
        assert.equal(
            composeMessage("  ", [attachment(NOTE)]),
            "[Attached resource notes://today (text/markdown) from Docs]\n# Today"
        );
    });

    test("a long text is cut with a visible marker, and all of them fit in one message", () => {
        const long = (n) => ({
            ...NOTE,
            uri: `notes://${n}`,
            contents: [{mime_type: "text/plain", text: "y".repeat(25000)}],
        });
        const message = composeMessage("Compare", [attachment(long(1)), attachment(long(2))]);
        assert.ok(
            message.includes(
                `${"y".repeat(ATTACHED_TEXT_LIMIT)}\n[... truncated: 5000 more characters not sent ...]`
            )
        );
        assert.ok(
            message.includes("[... truncated: 17000 more characters not sent ...]"),
            "the second gets what is left"
        );
        assert.ok(message.length < 32000);
    });
});

describe("pickerEntries", () => {
    const servers = [
        {
            server_id: 3,
            server: "Docs",
            resources: [
                {uri: "notes://today", name: "today", title: "Today's note"},
                {uri: "images://dot.png", name: "dot", title: "A dot"},
            ],
            templates: [
                {
                    uri_template: "notes://day/{day}",
                    name: "day",
                    title: "A day's note",
                    variables: ["day"],
                },
            ],
        },
    ];

    test("resources then templates, filtered by name, title, URI or description", () => {
        assert.deepEqual(
            pickerEntries(servers, "").map((r) => [r.kind, r.name]),
            [
                ["resource", "today"],
                ["resource", "dot"],
                ["template", "day"],
            ]
        );
        assert.deepEqual(
            pickerEntries(servers, "NOTE").map((r) => r.name),
            ["today", "day"]
        );
        assert.deepEqual(
            pickerEntries(servers, "png").map((r) => r.name),
            ["dot"]
        );
        assert.equal(pickerEntries(servers, "today")[0].serverId, 3);
    });

    test("a template's variables are asked as required texts", () => {
        assert.deepEqual(templateSchema(servers[0].templates[0]), {
            type: "object",
            properties: {day: {type: "string", title: "day", minLength: 1}},
            required: ["day"],
        });
    });
});
