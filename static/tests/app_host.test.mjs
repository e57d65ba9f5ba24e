import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    bcp47Locale,
    blockOutcome,
    callToolResult,
    checkDownload,
    checkModelContext,
    checkOpenLink,
    clampHeight,
    containerDimensions,
    decideDisplayMode,
    DOWNLOAD_LIMIT_BYTES,
    fileName,
    hostCapabilities,
    hostContext,
    INLINE_MAX_HEIGHT,
    messageText,
    MODEL_CONTEXT_LIMIT,
    renderedScheme,
    shouldTearDown,
    storedOutcome,
    styleVariables,
    TEARDOWN_AFTER_MS,
} from "../src/apps/logic/app_host.js";

const VIEWPORT = {width: 1280, height: 800};

describe("what the host tells an app about itself", () => {
    test("the scheme is the one the page is drawn in, not the one asked for", () => {
        // Odoo's light and dark backgrounds, as the browser computes them
        assert.equal(renderedScheme(["rgb(255, 255, 255)"]), "light");
        assert.equal(renderedScheme(["rgb(38, 42, 54)"]), "dark");
        // a transparent body: the root's colour says it
        assert.equal(renderedScheme(["rgba(0, 0, 0, 0)", "rgb(29, 32, 40)"]), "dark");
        assert.equal(renderedScheme(["rgba(0, 0, 0, 0)", "rgb(248, 249, 250)"]), "light");
        assert.equal(renderedScheme(["rgb(38 42 54 / 1)"]), "dark");
        // nothing readable: light, Odoo's default
        assert.equal(renderedScheme(["rgba(0, 0, 0, 0)", ""]), "light");
        assert.equal(renderedScheme([]), "light");
    });

    test("a user in Brussels with Odoo's dark scheme gets a dark, fr-BE, inline context", () => {
        const context = hostContext({
            colorScheme: "dark",
            lang: "fr_BE",
            timeZone: "Europe/Brussels",
            inlineWidth: 720.4,
            viewport: VIEWPORT,
            styles: {"--color-text-primary": "#fff"},
        });
        assert.deepEqual(context, {
            theme: "dark",
            platform: "web",
            displayMode: "inline",
            availableDisplayModes: ["inline", "fullscreen"],
            containerDimensions: {maxWidth: 720, maxHeight: INLINE_MAX_HEIGHT},
            styles: {variables: {"--color-text-primary": "#fff"}},
            locale: "fr-BE",
            timeZone: "Europe/Brussels",
        });
    });

    test("any scheme other than dark is light, and a missing language or zone is left out", () => {
        const context = hostContext({colorScheme: "", inlineWidth: 500, viewport: VIEWPORT});
        assert.equal(context.theme, "light");
        assert.equal("locale" in context, false);
        assert.equal("timeZone" in context, false);
    });

    test("fullscreen gives the app the whole window below the header, fixed", () => {
        assert.deepEqual(
            containerDimensions("fullscreen", {
                inlineWidth: 700,
                viewport: VIEWPORT,
                headerHeight: 48,
            }),
            {width: 1280, height: 752}
        );
        const context = hostContext({
            displayMode: "fullscreen",
            inlineWidth: 700,
            viewport: VIEWPORT,
            headerHeight: 48,
        });
        assert.equal(context.displayMode, "fullscreen");
        assert.deepEqual(context.containerDimensions, {width: 1280, height: 752});
    });

    test("the tool the app renders is described as an MCP tool, without the null fields", () => {
        const context = hostContext({
            inlineWidth: 500,
            viewport: VIEWPORT,
            tool: {name: "show_chart", title: null, description: "Plots", inputSchema: null},
        });
        assert.deepEqual(context.toolInfo, {
            tool: {name: "show_chart", inputSchema: {type: "object"}, description: "Plots"},
        });
    });

    test("Odoo language codes become BCP 47 tags", () => {
        assert.equal(bcp47Locale("fr_BE"), "fr-BE");
        assert.equal(bcp47Locale("zh_TW"), "zh-TW");
        assert.equal(bcp47Locale("sr@latin"), "sr-Latn");
        assert.equal(bcp47Locale("sr_RS@latin"), "sr-Latn-RS");
        assert.equal(bcp47Locale("en-US"), "en-US");
        assert.equal(bcp47Locale("de"), "de");
        assert.equal(bcp47Locale(""), undefined);
        assert.equal(bcp47Locale(undefined), undefined);
    });

    test("the style variables come from Odoo's Bootstrap CSS variables; unset ones are left out", () => {
        const bootstrap = {
            "--body-bg": " #262A36 ",
            "--body-color": "#e4e4e4",
            "--body-font-family": "Roboto, sans-serif",
            "--border-radius": "0.25rem",
            "--secondary-bg": "",
        };
        const variables = styleVariables((name) => bootstrap[name]);
        assert.deepEqual(variables, {
            "--color-background-primary": "#262A36",
            "--color-text-primary": "#e4e4e4",
            "--font-sans": "Roboto, sans-serif",
            "--border-radius-md": "0.25rem",
        });
    });

    test("the capabilities offer links, downloads, the server's tools and resources, logs, and the granted sandbox", () => {
        const capabilities = hostCapabilities({
            permissions: {camera: {}},
            csp: {connectDomains: ["https://api.example.com"]},
        });
        for (const name of [
            "openLinks",
            "downloadFile",
            "serverTools",
            "serverResources",
            "logging",
        ]) {
            assert.ok(capabilities[name], name);
        }
        assert.deepEqual(capabilities.sandbox, {
            permissions: {camera: {}},
            csp: {connectDomains: ["https://api.example.com"]},
        });
        assert.deepEqual(hostCapabilities({permissions: null, csp: null}).sandbox, {
            permissions: {},
            csp: {},
        });
    });
});

