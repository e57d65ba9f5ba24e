"""Forward compatibility: servers built with the mcp 2.x SDK, reached through our mcp 1.x hub.

A server that upgrades its SDK must keep working in Odoo. The server (testing/mcp2_server.py) runs
in a venv of its own with mcp 2.x, over streamable HTTP with sessions, streamable HTTP stateless
(no session id: every request stands alone), and stdio.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import FAST_RETRY, ROOT, http_spec
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from mcp.types import LATEST_PROTOCOL_VERSION

from services.call_observer import CallObserver
from services.errors import ErrorCode, McpError
from services.events import ToolProgressEvent
from services.hub import McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_result import StructuredPart
from testing.mcp2_venv import Mcp2Unavailable, mcp2_python
from testing.mcp_servers import HttpServer, serve_http

SCRIPT = ROOT / "testing" / "mcp2_server.py"
MODES = ["streamable_http", "streamable_http_stateless", "stdio"]


@pytest.fixture(scope="module")
def python2() -> Path:
    """The python of the mcp 2.x venv; without PyPI there is none, and these tests skip."""
    try:
        return mcp2_python()
    except Mcp2Unavailable as exc:
        pytest.skip(f"no mcp 2.x venv for the forward compatibility tests: {exc}")


@pytest.fixture(scope="module")
def stateful_server(python2: Path) -> Iterator[HttpServer]:
    with serve_http("streamable-http", program=(str(python2), str(SCRIPT))) as server:
        yield server


@pytest.fixture(scope="module")
def stateless_server(python2: Path) -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--stateless", program=(str(python2), str(SCRIPT))) as server:
        yield server


@pytest.fixture(params=MODES)
def mcp2_spec(request: pytest.FixtureRequest, python2: Path) -> ServerSpec:
    mode = request.param
    if mode == "stdio":
        return build_server_spec(
            key="mcp2-stdio",
            name="mcp2-stdio",
            transport="stdio",
            command=str(python2),
            args=(str(SCRIPT),),
            retry=FAST_RETRY,
        )
    server = request.getfixturevalue("stateless_server" if mode.endswith("stateless") else "stateful_server")
    return http_spec(server, key=f"mcp2-{mode}")


def test_connection_reports_the_server_and_a_protocol_we_speak(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    report = hub.run(hub.atest_connection(mcp2_spec))
    assert (report.server.name, report.server.version) == ("mcp2-server", "2.3.0-test")
    # mcp 2.x still answers the initialize handshake with our newest revision
    assert report.server.protocol_version in SUPPORTED_PROTOCOL_VERSIONS
    assert report.server.protocol_version == LATEST_PROTOCOL_VERSION
    assert "tools" in report.server.capabilities


def test_tools_are_listed_with_their_schemas(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    tools = {tool.name: tool for tool in hub.run(hub.alist_tools(mcp2_spec)).tools}
    assert set(tools) == {"echo", "add", "forecast", "refuse", "count", "slow"}
    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.input_schema["properties"]["a"]["type"] == "integer"
    forecast = tools["forecast"].output_schema
    assert forecast and set(forecast["properties"]) == {"city", "celsius", "sunny"}


def test_echo_and_add_answer(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    echo = hub.run(hub.acall_tool(mcp2_spec, "echo", {"text": "héllo, 2.x"}))
    assert not echo.is_error and echo.text_for_model() == "héllo, 2.x"
    add = hub.run(hub.acall_tool(mcp2_spec, "add", {"a": 2, "b": 40}))
    assert not add.is_error and add.text_for_model() == "42"


def test_structured_content_is_a_structured_part(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    result = hub.run(hub.acall_tool(mcp2_spec, "forecast", {"city": "Oslo"}))
    assert not result.is_error
    structured = [part for part in result.parts if isinstance(part, StructuredPart)]
    assert [part.data for part in structured] == [{"city": "Oslo", "celsius": 18.5, "sunny": True}]


def test_tool_error_is_an_error_result_with_the_servers_message(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    result = hub.run(hub.acall_tool(mcp2_spec, "refuse", {"reason": "no key"}))
    assert result.is_error
    # MCPServer prefixes the message ("Error executing tool refuse: ..."); the reason must reach the model
    assert "refused: no key" in result.text_for_model()


def test_tool_reporting_progress_answers(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    result = hub.run(hub.acall_tool(mcp2_spec, "count", {"steps": 3}))
    assert not result.is_error and result.text_for_model() == "counted 3"


def test_progress_of_an_mcp2_server_reaches_the_call(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    events: list[ToolProgressEvent] = []
    observer = CallObserver("c", events.append)
    result = hub.run(hub.acall_tool(mcp2_spec, "count", {"steps": 3}, observer=observer), timeout=30)
    assert result.text_for_model() == "counted 3"
    assert observer.received == 3
    assert (events[-1].progress, events[-1].total, events[-1].message) == (3, 3, "step 3")


def test_pooled_session_serves_many_calls(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    for n in range(6):
        assert hub.run(hub.acall_tool(mcp2_spec, "add", {"a": n, "b": 1})).text_for_model() == str(n + 1)
        assert hub.run(hub.acall_tool(mcp2_spec, "echo", {"text": f"call {n}"})).text_for_model() == f"call {n}"
    assert hub.pool.opened == 1


def test_timed_out_call_leaves_the_session_usable(hub: McpHub, mcp2_spec: ServerSpec) -> None:
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(mcp2_spec, "slow", {"seconds": 5}, timeout=0.5))
    assert info.value.code is ErrorCode.MCP_TIMEOUT
    assert hub.run(hub.acall_tool(mcp2_spec, "echo", {"text": "still here"})).text_for_model() == "still here"
    assert hub.pool.opened == 1


@pytest.mark.parametrize(("fixture", "gives_session"), [("stateful_server", True), ("stateless_server", False)])
def test_the_two_http_modes_differ(request: pytest.FixtureRequest, fixture: str, gives_session: bool) -> None:
    """Guards the tests above: the stateless server really gives no session id, the other does."""
    server: HttpServer = request.getfixturevalue(fixture)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    response = httpx.post(
        server.url, json=initialize, headers={"Accept": "application/json, text/event-stream"}, timeout=10
    )
    assert response.status_code == 200
    assert ("mcp-session-id" in response.headers) is gives_session
