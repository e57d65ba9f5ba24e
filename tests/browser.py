"""What the browser tests set up in the Chromium Odoo starts for them, before its first page: a
colour scheme the "system" prefers, and axe-core (from package.json's devDependencies) in each
page, for the tours' contrast checks (static/tests/tours/contrast.js)."""

from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

from odoo.tests.common import ChromeBrowser

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"


@contextmanager
def browser_prepared(case, prefers=None, axe=False):
    """Each browser started within first prefers the `prefers` colour scheme ("light", "dark"), as
    its system would, and with `axe` has axe-core in each page it opens (reloads included)."""
    requests = []
    if prefers:
        features = {"features": [{"name": "prefers-color-scheme", "value": prefers}]}
        requests.append(("Emulation.setEmulatedMedia", features))
    if axe:
        if not AXE.is_file():
            case.fail(f"{AXE} is missing: `npm ci` installs package.json's devDependencies (scripts/test does)")
        requests.append(("Page.addScriptToEvaluateOnNewDocument", {"source": AXE.read_text(encoding="utf-8")}))
    navigate_to = ChromeBrowser.navigate_to

    def prepared_then_navigate(browser, url, wait_stop=False):
        for method, params in requests:
            browser._websocket_request(method, params=params)
        return navigate_to(browser, url, wait_stop=wait_stop)

    with patch.object(ChromeBrowser, "navigate_to", prepared_then_navigate):
        yield
