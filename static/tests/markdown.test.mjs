import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {recordLink} from "../src/common/record_link.js";
import {renderMarkdown} from "../src/chat/logic/markdown.js";

const LINK_ATTRIBUTES = 'rel="noopener noreferrer" target="_blank"';

// Every tag the renderer may write, attributes included; anything else in the output is an injection.
const ALLOWED_TAGS = [
    /^<\/?(p|strong|em|code|pre|ul|ol|li|a|h[1-6]|table|thead|tbody|tr|th|td)>$/,
    /^<(th|td) class="text-(start|end|center)">$/,
    /^<a href="\/odoo\/[a-z0-9_.]+\/\d+" data-res-model="[a-z0-9_.]+" data-res-id="\d+">$/,
    /^<br>$/,
    /^<ol start="\d+">$/,
    /^<code class="language-[\w#+.-]+">$/,
    new RegExp(`^<a href="(https?://|mailto:)[^"<>]*" ${LINK_ATTRIBUTES}>$`, "i"),
];

function assertSafe(html, input) {
    for (const [index, piece] of html.split(/(<[^>]*>)/).entries()) {
        if (index % 2) {
            assert.ok(
                ALLOWED_TAGS.some((tag) => tag.test(piece)),
                `unexpected tag ${piece} for ${JSON.stringify(input)}`
            );
        } else {
            assert.doesNotMatch(
                piece,
                /[<>"']/,
                `raw character in text ${JSON.stringify(piece)} for ${JSON.stringify(input)}`
            );
        }
    }
}

describe("renderMarkdown renders", () => {
    const cases = [
        ["paragraphs and line breaks", "Hello\nworld\n\nBye", "<p>Hello<br>world</p><p>Bye</p>"],
        ["CRLF and CR line endings", "a\r\nb\rc", "<p>a<br>b<br>c</p>"],
        ["bold and emphasis", "**bold** and *em*", "<p><strong>bold</strong> and <em>em</em></p>"],
        [
            "emphasis inside bold",
            "**very *much* so**",
            "<p><strong>very <em>much</em> so</strong></p>",
        ],
        ["stars that wrap nothing", "2 * 3 * 4 and a ** b", "<p>2 * 3 * 4 and a ** b</p>"],
        ["underscores as text", "snake_case_name", "<p>snake_case_name</p>"],
        [
            "inline code, verbatim and escaped",
            "run `a **b** <c>`",
            "<p>run <code>a **b** &lt;c&gt;</code></p>",
        ],
        ["code holding a backtick", "`` a`b ``", "<p><code>a`b</code></p>"],
        ["an unmatched backtick", "it`s", "<p>it`s</p>"],
        ["backslash escapes", "\\*not em\\* \\`x\\`", "<p>*not em* `x`</p>"],
        ["headings", "# One\n## Two\n### Three", "<h1>One</h1><h2>Two</h2><h3>Three</h3>"],
        ["a hash without a space", "#hashtag", "<p>#hashtag</p>"],
        [
            "a fenced block with its language",
            "```python\nif a < b:\n    print('x')\n```",
            '<pre><code class="language-python">if a &lt; b:\n    print(&#39;x&#39;)</code></pre>',
        ],
        [
            "a fence holding markdown verbatim",
            "```\n# not a heading\n- not a list\n```",
            "<pre><code># not a heading\n- not a list</code></pre>",
        ],
        [
            "a longer fence around a shorter one",
            "````md\n```js\nx\n```\n````",
            '<pre><code class="language-md">```js\nx\n```</code></pre>',
        ],
        [
            "an unclosed fence while streaming",
            "Here:\n```js\nconst a = 1;\nconst b",
            '<p>Here:</p><pre><code class="language-js">const a = 1;\nconst b</code></pre>',
        ],
        ["an unordered list", "- a\n* b\n+ c", "<ul><li>a</li><li>b</li><li>c</li></ul>"],
        [
            "an ordered list after a paragraph",
            "Steps:\n1. one\n2) two",
            "<p>Steps:</p><ol><li>one</li><li>two</li></ol>",
        ],
        [
            "an ordered list not starting at 1",
            "3. c\n4. d",
            '<ol start="3"><li>c</li><li>d</li></ol>',
        ],
        [
            "blank lines between items",
            "1. a\n\n2. b\n\n\nafter",
            "<ol><li>a</li><li>b</li></ol><p>after</p>",
        ],
        [
            "nested lists",
            "- a\n  1. a1\n  2. a2\n- b\n    - b1",
            "<ul><li>a<ol><li>a1</li><li>a2</li></ol></li><li>b<ul><li>b1</li></ul></li></ul>",
        ],
        [
            "an item continued on an indented line",
            "- first\n  more\n- second",
            "<ul><li>first<br>more</li><li>second</li></ul>",
        ],
        ["lists of both kinds in a row", "- a\n1. b", "<ul><li>a</li></ul><ol><li>b</li></ol>"],
        [
            "a fence inside a list item",
            "1. Run:\n   ```sh\n   ls -l\n   ```\n2. Done",
            '<ol><li>Run:</li></ol><pre><code class="language-sh">ls -l</code></pre><ol start="2"><li>Done</li></ol>',
        ],
        [
            "inline syntax in items and headings",
            "## The `x` **key**\n- see *this*",
            "<h2>The <code>x</code> <strong>key</strong></h2><ul><li>see <em>this</em></li></ul>",
        ],
        [
            "an https link",
            "[Odoo](https://www.odoo.com/page?a=1&b=2)",
            `<p><a href="https://www.odoo.com/page?a=1&amp;b=2" ${LINK_ATTRIBUTES}>Odoo</a></p>`,
        ],
        [
            "an http link with bold text",
            "[**docs**](http://example.com)",
            `<p><a href="http://example.com" ${LINK_ATTRIBUTES}><strong>docs</strong></a></p>`,
        ],
        [
            "a mailto link",
            "[mail us](mailto:help@example.com)",
            `<p><a href="mailto:help@example.com" ${LINK_ATTRIBUTES}>mail us</a></p>`,
        ],
        ["a relative link as text", "[home](/web#action=1)", "<p>[home](/web#action=1)</p>"],
        ["brackets that are no link", "[a] (b) [c](d e)", "<p>[a] (b) [c](d e)</p>"],
        ["nothing", "", ""],
        ["only blank lines", "\n  \n\t\n", ""],
    ];
    for (const [name, input, expected] of cases) {
        test(name, () => {
            const html = renderMarkdown(input);
            assert.equal(html, expected);
            assertSafe(html, input);
        });
    }

    test("a text streamed in deltas renders as its complete prefix at every step", () => {
        const answer =
            "# Plan\n1. **Find** the `leads`\n2. Mail [them](https://x.org)\n```sql\nSELECT 1;\n```\nDone.";
        for (let end = 0; end <= answer.length; end++) {
            assertSafe(renderMarkdown(answer.slice(0, end)), answer.slice(0, end));
        }
    });
});

describe("renderMarkdown escapes", () => {
    const vectors = [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<svg/onload=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<style>body{display:none}</style>",
        "<iframe src=//evil.example></iframe>",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "\\<script>alert(1)\\</script>",
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](javascript://%0Aalert(1))",
        "[x](java\tscript:alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[x](vbscript:msgbox(1))",
        "[x](//evil.example)",
        '[x](https://a.example/"onmouseover="alert(1))',
        "[x](https://a.example/'onmouseover='alert(1))",
        '[x](https://a.example/"><script>alert(1)</script>)',
        '[x" onclick="alert(1)](https://a.example)',
        "[<img src=x onerror=alert(1)>](https://a.example)",
        '![x](https://a.example/x.png" onerror="alert(1))',
        "`<script>alert(1)</script>`",
        "**<b onmouseover=alert(1)>x</b>**",
        "*<i>x</i>*",
        "# <h1 onclick=alert(1)>",
        "- <li onclick=alert(1)>",
        "1. <ol start=1 onclick=alert(1)>",
        "```<script>alert(1)</script>\nx\n```",
        '```js" onclick="alert(1)\nx\n```',
        "```\n</code></pre><script>alert(1)</script>\n```",
        "```\n</code></pre><script>alert(1)",
    ];
    for (const input of vectors) {
        test(JSON.stringify(input), () => {
            const html = renderMarkdown(input);
            assertSafe(html, input);
            assert.doesNotMatch(html, /<(script|img|svg|iframe|style|b |i>|h1 |li |ol start=1)/i);
            assert.doesNotMatch(html, /href="(?!https?:\/\/|mailto:|\/odoo\/)/i);
        });
    }

    test("a quote in a link URL stays inside the href", () => {
        assert.equal(
            renderMarkdown('[x](https://a.example/"onmouseover="alert(1))'),
            `<p><a href="https://a.example/&quot;onmouseover=&quot;alert(1" ${LINK_ATTRIBUTES}>x</a>)</p>`
        );
    });

    test("a link to a refused scheme shows as the text the model wrote", () => {
        assert.equal(renderMarkdown("[x](javascript:alert(1))"), "<p>[x](javascript:alert(1))</p>");
    });
});

describe("renderMarkdown on long, hostile input", () => {
    // Correctness only, on inputs of up to 200 KB: a step quadratic in the input (a backtracking
    // regex, a search restarted at every character) would stall the suite instead of taking milliseconds.
    const paragraph = (text) => `<p>${text}</p>`;
    const growingRuns = Array.from({length: 600}, (_, k) => "`".repeat(k + 1) + "x").join("");
    const cases = {
        "unclosed brackets": ["[".repeat(200_000), paragraph("[".repeat(200_000))],
        "link openings": ["[a](".repeat(50_000), paragraph("[a](".repeat(50_000))],
        "links with a space in the URL": [
            "[a](b ".repeat(40_000),
            paragraph("[a](b ".repeat(40_000).trim()),
        ],
        "lone stars": ["*a ".repeat(70_000), paragraph("*a ".repeat(70_000).trim())],
        "lone double stars": ["**a ".repeat(50_000), paragraph("**a ".repeat(50_000).trim())],
        "a run of stars": ["*".repeat(200_000), paragraph("*".repeat(200_000))],
        "backtick runs of growing length": [growingRuns, paragraph(growingRuns)],
        "backtick pairs": ["a`".repeat(100_000), paragraph("a<code>a</code>".repeat(50_000))],
        hashes: ["#".repeat(200_000) + " x", paragraph("#".repeat(200_000) + " x")],
        "spaces before backticks": [" ".repeat(200_000) + "x```", paragraph("x```")],
        fences: ["```\n".repeat(50_000), "<pre><code></code></pre>".repeat(25_000)],
        "a deep list": [
            Array.from({length: 400}, (_, k) => "  ".repeat(k) + "- x").join("\n"),
            "<ul><li>x".repeat(400) + "</li></ul>".repeat(400),
        ],
        "many items apart": ["- a\n\n".repeat(40_000), `<ul>${"<li>a</li>".repeat(40_000)}</ul>`],
        backslashes: ["\\".repeat(200_000), paragraph("\\".repeat(100_000))],
    };
    for (const [name, [input, expected]] of Object.entries(cases)) {
        test(name, () => {
            assert.equal(renderMarkdown(input), expected);
        });
    }
});

describe("renderMarkdown renders tables", () => {
    const cases = [
        [
            "a table with a header, aligned columns and inline syntax",
            "| Name | **Due** | Total |\n|:-----|:---:|---:|\n| `SO1` | *today* | 10 |",
            '<table><thead><tr><th class="text-start">Name</th><th class="text-center"><strong>Due</strong></th><th class="text-end">Total</th></tr></thead>' +
                '<tbody><tr><td class="text-start"><code>SO1</code></td><td class="text-center"><em>today</em></td><td class="text-end">10</td></tr></tbody></table>',
        ],
        [
            "a table after a paragraph line, ended by a blank line",
            "Orders:\na | b\n--- | ---\n1 | 2\n\nDone.",
            "<p>Orders:</p><table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table><p>Done.</p>",
        ],
        [
            "short rows padded, long rows cut to the header's columns",
            "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |",
            "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td></td></tr><tr><td>1</td><td>2</td></tr></tbody></table>",
        ],
        [
            "an escaped pipe inside a cell",
            "| a |\n|---|\n| x \\| y |",
            "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>x | y</td></tr></tbody></table>",
        ],
        [
            "a delimiter row of another width is no table",
            "| a | b |\n|---|\n| 1 | 2 |",
            "<p>| a | b |<br>|---|<br>| 1 | 2 |</p>",
        ],
        ["pipes in a sentence", "a | b and c | d", "<p>a | b and c | d</p>"],
        [
            "a table ended by a line without a pipe",
            "| a |\n|---|\n| 1 |\nNext line",
            "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table><p>Next line</p>",
        ],
    ];
    for (const [name, input, expected] of cases) {
        test(name, () => {
            const html = renderMarkdown(input);
            assert.equal(html, expected);
            assertSafe(html, input);
        });
    }

    test("a table streamed in deltas is a table from its delimiter row on, never raw HTML", () => {
        const answer =
            "Found:\n\n| Partner | Note |\n| --- | --- |\n| [Azure](/odoo/res.partner/14) | <img src=x onerror=alert(1)> |\n| [x](javascript:alert(1)) | <script>alert(1)</script> |\n\nThat is all.";
        const headerEnd = answer.indexOf("| --- |") + 1;
        for (let end = 0; end <= answer.length; end++) {
            const html = renderMarkdown(answer.slice(0, end));
            assertSafe(html, answer.slice(0, end));
            if (end >= headerEnd) {
                assert.match(
                    html,
                    /^<p>Found:<\/p><table><thead><tr><th>Partner<\/th><th>Note<\/th>/
                );
            }
        }
    });

    test("a half-streamed row shows the cells so far, the rest empty", () => {
        assert.equal(
            renderMarkdown("| a | b | c |\n|---|---|---|\n| 1 | [Azure](/odoo/res.par"),
            "<table><thead><tr><th>a</th><th>b</th><th>c</th></tr></thead><tbody><tr><td>1</td><td>[Azure](/odoo/res.par</td><td></td></tr></tbody></table>"
        );
    });
});

describe("renderMarkdown escapes in table cells", () => {
    const vectors = [
        "| a |\n|---|\n| <script>alert(1)</script> |",
        "| a |\n|---|\n| <img src=x onerror=alert(1)> |",
        "| a |\n|---|\n| [x](javascript:alert(1)) |",
        "| a |\n|---|\n| [x](JaVaScRiPt:alert(1)) |",
        "| <th onclick=alert(1)> |\n|---|\n| x |",
        '| a |\n|---|\n| [x](/odoo/res.partner/1" onclick="alert(1)) |',
        '| a |\n|--:" onclick="alert(1)|\n| x |',
    ];
    for (const input of vectors) {
        test(JSON.stringify(input), () => {
            const html = renderMarkdown(input);
            assertSafe(html, input);
            assert.doesNotMatch(html, /<(script|img|th |td )(?! ?class="text-)/i);
            assert.doesNotMatch(html, /href="(?!https?:\/\/|mailto:|\/odoo\/)/i);
        });
    }

    test("a javascript: link in a cell is the text the model wrote", () => {
        assert.equal(
            renderMarkdown("| a |\n|---|\n| [x](javascript:alert(1)) |"),
            "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>[x](javascript:alert(1))</td></tr></tbody></table>"
        );
    });
});

describe("record links", () => {
    test("a link to a record's form in the web client carries the record", () => {
        assert.equal(
            renderMarkdown("[Azure Interior](/odoo/res.partner/14)"),
            '<p><a href="/odoo/res.partner/14" data-res-model="res.partner" data-res-id="14">Azure Interior</a></p>'
        );
    });

    const opened = [
        ["/odoo/res.partner/14", {model: "res.partner", id: 14}],
        ["/odoo/sale.order.line/7", {model: "sale.order.line", id: 7}],
        ["/odoo/x_custom_model/1", {model: "x_custom_model", id: 1}],
    ];
    for (const [url, record] of opened) {
        test(`${url} opens its record`, () => assert.deepEqual(recordLink(url), record));
    }

    const inert = [
        "/odoo/res.partner/0",
        "/odoo/res.partner/14/edit",
        "/odoo/res.partner/14?debug=1",
        "/odoo/res.partner/new",
        "/odoo/action-123/14",
        "/odoo/Res.Partner/14",
        "/odoo//14",
        "/odoo/res.partner/99999999999",
        "//odoo/res.partner/14",
        "/web#id=14&model=res.partner",
        "https://evil.example/odoo/res.partner/14",
        "javascript:alert(1)//odoo/res.partner/14",
        " /odoo/res.partner/14",
        null,
    ];
    for (const url of inert) {
        test(`${JSON.stringify(url)} is no record link`, () => {
            assert.equal(recordLink(url), null);
            if (url) {
                const html = renderMarkdown(`[x](${url})`);
                assert.doesNotMatch(html, /data-res-model/);
                assertSafe(html, url);
            }
        });
    }

    test("a relative link that is no record stays text", () => {
        assert.equal(renderMarkdown("[x](/odoo/action-1/2)"), "<p>[x](/odoo/action-1/2)</p>");
    });
});

describe("renderMarkdown on long, hostile tables", () => {
    const cases = {
        "a row of pipes": [`|${"|".repeat(200_000)}\n|---|`],
        "many columns": [`${"| a ".repeat(50_000)}|\n${"|---".repeat(50_000)}|`],
        "many rows": [`| a |\n|---|\n${"| x |\n".repeat(40_000)}`],
        "escaped pipes": [`| ${"\\|".repeat(100_000)} |\n|---|`],
    };
    for (const [name, [input]] of Object.entries(cases)) {
        test(name, () => {
            assertSafe(renderMarkdown(input), name);
        });
    }
});
