import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    allDecided,
    approvalsFor,
    clickedRecord,
    formatDuration,
    iconSrc,
    progressPercent,
    imageDataUri,
    isStreamingStatus,
    prettyJson,
    resultItems,
} from "../src/common/chat_view.js";

const PNG =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("imageDataUri", () => {
    test("builds a data URI for the four raster types, whatever the case of the type", () => {
        for (const mime of ["image/png", "image/jpeg", "image/gif", "image/webp", "IMAGE/PNG"]) {
            assert.equal(
                imageDataUri({type: "image", mime_type: mime, data: PNG}),
                `data:${mime.toLowerCase()};base64,${PNG}`
            );
        }
    });

    test("refuses every other type: SVG runs scripts, others are not images", () => {
        for (const mime of [
            "image/svg+xml",
            "text/html",
            "image/png;charset=x",
            "image",
            "",
            null,
            undefined,
            42,
        ]) {
            assert.equal(
                imageDataUri({type: "image", mime_type: mime, data: PNG}),
                null,
                String(mime)
            );
        }
    });

    test("refuses data that is not strictly base64, so nothing can leave the URI", () => {
        for (const data of [
            "",
            "abc",
            "AAAA,<script>",
            'AA"A',
            "AAAA)",
            "A===",
            null,
            7,
            "%41AA",
        ]) {
            assert.equal(imageDataUri({mime_type: "image/png", data}), null, String(data));
        }
    });

    test("drops line breaks that some servers put in base64", () => {
        assert.equal(
            imageDataUri({mime_type: "image/gif", data: "AAAA\nBBBB\r\n"}),
            "data:image/gif;base64,AAAABBBB"
        );
    });
});

describe("prettyJson and formatDuration", () => {
    test("indents JSON and never throws", () => {
        assert.equal(prettyJson({a: [1, "x"]}), '{\n  "a": [\n    1,\n    "x"\n  ]\n}');
        assert.equal(prettyJson(undefined), "");
        const cycle = {};
        cycle.self = cycle;
        assert.equal(prettyJson(cycle), "[object Object]");
        assert.equal(prettyJson(10n), "10");
    });

    test("durations read naturally", () => {
        assert.equal(formatDuration(0), "0 ms");
        assert.equal(formatDuration(35.4), "35 ms");
        assert.equal(formatDuration(1234), "1.2 s");
        assert.equal(formatDuration(30000), "30 s");
        assert.equal(formatDuration(65000), "1 min 5 s");
        assert.equal(formatDuration(120000), "2 min");
        for (const nothing of [null, undefined, -1, NaN, Infinity, "12"]) {
            assert.equal(formatDuration(nothing), "");
        }
    });
});

