import assert from "node:assert/strict";
import {readFileSync} from "node:fs";
import {describe, test} from "node:test";
import vm from "node:vm";

// the proxy is a plain script inlined in the sandbox page: it runs here against a fake page
const SOURCE = readFileSync(
    new URL("../src/app_sandbox/sandbox_proxy.js", import.meta.url),
    "utf8"
);
const CHAT = "https://odoo.example.com";
const CSP = "default-src 'none'; connect-src https://api.example.com";

function page({framed = true, allow = "clipboard-write"} = {}) {
    const sent = [];
    const frames = [];
    const listeners = [];
    const parent = {postMessage: (data, origin) => sent.push({to: "parent", data, origin})};
    const body = {textContent: "", appendChild: (frame) => frames.push(frame)};
    const document = {
        documentElement: {dataset: {csp: CSP, allow}},
        body,
        createElement: () => {
            const attributes = {};
            return {
                attributes,
                srcdoc: "",
                setAttribute: (name, value) => (attributes[name] = value),
                contentWindow: {
                    postMessage: (data, origin) => sent.push({to: "app", data, origin}),
                },
            };
        },
    };
    const window = {
        location: {href: `${CHAT}/ai_mcp/app/sandbox?conversation_id=1&call_id=c1`},
        addEventListener: (type, listener) => listeners.push(listener),
    };
    window.parent = framed ? parent : window;
    vm.runInNewContext(SOURCE, {window, document, URL});
    const receive = (data, source, origin = "null") =>
        listeners.forEach((listener) => listener({data, source, origin}));
    return {sent, frames, body, parent, receive};
}

// the link guard the proxy puts before the app (its behaviour: tests/test_app_sandbox_browser.py)
const GUARD = /<script>\(function guardLinks\([^]*?<\/script>/;
const withoutGuard = (srcdoc) => srcdoc.replace(GUARD, "");

function resourceReady(html, extra = {}) {
    return {
        jsonrpc: "2.0",
        method: "ui/notifications/sandbox-resource-ready",
        params: {html, ...extra},
    };
}

describe("the sandbox proxy", () => {
    test("it refuses to run when it is not framed", () => {
        const {sent, body} = page({framed: false});
        assert.deepEqual(sent, []);
        assert.equal(body.textContent, "This page shows an app inside the chat only.");
    });

    test("it tells the chat it is ready, and the chat only", () => {
        const {sent} = page();
        // the proxy's objects are of its own realm: compared as plain data
        assert.deepEqual(JSON.parse(JSON.stringify(sent)), [
            {
                to: "parent",
                data: {jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}},
                origin: CHAT,
            },
        ]);
    });

    test("it shows the app once, sandboxed, with the server's permissions and CSP", () => {
        const {frames, parent, receive} = page();
        receive(
            resourceReady("<html><head><title>Board</title></head><body></body></html>", {
                permissions: {camera: {}},
            }),
            parent,
            CHAT
        );
        receive(resourceReady("<p>again</p>"), parent, CHAT);
        assert.equal(frames.length, 1);
        const [frame] = frames;
        assert.equal(frame.attributes.sandbox, "allow-scripts allow-forms allow-modals");
        assert.equal(frame.attributes.allow, "clipboard-write");
        assert.match(frame.srcdoc, GUARD);
        assert.equal(
            withoutGuard(frame.srcdoc),
            `<html><head><meta http-equiv="Content-Security-Policy" content="${CSP}"><title>Board</title></head><body></body></html>`
        );
    });

    test("the CSP comes first in an app without a <head>", () => {
        const meta = `<meta http-equiv="Content-Security-Policy" content="${CSP}">`;
        const withHtml = page();
        withHtml.receive(resourceReady('<html lang="en"><p>hi</p></html>'), withHtml.parent, CHAT);
        assert.equal(
            withoutGuard(withHtml.frames[0].srcdoc),
            `<html lang="en"><head>${meta}</head><p>hi</p></html>`
        );
        const bare = page();
        bare.receive(resourceReady("<p>hi</p>"), bare.parent, CHAT);
        assert.equal(withoutGuard(bare.frames[0].srcdoc), `<head>${meta}</head><p>hi</p>`);
    });

    test("an app without granted permissions gets no allow attribute", () => {
        const {frames, parent, receive} = page({allow: ""});
        receive(resourceReady("<p>hi</p>"), parent, CHAT);
        assert.equal(frames[0].attributes.allow, undefined);
    });

    test("only the chat's window may give it an app", () => {
        const {frames, parent, receive} = page();
        receive(resourceReady("<p>evil</p>"), {}, CHAT);
        receive(resourceReady("<p>evil</p>"), parent, "https://evil.example.com");
        assert.equal(frames.length, 0);
    });

    test("it passes messages both ways but its own", () => {
        const {sent, frames, parent, receive} = page();
        receive(resourceReady("<p>hi</p>"), parent, CHAT);
        const app = frames[0].contentWindow;
        sent.length = 0;
        const toolResult = {
            jsonrpc: "2.0",
            method: "ui/notifications/tool-result",
            params: {content: []},
        };
        const callTool = {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {name: "refresh_board"},
        };
        receive(toolResult, parent, CHAT);
        receive(callTool, app);
        receive({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}}, app);
        receive(
            {
                jsonrpc: "2.0",
                method: "ui/notifications/sandbox-resource-ready",
                params: {html: "x"},
            },
            app
        );
        receive(
            {jsonrpc: "2.0", method: "ui/notifications/sandbox-whatever", params: {}},
            parent,
            CHAT
        );
        receive(callTool, {});
        // the answer to a link the guard sent for the app is not the app's
        receive({jsonrpc: "2.0", id: "ai_mcp/link/1", result: {}}, parent, CHAT);
        assert.deepEqual(sent, [
            {to: "app", data: toolResult, origin: "*"},
            {to: "parent", data: callTool, origin: CHAT},
        ]);
    });
});
