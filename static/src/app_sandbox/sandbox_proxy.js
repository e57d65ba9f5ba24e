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
    // the ids of the ui/open-link requests the link guard sends: their answers are not the app's
    const LINK_IDS = "ai_mcp/link/";
    // the end of a script element, written so as not to end this one, which the page inlines
    const SCRIPT_END = "<" + "/script>";
    // no popups: a link leaves the app only through ui/open-link, which the chat confirms (see
    // guardLinks for the gestures Chromium lets through)
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

    function isLinkAnswer(data) {
        return Boolean(data && typeof data.id === "string" && data.id.startsWith(LINK_IDS));
    }

    /*
     * Runs in the app's document, before the app: a link leaves the app only as a ui/open-link
     * request, which the chat confirms with the user. Chromium opens a ctrl-, shift- or
     * middle-clicked link in a new tab although the frame may open no popup, and a plain click
     * loads the link in the app's frame (an error page, most sites refuse to be framed). A click
     * the app handles itself (it prevents the default, to call openLink or route) stays its own.
     * Links within the page (#, javascript:) work on a plain click and are inert otherwise, as are
     * a link's context menu and dragging it out ("open in new tab", a drop on the tab bar).
     */
    function guardLinks(ids) {
        const up = window.parent;
        let sent = 0;
        const linkOf = (event) => {
            const link = event.target && event.target.closest && event.target.closest("a, area");
            const href = link && (link.getAttribute("href") ?? link.getAttribute("xlink:href"));
            return href === null || href === undefined ? null : {link, href};
        };
        const onClick = (event) => {
            const found = (event.type === "click" || event.button === 1) && linkOf(event);
            if (!found) {
                return;
            }
            const modified = event.ctrlKey || event.metaKey || event.shiftKey || event.altKey;
            const inPage = /^\s*(#|javascript:)/i.test(found.href);
            if (inPage && event.type === "click" && !modified) {
                return;
            }
            event.preventDefault();
            let byApp = false;
            Object.defineProperty(event, "defaultPrevented", {get: () => byApp});
            Object.defineProperty(event, "preventDefault", {value: () => (byApp = true)});
            if (inPage) {
                return;
            }
            const url = String(new URL(found.href, document.baseURI));
            setTimeout(() => {
                if (!byApp) {
                    sent += 1;
                    const params = {url};
                    up.postMessage(
                        {jsonrpc: "2.0", id: ids + sent, method: "ui/open-link", params},
                        "*"
                    );
                }
            });
        };
        const inert = (event) => linkOf(event) && event.preventDefault();
        window.addEventListener("click", onClick, true);
        window.addEventListener("auxclick", onClick, true);
        window.addEventListener("contextmenu", inert, true);
        window.addEventListener("dragstart", inert, true);
    }

    /* The app's HTML with its CSP, then the link guard, as the first things of its <head>. */
    function withCsp(html) {
        const meta =
            `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">` +
            `<script>(${guardLinks})(${JSON.stringify(LINK_IDS)});${SCRIPT_END}`;
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
            } else if (inner && !isProxyMessage(data) && !isLinkAnswer(data)) {
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
