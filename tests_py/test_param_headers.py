"""Header parameters (2026-07-28, SEP-2243): a tool whose input schema marks arguments with
`x-mcp-header` gets them mirrored into `Mcp-Param-*` headers of its `tools/call`, which a server's
load balancer routes on. Odoo lists a server's tools at sync on a session of its own, and a turn
calls them on the pooled session, which never listed them: the call must carry the headers all
the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_agent_loop import run, settings

from services.loop import ToolBinding, TurnRequest
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from testing.param_header_server import ParamHeaderServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


@pytest.fixture
def forecasts() -> Iterator[ParamHeaderServer]:
    with ParamHeaderServer() as server:
        yield server


def synced(hub: McpHub, spec: ServerSpec) -> list[ToolBinding]:
    """The tools as "Sync tools" records them: listed on a session of its own (hub.atest_connection)."""
    report = hub.run(hub.atest_connection(spec))
    assert report.server.protocol_version == "2026-07-28"
    return [ToolBinding(server=spec, tool=tool) for tool in report.tools]


def param_headers(headers: dict[str, Any]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.startswith("mcp-param-")}


def test_a_turns_call_carries_the_header_parameters_of_a_tool_synced_elsewhere(
    hub: McpHub, llm: ScriptedLLM, forecasts: ParamHeaderServer
) -> None:
    spec = build_server_spec(key="fc", name="Forecasts", transport="streamable_http", url=forecasts.url)
    tools = synced(hub, spec)
    llm.queue(
        Turn(tool_calls=(ToolCall("forecast", {"region": "eu-west", "days": 3, "detail": "hourly"}),)),
        Turn(tool_calls=(ToolCall("forecast", {"region": "us-east"}),)),
        Turn(text="Sunny."),
    )

    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools, user_message="Weather?"))

    assert [e.model_text for e in events if e.type == "tool_result"] == ["sunny in eu-west", "sunny in us-east"]
    calls = forecasts.headers_of("tools/call")
    # each argument marked as a header parameter, and only those; one left out is not sent
    assert [param_headers(h) for h in calls] == [
        {"mcp-param-region": "eu-west", "mcp-param-days": "3"},
        {"mcp-param-region": "us-east"},
    ]
    assert all(h["mcp-name"] == "forecast" for h in calls)