describe("display mode and size", () => {
    test("an app gets fullscreen when it declared it, or declared nothing", () => {
        assert.equal(decideDisplayMode("fullscreen", ["inline", "fullscreen"]), "fullscreen");
        assert.equal(decideDisplayMode("fullscreen", undefined), "fullscreen");
        assert.equal(decideDisplayMode("inline", ["inline"], "fullscreen"), "inline");
    });

    test("a mode one side lacks leaves the app where it is", () => {
        assert.equal(decideDisplayMode("pip", ["inline", "pip"], "inline"), "inline");
        assert.equal(decideDisplayMode("fullscreen", ["inline"], "inline"), "inline");
        assert.equal(decideDisplayMode("fullscreen", ["pip"], "inline"), "inline");
        assert.equal(decideDisplayMode("bogus", undefined, "fullscreen"), "fullscreen");
    });

    test("the height an app asks for is kept within bounds", () => {
        assert.equal(clampHeight(320.6), 321);
        assert.equal(clampHeight(5000), INLINE_MAX_HEIGHT);
        assert.equal(clampHeight(0), 60);
        assert.equal(clampHeight(undefined), null);
        assert.equal(clampHeight(Number.NaN), null);
    });
});

describe("links an app asks to open", () => {
    test("web and mail links are opened, naming the host or recipient", () => {
        assert.deepEqual(checkOpenLink("https://docs.example.com:8443/a?b=1"), {
            url: "https://docs.example.com:8443/a?b=1",
            host: "docs.example.com:8443",
        });
        assert.deepEqual(checkOpenLink("mailto:sales%40example.com"), {
            url: "mailto:sales%40example.com",
            host: "sales@example.com",
        });
    });

    test("a look-alike international host is shown as its real (punycode) name", () => {
        assert.equal(checkOpenLink("https://exаmple.com/").host, "xn--exmple-4nf.com");
    });

    test("other schemes are refused, naming the URL", () => {
        for (const url of ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x"]) {
            const {error} = checkOpenLink(url);
            assert.equal(error.code, "link_refused");
            assert.equal(error.url, url);
        }
    });

    test("what is no URL is refused as such", () => {
        assert.deepEqual(checkOpenLink("not a url"), {
            error: {code: "link_invalid", url: "not a url"},
        });
        assert.deepEqual(checkOpenLink(undefined), {error: {code: "link_invalid", url: ""}});
    });
});

