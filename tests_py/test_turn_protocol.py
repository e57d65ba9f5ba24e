"""The widget and the server agree on the turn's protocol: which events end a request, the status
a failed call is shown with, the conversation's and calls' statuses and the error codes the widget acts
on. The widget keeps its own copy of each (static/src/chat/logic/turn_protocol.js and
static/src/common/chat_status.js, read here with node): a change on one side only fails here, not in
a user's browser."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import get_args

import pytest

from services.errors import ErrorCode
from services.events import FAILED_CALL_STATUS, FINAL_TYPES, Event
from turn.states import ConversationState, MessageStatus

SRC = Path(__file__).resolve().parent.parent / "static" / "src"
MODULE = SRC / "chat" / "logic" / "turn_protocol.js"
STATUS_MODULE = SRC / "common" / "chat_status.js"


@pytest.fixture(scope="module")
def widget() -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (20 or later) is needed to read the widget's module")
    script = (
        f"Promise.all([import({json.dumps(MODULE.as_uri())}), import({json.dumps(STATUS_MODULE.as_uri())})])"
        ".then(([m, s]) => console.log(JSON.stringify({final: [...m.FINAL_TYPES], types: [...m.EVENT_TYPES],"
        " failed: m.FAILED_CALL_STATUS,"
        " chat: s.ChatStatus, conversation: s.ConversationState, call: s.CallStatus, codes: s.ErrorCode})))"
    )
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_widget_ends_a_request_on_the_servers_final_events(widget: dict) -> None:
    assert set(widget["final"]) == set(FINAL_TYPES)


def test_the_widget_knows_every_event_type_the_server_sends(widget: dict) -> None:
    sent = {member.model_fields["type"].default for member in get_args(get_args(Event)[0])}
    assert set(widget["types"]) == sent


def test_the_widget_shows_a_failed_call_with_the_status_the_server_stores(widget: dict) -> None:
    assert widget["failed"] == FAILED_CALL_STATUS


def _constants(cls: type) -> dict[str, str]:
    return {name: value for name, value in vars(cls).items() if name.isupper() and isinstance(value, str)}


def test_the_widget_knows_the_states_a_conversation_is_stored_in(widget: dict) -> None:
    assert widget["conversation"] == _constants(ConversationState)


def test_the_widget_pauses_on_the_states_the_server_pauses_a_turn_in(widget: dict) -> None:
    paused = {name: value for name, value in widget["chat"].items() if name.startswith("AWAITING_")}
    assert set(paused.values()) == set(ConversationState.PAUSED)
    assert widget["chat"]["IDLE"] == ConversationState.IDLE


def test_the_widget_shows_a_finished_call_with_the_status_the_server_stores(widget: dict) -> None:
    stored = _constants(MessageStatus)
    finished = ("RUNNING", "DONE", "ERROR", "DENIED", "CANCELLED")
    assert {name: widget["call"][name] for name in finished} == {name: stored[name] for name in finished}


def test_the_widget_acts_on_error_codes_the_server_sends(widget: dict) -> None:
    assert {name: ErrorCode[name].value for name in widget["codes"]} == widget["codes"]
