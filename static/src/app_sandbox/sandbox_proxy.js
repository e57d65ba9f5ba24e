/*
 * The sandbox proxy of an MCP App, inlined in the page /ai_mcp/app/sandbox serves (never part of
 * an asset bundle). The page runs sandboxed without same-origin rights: it cannot read Odoo's
 * cookies, DOM or session. It shows the app the chat sends it in ONE inner iframe, sandboxed too,
 * under the app's CSP, and passes messages between the chat and the app unchanged, except the
 * proxy's own (ui/notifications/sandbox-*), which neither side may send the other.
 *
 * What the app may do is the server's to say: its CSP and iframe permissions come from the page's
 * <html data-csp data-allow>, never from a message.
 */
(() => {
    const PROXY_METHODS = "ui/notifications/sandbox-";
    // no popups: a link leaves the app only through ui/open-link, which the chat confirms
    const INNER_SANDBOX = "allow-scripts allow-forms allow-modals";
    const root = document.documentElement;
    const csp = root.dataset.csp || "";
    const allow = root.dataset.allow || "";
    const parent = window.parent;
    // the page is served from Odoo, as the chat is: the only window it answers to has that origin
    const chatOrigin = new URL(window.location.href).origin;
    let inner = null;

    if (parent === window) {
        document.body.textContent = "This page shows an app inside the chat only.";
        return;
    }

    function isProxyMessage(data) {
        return Boolean(
            data && typeof data.method === "string" && data.method.startsWith(PROXY_METHODS)
        );
    }

    function escapeAttribute(text) {
        return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    }

    /* The app's HTML with its CSP as the first thing of its <head>. */
    function withCsp(html) {
        const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">`;
        const head = /<head(\s[^>]*)?>/i.exec(html);
        if (head) {
            const at = head.index + head[0].length;
            return html.slice(0, at) + meta + html.slice(at);
        }
        const start = /<html(\s[^>]*)?>/i.exec(html);
        if (start) {
            const at = start.index + start[0].length;
            return `${html.slice(0, at)}<head>${meta}</head>${html.slice(at)}`;
        }
        return `<head>${meta}</head>${html}`;
    }

    function show(html) {
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", INNER_SANDBOX);
        if (allow) {
            inner.setAttribute("allow", allow);
        }
        inner.setAttribute("title", "App");
        inner.srcdoc = withCsp(typeof html === "string" ? html : "");
        document.body.appendChild(inner);
    }

    window.addEventListener("message", (event) => {
        const data = event.data;
        if (event.source === parent && event.origin === chatOrigin) {
            if (data && data.method === "ui/notifications/sandbox-resource-ready") {
                if (!inner) {
                    show(data.params && data.params.html);
                }
            } else if (inner && !isProxyMessage(data)) {
                // the app's origin is opaque: no name can be given to it
                inner.contentWindow.postMessage(data, "*");
            }
        } else if (inner && event.source === inner.contentWindow && !isProxyMessage(data)) {
            parent.postMessage(data, chatOrigin);
        }
    });

    parent.postMessage(
        {jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}},
        chatOrigin
    );
})();
