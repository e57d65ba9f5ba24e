"""The sandbox page in a real browser: the chat's page frames it, the proxy says it is ready, shows
the app it is sent, and passes the app's messages back; the app runs with an opaque origin, under
its CSP, and can reach neither Odoo's cookies, nor its page, nor its routes."""

import json
from unittest.mock import patch

from odoo.tests import tagged
from odoo.tests.common import ChromeBrowser

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

# an app that tries to open a window of its own, past the host's ui/open-link and its confirmation
# on a click (the browser's popup blocker lets a page open a window on a click only)
POPUP = """<html><head></head><body style="margin: 0"><button id="open" type="button"
style="width: 100vw; height: 100vh">Open</button><script>
const tell = (method, params) => parent.postMessage({jsonrpc: "2.0", method, params}, "*");
document.getElementById("open").addEventListener("click", () => {
    let opened;
    try {
        opened = window.open("about:blank#from-the-app", "_blank") ? "opened" : "blocked";
    } catch (error) {
        opened = "blocked";
    }
    tell("probe/result", {opened});
});
tell("probe/ready", {});
</script></body></html>"""
CLICK = "click the app"

# the chat's side, as the widget does it
CHAT = """
(async () => {
    const frame = document.createElement("iframe");
    frame.src = %(url)s;
    frame.style.cssText = "position: fixed; inset: 0; width: 100vw; height: 100vh; border: 0";
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
            } else if (event.data.method === "probe/ready") {
                console.log("%(click)s");
            } else if (event.data.method === "probe/result") {
                resolve(event.data.params);
            }
        });
    });
    const expected = %(expected)s;
    const origins = seen.map(([origin]) => origin);
    if (JSON.stringify(probe) !== JSON.stringify(expected) || origins.some((origin) => origin !== "null")) {
        console.error("the app reached too far: " + JSON.stringify({probe, seen}));
    } else {
        console.log("test successful");
    }
})();
"""

# an app with a link to a new tab and a plain one: every gesture on them (ctrl-, middle- and
# shift-click) must reach the chat as ui/open-link, which it confirms with the user
LINKS = """<html><head></head><body style="margin: 0"><a id="tab" href="https://example.com/tab" target="_blank"
style="position: absolute; left: 0; top: 0; width: 100vw; height: 100px; display: block">Tab</a>
<a id="plain" href="https://example.com/plain" style="position: absolute; left: 0; top: 200px; width: 100vw;
height: 100px; display: block">Plain</a><script>
parent.postMessage({jsonrpc: "2.0", method: "probe/ready", params: {}}, "*");
</script></body></html>"""
# button, its `buttons` mask, CDP modifiers (2: ctrl, 8: shift)
GESTURES = [("left", 1, 2), ("middle", 4, 0), ("left", 1, 8)]
LINK_AT = {"tab": 50, "plain": 250}