describe("files an app asks to download", () => {
    test("an embedded text file is saved under the last segment of its URI", () => {
        const {files} = checkDownload([
            {
                type: "resource",
                resource: {
                    uri: "file:///exports/report%20q1.csv",
                    mimeType: "text/csv",
                    text: "a,é",
                },
            },
        ]);
        assert.deepEqual(files, [
            {name: "report q1.csv", mimeType: "text/csv", size: 4, text: "a,é"},
        ]);
    });

    test("an embedded binary is saved from its base64", () => {
        const {files} = checkDownload([
            {type: "resource", resource: {uri: "ui://app/chart.png", blob: "aGVsbG8="}},
        ]);
        assert.deepEqual(files, [
            {
                name: "chart.png",
                mimeType: "application/octet-stream",
                size: 5,
                base64: "aGVsbG8=",
            },
        ]);
    });

    test("a linked file must be http(s)", () => {
        const {files} = checkDownload([
            {type: "resource_link", uri: "https://cdn.example.com/a.pdf", name: "a.pdf", size: 10},
        ]);
        assert.equal(files[0].url, "https://cdn.example.com/a.pdf");
        assert.deepEqual(
            checkDownload([{type: "resource_link", uri: "file:///etc/passwd", name: "x"}]),
            {error: {code: "download_link_refused", url: "file:///etc/passwd"}}
        );
    });

    test("more than 10 MB in all is refused, saying the size and the limit", () => {
        const big = "a".repeat(6 * 1024 * 1024);
        const result = checkDownload([
            {type: "resource", resource: {uri: "a.txt", text: big}},
            {type: "resource", resource: {uri: "b.txt", text: big}},
        ]);
        assert.deepEqual(result, {
            error: {
                code: "download_too_large",
                size: 12 * 1024 * 1024,
                limit: DOWNLOAD_LIMIT_BYTES,
            },
        });
        assert.equal(DOWNLOAD_LIMIT_BYTES, 10 * 1024 * 1024);
    });

    test("nothing, invalid base64 or an unknown item is refused", () => {
        assert.deepEqual(checkDownload([]), {error: {code: "download_empty"}});
        assert.deepEqual(
            checkDownload([{type: "resource", resource: {uri: "x", blob: "not base64!"}}]),
            {error: {code: "download_unsupported", type: "resource"}}
        );
        assert.deepEqual(checkDownload([{type: "image", data: "aGVsbG8="}]), {
            error: {code: "download_unsupported", type: "image"},
        });
    });

    test("a file name cannot climb out of the download folder or hide", () => {
        assert.equal(fileName("https://x.example/a/..%2F..%2Fetc%2Fpasswd"), "passwd");
        assert.equal(fileName("..\\..\\boot.ini"), "boot.ini");
        assert.equal(fileName(".bashrc"), "bashrc");
        assert.equal(fileName("what?.txt"), "what_.txt");
        assert.equal(fileName(""), "download");
    });
});

describe("model context and messages", () => {
    test("text and structured content within the limit are kept", () => {
        const context = {
            content: [{type: "text", text: "Selected: row 3"}],
            structuredContent: {row: 3},
        };
        assert.deepEqual(checkModelContext(context), context);
        assert.deepEqual(checkModelContext({}), {content: [], structuredContent: null});
    });

    test("more than 8000 characters is refused, saying the limit", () => {
        const result = checkModelContext({
            content: [{type: "text", text: "x".repeat(7990)}],
            structuredContent: {a: "123456"},
        });
        assert.deepEqual(result, {
            error: {code: "context_too_long", length: 7990 + 14, limit: MODEL_CONTEXT_LIMIT},
        });
        assert.equal(MODEL_CONTEXT_LIMIT, 8000);
    });

    test("an image in the model context is refused", () => {
        assert.deepEqual(checkModelContext({content: [{type: "image", data: "x"}]}), {
            error: {code: "context_unsupported", type: "image"},
        });
    });

    test("a ui/message's text blocks become one message", () => {
        assert.deepEqual(
            messageText({
                role: "user",
                content: [
                    {type: "text", text: " Book room 2 "},
                    {type: "image", data: "x", mimeType: "image/png"},
                    {type: "text", text: "for Friday"},
                ],
            }),
            {text: "Book room 2\n\nfor Friday"}
        );
        assert.deepEqual(messageText({role: "user", content: [{type: "text", text: "  "}]}), {
            error: {code: "message_empty"},
        });
        assert.deepEqual(messageText({role: "assistant", content: [{type: "text", text: "x"}]}), {
            error: {code: "message_role", role: "assistant"},
        });
    });
});

