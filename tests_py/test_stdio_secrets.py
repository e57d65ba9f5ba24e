"""A stdio server that prints its secrets when it fails: the admin reads its output with every
secret of its configuration masked, the log too, and the user who chats is told only that it could
not start. The server is a real process (Node, as many MCP servers are) started by the hub."""

from __future__ import annotations

import json
import logging
import shutil

import pytest
from conftest import FAST_RETRY
from test_agent_loop import kinds, persisted, run, settings

from services.errors import McpError
from services.loop import ToolBinding, TurnRequest
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_info import ToolInfo
from testing.scripted_llm import ScriptedLLM, Turn

TOKEN = "tok-3f9a-very-secret"
HEADER_VALUE = "hdr-5e1c-also-secret"
# what such a server does: it names the token it was refused with, then gives up
REJECTING = "console.error('starting'); console.error('rejected token ' + process.env.API_TOKEN); process.exit(1)"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="the server runs on Node")


def rejecting_spec(key: str = "rejecting") -> ServerSpec:
    return build_server_spec(
        key=key,
        name="Example",
        transport="stdio",
        command="node",
        args=("-e", REJECTING),
        env={"API_TOKEN": TOKEN, "DEBUG": "1"},
        headers={"X-Tenant-Key": HEADER_VALUE},
        retry=FAST_RETRY,
    )


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


def test_the_admin_and_the_log_read_the_output_with_the_token_masked(
    hub: McpHub, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(rejecting_spec()))
    error = info.value
    assert (error.output or "").splitlines() == ["starting", "rejected token ***"]
    assert TOKEN not in error.message and "rejected token" not in error.message
    assert "rejected token ***" in logged(caplog)
    assert TOKEN not in logged(caplog)


def test_the_user_is_told_the_server_could_not_start_without_its_output(
    hub: McpHub, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    binding = ToolBinding(
        server=rejecting_spec("rejecting-turn"), tool=ToolInfo(name="lookup", description="Looks up.")
    )
    llm.queue(Turn(text="I cannot look it up."))
    with caplog.at_level(logging.DEBUG):
        events = run(hub, TurnRequest(assistant=settings(llm), tools=[binding], user_message="Look it up"))
    assert [kind for kind in kinds(events) if kind != "text"] == ["start", "warning", "round", "done"]
    assert events[1].message == (
        "Example could not start, so its tools are left out of this answer; an administrator can see why on the "
        "server's form."
    )
    stored = json.dumps([event.data() for event in persisted(events)])
    assert "rejected token" not in stored and TOKEN not in stored
    assert TOKEN not in json.dumps(llm.requests)
    assert "rejected token ***" in logged(caplog)
    assert TOKEN not in logged(caplog)