# the chat's side: collects the app's ui/open-link requests, then what the frame still shows
LINKS_CHAT = """
(async () => {
    const frame = document.createElement("iframe");
    frame.src = %(url)s;
    frame.style.cssText = "position: fixed; inset: 0; width: 100vw; height: 100vh; border: 0";
    document.body.appendChild(frame);
    const links = [];
    const seen = [];
    await new Promise((resolve, reject) => {
        setTimeout(() => reject(new Error("links asked: " + JSON.stringify({links, seen}))), 30000);
        window.addEventListener("message", (event) => {
            if (event.source !== frame.contentWindow) {
                return;
            }
            seen.push(event.data.method);
            if (event.data.method === "ui/notifications/sandbox-proxy-ready") {
                frame.contentWindow.postMessage(
                    {jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: {html: %(html)s}},
                    "*"
                );
            } else if (event.data.method === "probe/ready" && !seen.includes("ui/open-link")) {
                console.log("%(click)s");
            } else if (event.data.method === "ui/open-link") {
                links.push(event.data.params.url);
                if (links.length === %(count)s) {
                    resolve();
                }
            }
        });
    });
    // a plain click left the app where it was: the proxy still shows it, and no more came
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const expected = %(expected)s;
    if (JSON.stringify(links) !== JSON.stringify(expected) || seen.filter((m) => m === "probe/ready").length !== 1) {
        console.error("the links went their own way: " + JSON.stringify({links, seen}));
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
        expected = {"cookie": "blocked", "page": "blocked", "odoo": "blocked", "csp": True, "origin": "null"}
        code = CHAT % {
            "url": json.dumps(url),
            "html": json.dumps(PROBE),
            "expected": json.dumps(expected),
            "click": CLICK,
        }
        # the browser reports what the CSP refused: that is what this test wants to see
        self.browser_js(
            "/web/health",
            code,
            login=self.user.login,
            timeout=90,
            error_checker=lambda message: "Content Security Policy" not in message,
        )

    def test_an_app_cannot_open_a_window_past_the_hosts_confirmation(self):
        """A link leaves an app only through ui/open-link, which the chat confirms with the user:
        window.open from the app's frame opens nothing, and the browser has no page but the chat's."""
        self.login(self.user)
        conversation_id = self.show()
        url = f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board"
        expected = {"opened": "blocked"}
        code = CHAT % {
            "url": json.dumps(url),
            "html": json.dumps(POPUP),
            "expected": json.dumps(expected),
            "click": CLICK,
        }
        pages = []
        stop, console = ChromeBrowser.stop, ChromeBrowser._handle_console

        def click_when_asked(browser, type, args=None, **kw):  # noqa: A002 - the protocol's name
            # a real click, with the user activation a window.open needs (a script's click has none)
            if args and browser._from_remoteobject(args[0]) == CLICK:
                for event in ("mousePressed", "mouseReleased"):
                    click = {"type": event, "x": 40, "y": 40, "button": "left", "clickCount": 1}
                    browser._websocket_send("Input.dispatchMouseEvent", params=click)
            return console(browser, type, args=args, **kw)

        def count_pages_then_stop(browser):
            pages.extend(t["url"] for t in browser._json_command("") if t["type"] == "page")
            stop(browser)

        with (
            patch.object(ChromeBrowser, "_handle_console", click_when_asked),
            patch.object(ChromeBrowser, "stop", count_pages_then_stop),
        ):
            self.browser_js(
                "/web/health",
                code,
                login=self.user.login,
                timeout=90,
                error_checker=lambda message: "Blocked opening" not in message,
            )
        self.assertEqual(len(pages), 1, f"the app opened a page: {pages}")

    def test_every_link_gesture_in_an_app_asks_the_chat_to_open_it(self):
        """Ctrl-, middle- and shift-click on a link, to a new tab or not, and a plain click, become
        the app's ui/open-link request, which the chat confirms with the user: no tab opens past
        it, and the app stays in its frame."""
        self.login(self.user)
        conversation_id = self.show()
        url = f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board"
        clicks = [(link, gesture) for link in LINK_AT for gesture in GESTURES]
        clicks += [(link, ("left", 1, 0)) for link in LINK_AT]
        expected = [f"https://example.com/{link}" for link, _gesture in clicks]
        code = LINKS_CHAT % {
            "url": json.dumps(url),
            "html": json.dumps(LINKS),
            "expected": json.dumps(expected),
            "count": len(expected),
            "click": CLICK,
        }
        pages = []
        stop, console = ChromeBrowser.stop, ChromeBrowser._handle_console

        def click_when_asked(browser, type, args=None, **kw):  # noqa: A002 - the protocol's name
            # real clicks, as a user makes them (a script's click has no user activation)
            if args and browser._from_remoteobject(args[0]) == CLICK:
                for link, (button, buttons, modifiers) in clicks:
                    for event in ("mousePressed", "mouseReleased"):
                        click = {
                            "type": event,
                            "x": 40,
                            "y": LINK_AT[link],
                            "button": button,
                            "buttons": buttons if event == "mousePressed" else 0,
                            "modifiers": modifiers,
                            "clickCount": 1,
                        }
                        browser._websocket_send("Input.dispatchMouseEvent", params=click)
            return console(browser, type, args=args, **kw)

        def count_pages_then_stop(browser):
            pages.extend(t["url"] for t in browser._json_command("") if t["type"] == "page")
            stop(browser)

        with (
            patch.object(ChromeBrowser, "_handle_console", click_when_asked),
            patch.object(ChromeBrowser, "stop", count_pages_then_stop),
        ):
            self.browser_js("/web/health", code, login=self.user.login, timeout=90)
        self.assertEqual(len(pages), 1, f"a link opened a page past the chat: {pages}")
