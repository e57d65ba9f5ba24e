"""What the browser tests set up in the Chromium Odoo starts for them, before its first page: a
colour scheme the "system" prefers, axe-core (from package.json's devDependencies) in each
page, for the tours' contrast checks (static/tests/tours/contrast.js), a mouse pointer a tour
moves (static/tests/tours/pointer.js), since a script cannot make the page hovered, and the focus
of a window in front."""

import json
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest.mock import patch

from odoo.tests.common import ChromeBrowser

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
# what a tour logs to have the pointer moved: this, then {"x": .., "y": ..} in the page's pixels
POINTER = "ai_mcp: pointer at "


@contextmanager
def browser_prepared(case, prefers=None, axe=False, pointer=False, focus=False):
    """Each browser started within first prefers the `prefers` colour scheme ("light", "dark"), as
    its system would, with `axe` has axe-core in each page it opens (reloads included), with
    `pointer` moves its mouse where a tour asks (tours/pointer.js), and with `focus` has its page
    focused as a window in front is (a headless page is not: nothing in it matches :focus)."""
    requests = []
    if prefers:
        features = {"features": [{"name": "prefers-color-scheme", "value": prefers}]}
        requests.append(("Emulation.setEmulatedMedia", features))
    if focus:
        requests.append(("Emulation.setFocusEmulationEnabled", {"enabled": True}))
    if axe:
        if not AXE.is_file():
            case.fail(f"{AXE} is missing: `npm ci` installs package.json's devDependencies (scripts/test does)")
        requests.append(("Page.addScriptToEvaluateOnNewDocument", {"source": AXE.read_text(encoding="utf-8")}))
    navigate_to = ChromeBrowser.navigate_to

    def prepared_then_navigate(browser, url, wait_stop=False):
        for method, params in requests:
            browser._websocket_request(method, params=params)
        return navigate_to(browser, url, wait_stop=wait_stop)

    console = ChromeBrowser._handle_console

    def pointer_moved(browser, type, args=None, **kw):  # noqa: A002 - the protocol's name
        said = browser._from_remoteobject(args[0]) if args else None
        if isinstance(said, str) and said.startswith(POINTER):
            at = json.loads(said[len(POINTER) :])
            browser._websocket_send("Input.dispatchMouseEvent", params={"type": "mouseMoved", **at})
        return console(browser, type, args=args, **kw)

    with ExitStack() as stack:
        stack.enter_context(patch.object(ChromeBrowser, "navigate_to", prepared_then_navigate))
        if pointer:
            stack.enter_context(patch.object(ChromeBrowser, "_handle_console", pointer_moved))
        yield
