"""The widget and the server agree on the turn's protocol: which events end a request, and the status
a failed call is shown with. The widget keeps its own copy of each (static/src/logic/turn_protocol.js,
read here with node): a change on one side only fails here, not in a user's browser."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from services.events import FAILED_CALL_STATUS, FINAL_TYPES

MODULE = Path(__file__).resolve().parent.parent / "static" / "src" / "logic" / "turn_protocol.js"


@pytest.fixture(scope="module")
def widget() -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (20 or later) is needed to read the widget's module")
    script = (
        f"import({json.dumps(MODULE.as_uri())}).then((m) => console.log(JSON.stringify("
        "{final: [...m.FINAL_TYPES], failed: m.FAILED_CALL_STATUS})))"
    )
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_widget_ends_a_request_on_the_servers_final_events(widget: dict) -> None:
    assert set(widget["final"]) == set(FINAL_TYPES)


def test_the_widget_shows_a_failed_call_with_the_status_the_server_stores(widget: dict) -> None:
    assert widget["failed"] == FAILED_CALL_STATUS