describe("teardown of a hidden app", () => {
    test("an app collapsed for more than a minute is torn down; a shown one never", () => {
        const collapsedAt = 1_000_000;
        assert.equal(shouldTearDown(collapsedAt, collapsedAt + TEARDOWN_AFTER_MS), false);
        assert.equal(shouldTearDown(collapsedAt, collapsedAt + TEARDOWN_AFTER_MS + 1), true);
        assert.equal(shouldTearDown(null, collapsedAt + 10 * TEARDOWN_AFTER_MS), false);
        assert.equal(TEARDOWN_AFTER_MS, 60_000);
    });
});

describe("what the app is told when its call is over", () => {
    test("a stored result is sent as it is; a stored cancellation as a cancellation", () => {
        const result = {content: [{type: "text", text: "42"}], structuredContent: {value: 42}};
        assert.deepEqual(storedOutcome({result, cancelled: false}), {
            kind: "result",
            params: result,
        });
        assert.deepEqual(storedOutcome({result: null, cancelled: true}), {
            kind: "cancelled",
            params: {reason: "cancelled"},
        });
        assert.equal(storedOutcome({result: null, cancelled: false}), null);
    });

    test("a running call has no outcome yet", () => {
        assert.equal(blockOutcome({status: "running", result: null}), null);
        assert.equal(blockOutcome({status: "preparing", result: null}), null);
    });

    test("a stopped, denied or interrupted call is a cancellation with its reason", () => {
        const failed = {ok: false, content: [], errorCode: "CANCELLED"};
        assert.deepEqual(blockOutcome({status: "cancelled", result: failed}), {
            kind: "cancelled",
            params: {reason: "cancelled by the user"},
        });
        assert.deepEqual(
            blockOutcome({status: "denied", result: {...failed, errorCode: "TOOL_DENIED"}}),
            {kind: "cancelled", params: {reason: "denied by the user"}}
        );
        assert.deepEqual(
            blockOutcome({status: "error", result: {...failed, interrupted: "stopped"}}),
            {
                kind: "cancelled",
                params: {reason: "the user stopped the answer"},
            }
        );
    });

    test("a finished call's typed parts become an MCP result, structured content included", () => {
        const result = {
            ok: true,
            content: [
                {type: "text", text: '{"value": 42}'},
                {type: "structured", data: {value: 42}},
                {type: "image", mime_type: "image/png", data: "aGk="},
                {type: "resource", uri: "file:///a.txt", mime_type: "text/plain", text: "a"},
                {type: "resource_link", uri: "https://x.example/b", name: "b"},
            ],
        };
        assert.deepEqual(blockOutcome({status: "done", result}), {
            kind: "result",
            params: {
                content: [
                    {type: "text", text: '{"value": 42}'},
                    {type: "image", data: "aGk=", mimeType: "image/png"},
                    {
                        type: "resource",
                        resource: {uri: "file:///a.txt", mimeType: "text/plain", text: "a"},
                    },
                    {
                        type: "resource_link",
                        uri: "https://x.example/b",
                        name: "b",
                        description: undefined,
                        mimeType: undefined,
                    },
                ],
                isError: false,
                structuredContent: {value: 42},
            },
        });
    });

    test("a failed call without content tells the app the error message", () => {
        assert.deepEqual(
            callToolResult({
                ok: false,
                content: [],
                errorCode: "TIMEOUT",
                errorMessage: "Too slow",
            }),
            {content: [{type: "text", text: "Too slow"}], isError: true}
        );
    });
});