describe("resultItems", () => {
    test("text, images, structured content, resources and links, in order", () => {
        const items = resultItems([
            {type: "text", text: "5 leads"},
            {type: "image", mime_type: "image/png", data: PNG},
            {type: "image", mime_type: "image/svg+xml", data: "PHN2Zz4="},
            {type: "audio", mime_type: "audio/wav", data: "AAAA"},
            {
                type: "resource",
                uri: "file:///notes.txt",
                mime_type: "text/plain",
                text: "the notes",
            },
            {type: "resource", uri: "file:///a.bin", blob: "AAAAAA=="},
            {
                type: "resource_link",
                uri: "https://example.com/doc",
                name: "Doc",
                description: "A doc",
            },
            {type: "resource_link", uri: "javascript:alert(1)", name: "Bad"},
            {type: "structured", data: {city: "Paris"}},
        ]);
        assert.deepEqual(
            items.map((item) => item.kind),
            ["text", "image", "blocked", "blocked", "resource", "blocked", "link", "link", "fields"]
        );
        assert.deepEqual(
            items.map((item) => item.index),
            [0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert.equal(items[1].src, `data:image/png;base64,${PNG}`);
        assert.deepEqual(
            [items[2].type, items[2].mimeType, items[2].bytes],
            ["image", "image/svg+xml", 5]
        );
        assert.deepEqual([items[3].type, items[3].bytes], ["audio", 3]);
        assert.equal(items[4].text, "the notes");
        assert.deepEqual(
            [items[5].type, items[5].bytes, items[5].uri],
            ["resource", 4, "file:///a.bin"]
        );
        assert.equal(items[6].href, "https://example.com/doc");
        assert.equal(items[7].href, null, "only http(s) links can be opened");
        assert.deepEqual(items[8].rows, [["city", "Paris"]]);
    });

    test("a text part that repeats the structured content is shown once", () => {
        const items = resultItems([
            {type: "text", text: '{"celsius": 21.5, "city": "Paris"}'},
            {type: "structured", data: {city: "Paris", celsius: 21.5}},
        ]);
        assert.deepEqual(
            items.map((item) => item.kind),
            ["fields"]
        );
        assert.deepEqual(items[0].rows, [
            ["city", "Paris"],
            ["celsius", "21.5"],
        ]);
    });

    test("a plain value sent as text and wrapped as structured {result} is shown once, as the text", () => {
        for (const [text, result] of [
            ["5.0", 5.0],
            ["5", 5],
            ["true", true],
            ["done", "done"],
            ["[1, 2]", [1, 2]],
        ]) {
            const items = resultItems([
                {type: "text", text},
                {type: "structured", data: {result}},
            ]);
            assert.equal(items.length, 1, text);
        }
        const different = resultItems([
            {type: "text", text: "see below"},
            {type: "structured", data: {result: 5}},
        ]);
        assert.deepEqual(
            different.map((item) => item.kind),
            ["text", "fields"],
            "a text that says something else stays"
        );
    });

    test("a list of flat records is a table; nested data stays JSON", () => {
        const leads = Array.from({length: 60}, (_, i) => ({
            name: `Lead ${i}`,
            score: i,
            won: i % 2 === 0,
        }));
        leads[3] = {name: "Lead 3", owner: "Ann"};
        const [table] = resultItems([{type: "structured", data: {leads}}]);
        assert.equal(table.kind, "table");
        assert.equal(table.caption, "leads");
        assert.deepEqual(table.columns, ["name", "score", "won", "owner"]);
        assert.deepEqual(table.rows[0], ["Lead 0", "0", "true", ""]);
        assert.deepEqual(table.rows[3], ["Lead 3", "", "", "Ann"]);
        assert.equal(table.rows.length, 50);
        assert.equal(table.more, 10);
        const [nested] = resultItems([{type: "structured", data: {a: {b: 1}, c: 2}}]);
        assert.equal(nested.kind, "json");
        assert.deepEqual(nested.value, {a: {b: 1}, c: 2}, "shown as a tree that folds");
    });

    test("records of a This Odoo result are links to their forms; other URLs are no links", () => {
        const data = {
            model: "res.partner",
            model_name: "Contact",
            records: [
                {
                    id: 14,
                    display_name: "Azure Interior",
                    url: "/odoo/res.partner/14",
                    city: "Paris",
                },
                {id: 15, display_name: "Evil", url: "javascript:alert(1)"},
                {id: 16, display_name: "Far", url: "https://evil.example/odoo/res.partner/16"},
            ],
            count: 120,
            returned: 3,
            more: "offset 3",
        };
        const [records] = resultItems([
            {type: "text", text: "| [Azure Interior](/odoo/res.partner/14) | Paris |"},
            {type: "structured", data},
        ]).slice(1);
        assert.deepEqual(records, {
            kind: "records",
            modelName: "Contact",
            records: [
                {
                    key: 0,
                    name: "Azure Interior",
                    href: "/odoo/res.partner/14",
                    model: "res.partner",
                    id: 14,
                },
                {key: 1, name: "Evil", href: null, model: null, id: null},
                {key: 2, name: "Far", href: null, model: null, id: null},
            ],
            count: 120,
            returned: 3,
            index: 1,
        });
    });

    test("JSON written as text is indented; other text stays as it is", () => {
        assert.deepEqual(resultItems([{type: "text", text: '[1, {"a": 2}]'}])[0], {
            kind: "json",
            json: '[\n  1,\n  {\n    "a": 2\n  }\n]',
            index: 0,
        });
        for (const text of ["42", "{not json", "<b>bold</b>", ""]) {
            assert.deepEqual(resultItems([{type: "text", text}])[0], {
                kind: "text",
                text,
                index: 0,
            });
        }
    });

    test("unknown part types are shown as JSON; junk is skipped", () => {
        assert.deepEqual(resultItems([{type: "video", uri: "x"}, null, "text"]), [
            {kind: "json", json: '{\n  "type": "video",\n  "uri": "x"\n}', index: 0},
        ]);
        assert.deepEqual(resultItems(undefined), []);
    });
});

describe("approvals", () => {
    const calls = [{id: "a"}, {id: "b"}];

    test("every call must be answered; the answers become the resume body", () => {
        assert.equal(allDecided(calls, {a: true}), false);
        assert.equal(allDecided(calls, {a: true, b: false}), true);
        assert.deepEqual(approvalsFor(calls, {a: true, b: false, c: true}), {a: true, b: false});
        assert.equal(allDecided(calls, {a: "conversation", b: false}), true);
        assert.deepEqual(
            approvalsFor(calls, {a: "conversation", b: true}),
            {a: "conversation", b: true},
            "allowed for the rest of the conversation"
        );
        assert.deepEqual(
            approvalsFor(calls, {a: "yes"}),
            {a: false, b: false},
            "anything but true denies"
        );
    });
});

describe("isStreamingStatus", () => {
    test("the model or tools are working", () => {
        assert.deepEqual(
            [
                "idle",
                "thinking",
                "running_tools",
                "awaiting_approval",
                "awaiting_confirmation",
                "error",
            ].map(isStreamingStatus),
            [false, true, true, false, false, false]
        );
    });
});

describe("progressPercent", () => {
    test("a share of the total, kept within 0 and 100", () => {
        assert.equal(progressPercent({progress: 3, total: 4}), 75);
        assert.equal(progressPercent({progress: 12, total: 10}), 100);
        assert.equal(progressPercent({progress: -1, total: 10}), 0);
    });

    test("no total, a zero total or no progress yet: an indeterminate bar", () => {
        assert.equal(progressPercent({progress: 3, total: null}), null);
        assert.equal(progressPercent({progress: 3, total: 0}), null);
        assert.equal(progressPercent(null), null);
    });
});

describe("iconSrc", () => {
    test("a raster data URI is an icon; remote URLs, SVG and junk are not", () => {
        assert.equal(iconSrc(`data:image/png;base64,${PNG}`), `data:image/png;base64,${PNG}`);
        for (const bad of [
            "https://x.example.com/i.png",
            "data:image/svg+xml;base64,PHN2Zz4=",
            "data:image/png;base64,@@",
            null,
            3,
        ]) {
            assert.equal(iconSrc(bad), null, String(bad));
        }
    });
});

describe("resultItems: embedded binary resources", () => {
    test("carry their data and URI so the user can download them, not see them", () => {
        const [item] = resultItems([
            {
                type: "resource",
                uri: "images://dot.png",
                mime_type: "image/png",
                text: null,
                blob: PNG,
            },
        ]);
        assert.deepEqual(
            [item.kind, item.type, item.uri, item.mimeType, item.blob, item.bytes],
            ["blocked", "resource", "images://dot.png", "image/png", PNG, 70]
        );
    });
});

describe("clickedRecord", () => {
    const click = (href, options = {}) => ({
        button: 0,
        target: {
            closest: (selector) =>
                selector === "a[href]" && href !== null ? {getAttribute: () => href} : null,
        },
        ...options,
    });

    test("a plain click on a record link opens that record", () => {
        assert.deepEqual(clickedRecord(click("/odoo/res.partner/14")), {
            model: "res.partner",
            id: 14,
            href: "/odoo/res.partner/14",
        });
    });

    test("a click asking for a new tab or window is left to the browser", () => {
        for (const options of [
            {ctrlKey: true},
            {metaKey: true},
            {shiftKey: true},
            {altKey: true},
            {button: 1},
        ]) {
            assert.equal(clickedRecord(click("/odoo/res.partner/14", options)), null);
        }
    });

    test("any other link, or no link, is not opened as a record", () => {
        for (const href of [
            "https://example.com/odoo/res.partner/1",
            "/web#id=1&model=res.partner",
            "javascript:alert(1)",
            null,
        ]) {
            assert.equal(clickedRecord(click(href)), null);
        }
    });
});
