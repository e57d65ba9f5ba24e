"""The sandbox page in a real browser: the chat's page frames it, the proxy says it is ready, shows
the app it is sent, and passes the app's messages back; the app runs with an opaque origin, under
its CSP, and can reach neither Odoo's cookies, nor its page, nor its routes."""

import json

from odoo.tests import tagged

from .app_common import AppCase

# a probe in place of the board's app: it reports what it can reach
PROBE = """<html><head></head><body><script>
const report = (params) => parent.postMessage({jsonrpc: "2.0", method: "probe/result", params}, "*");
let cookie;
try { cookie = document.cookie; } catch (error) { cookie = "blocked"; }
let page;
try { page = String(window.top.document.title); } catch (error) { page = "blocked"; }
const csp = Boolean(document.querySelector('meta[http-equiv="Content-Security-Policy"]'));
fetch("/web/webclient/version_info", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})
    .then(() => "reached", () => "blocked")
    .then((odoo) => report({cookie, page, odoo, csp, origin: String(window.origin)}));
</script></body></html>"""

# the chat's side, as the widget does it
CHAT = """
(async () => {
    const frame = document.createElement("iframe");
    frame.src = %(url)s;
    document.body.appendChild(frame);
    const seen = [];
    const probe = await new Promise((resolve, reject) => {
        setTimeout(() => reject(new Error("no answer from the app; seen: " + JSON.stringify(seen))), 30000);
        window.addEventListener("message", (event) => {
            if (event.source !== frame.contentWindow) {
                return;
            }
            seen.push([event.origin, event.data.method]);
            if (event.data.method === "ui/notifications/sandbox-proxy-ready") {
                const ready = {html: %(html)s};
                frame.contentWindow.postMessage(
                    {jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: ready}, "*"
                );
            } else if (event.data.method === "probe/result") {
                resolve(event.data.params);
            }
        });
    });
    const expected = {cookie: "blocked", page: "blocked", odoo: "blocked", csp: true, origin: "null"};
    const origins = seen.map(([origin]) => origin);
    if (JSON.stringify(probe) !== JSON.stringify(expected) || origins.some((origin) => origin !== "null")) {
        console.error("the app reached too far: " + JSON.stringify({probe, seen}));
    } else {
        console.log("test successful");
    }
})();
"""


@tagged("post_install", "-at_install")
class TestAppSandboxBrowser(AppCase):
    def test_an_app_in_its_sandbox_reaches_the_chat_by_message_only(self):
        self.login(self.user)
        conversation_id = self.show()
        url = f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board"
        code = CHAT % {"url": json.dumps(url), "html": json.dumps(PROBE)}
        # the browser reports what the CSP refused: that is what this test wants to see
        self.browser_js(
            "/web/health",
            code,
            login=self.user.login,
            timeout=90,
            error_checker=lambda message: "Content Security Policy" not in message,
        )
