"""An MCP App tool's block sees the call's arguments while the model writes them: `tool_input`
events, streamed by the scripted LLM in pieces, before the call's `tool_call`; the tools are a real
server's with an app (testing/mcp_apps_server.py, a counter)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import ManualClock, http_spec
from test_agent_loop import kinds, persisted, settings

from services.events import ToolInputEvent
from services.llm import ToolCallDelta
from services.loop import ToolBinding, TurnRequest, run_turn
from services.loop._tool_input_stream import TOOL_INPUT_INTERVAL, ToolInputStream
from services.loop.tool_runner import BoundTool
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_info import ToolInfo
from testing.mcp_apps_server import APP_URI, PROGRAM
from testing.mcp_servers import HttpServer, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


@pytest.fixture(scope="module")
def counter() -> Iterator[HttpServer]:
    with serve_http("streamable-http", program=PROGRAM) as server:
        yield server


def offered(hub: McpHub, spec: ServerSpec, listed: ServerSpec | None = None) -> list[ToolBinding]:
    """The tools the model is offered (`listed`: the spec they were discovered with, if not `spec`)."""
    tools = hub.run(hub.alist_tools(listed or spec)).tools
    return [ToolBinding(server=spec, tool=tool) for tool in tools if tool.model_visible]


def run_with_clock(hub: McpHub, request: TurnRequest, clock: ManualClock, step: float) -> list[Any]:
    """The turn's events, the clock moved on by `step` each time a tool_input came: the loop waits
    at each event until the next one is asked for, so the model's next piece is read that late."""

    async def consume() -> list[Any]:
        events = []
        async with contextlib.aclosing(run_turn(request, hub)) as stream:
            async for event in stream:
                events.append(event)
                if event.type == "tool_input":
                    clock.advance(step)
        return events

    return hub.run(consume())


def inputs_of(events: list[Any], call_id: str) -> list[dict[str, Any]]:
    return [e.arguments for e in events if e.type == "tool_input" and e.id == call_id]


def test_an_app_tool_sees_its_arguments_grow_then_the_call(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, counter: HttpServer
) -> None:
    spec = http_spec(counter, key="counter", name="Counter server", apps=True)
    llm.queue(
        Turn(
            text="Showing it.",
            chunks=1,
            tool_calls=(ToolCall("show_counter", {"start": 5, "script": "add 2"}, id="call_app"),),
            arg_chunks=4,  # {"start"  : 5, "sc  ript": "  add 2"}
        ),
        Turn(text="Shown."),
    )
    request = TurnRequest(assistant=settings(llm), tools=offered(clocked_hub, spec), user_message="Count from 5")
    events = run_with_clock(clocked_hub, request, clock, TOOL_INPUT_INTERVAL)

    assert kinds(events)[:9] == [
        "start",
        "round",
        "text",
        "tool_input",
        "tool_input",
        "tool_input",
        "tool_input",
        "tool_call",
        "tool_result",
    ]
    # the block appears as the model starts the call; a piece that completes nothing sends nothing
    assert inputs_of(events, "call_app") == [
        {},
        {"start": 5},
        {"start": 5, "script": ""},
        {"start": 5, "script": "add 2"},
    ]
    first = next(e for e in events if e.type == "tool_input")
    call = next(e for e in events if e.type == "tool_call")
    assert (first.id, first.name, first.tool, first.title, first.server, first.app) == (
        "call_app",
        "show_counter",
        "show_counter",
        "Counter",
        "Counter server",
        APP_URI,
    )
    assert (call.id, call.app, call.arguments) == ("call_app", APP_URI, {"start": 5, "script": "add 2"})
    assert next(e for e in events if e.type == "tool_result").ok
    assert persisted(events) == events


def test_a_model_writing_fast_sends_one_input_per_interval(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, counter: HttpServer
) -> None:
    """The clock stands still: the first piece of each call goes out, the rest waits for tool_call."""
    spec = http_spec(counter, key="counter", apps=True)
    llm.queue(
        Turn(
            tool_calls=(
                ToolCall("show_counter", {"start": 1}, id="call_1"),
                ToolCall("show_counter", {"start": 2}, id="call_2"),
            ),
            arg_chunks=5,
        ),
        Turn(text="Done."),
    )
    request = TurnRequest(assistant=settings(llm), tools=offered(clocked_hub, spec), user_message="Two")
    events = run_with_clock(clocked_hub, request, clock, 0.0)

    assert kinds(events)[:6] == ["start", "round", "tool_input", "tool_input", "tool_call", "tool_call"]
    assert inputs_of(events, "call_1") == [{}]
    assert inputs_of(events, "call_2") == [{}]
    assert [(e.id, e.arguments) for e in events if e.type == "tool_call"] == [
        ("call_1", {"start": 1}),
        ("call_2", {"start": 2}),
    ]


def test_tools_without_a_shown_app_stream_no_input(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, counter: HttpServer
) -> None:
    """In one reply, only the app tool's call is followed; once the server's apps are turned off,
    a tool whose app was discovered before shows none."""
    spec = http_spec(counter, key="counter", apps=True)
    llm.queue(
        Turn(
            tool_calls=(
                ToolCall("reset_counter", {}, id="call_reset"),
                ToolCall("show_counter", {"start": 3}, id="call_show"),
            ),
        ),
        Turn(text="Reset, then 3."),
    )
    request = TurnRequest(assistant=settings(llm), tools=offered(clocked_hub, spec), user_message="Go")
    events = run_with_clock(clocked_hub, request, clock, TOOL_INPUT_INTERVAL)
    assert {e.id for e in events if e.type == "tool_input"} == {"call_show"}
    assert inputs_of(events, "call_show")[-1] == {"start": 3}

    off = http_spec(counter, key="counter_off", apps=False)
    llm.queue(Turn(tool_calls=(ToolCall("show_counter", {"start": 4}, id="call_off"),)), Turn(text="4", chunks=1))
    request = TurnRequest(assistant=settings(llm), tools=offered(clocked_hub, off, listed=spec), user_message="Go")
    events = run_with_clock(clocked_hub, request, clock, TOOL_INPUT_INTERVAL)
    assert kinds(events) == ["start", "round", "tool_call", "tool_result", "round", "text", "done"]
    assert next(e for e in events if e.type == "tool_call").app is None


# -- the stream of one reply, piece by piece -----------------------------------------------------


def app_tool(name: str = "chart", app: str | None = "ui://charts/view", apps: bool = True) -> BoundTool:
    spec = build_server_spec(
        key="charts", name="Charts", transport="streamable_http", url="http://127.0.0.1:1/mcp", apps=apps
    )
    return BoundTool(name, spec, ToolInfo(name="draw", title="Draw a chart", app_uri=app))


def pieces(index: int, call_id: str, name: str, text: str, size: int) -> list[ToolCallDelta]:
    """A call as OpenAI streams it: its id and name first, then its arguments `size` characters a piece."""
    return [ToolCallDelta(index, call_id, name, "")] + [
        ToolCallDelta(index, None, None, text[at : at + size]) for at in range(0, len(text), size)
    ]


def test_inputs_are_coalesced_per_call_on_the_clock() -> None:
    clock = ManualClock()
    stream = ToolInputStream.of({"chart": app_tool()}, clock)
    assert stream is not None
    sent = []
    for delta in pieces(0, "call_c", "chart", '{"title": "Sales by month", "bars": [1, 2, 3]}', 4):
        event = stream.feed(delta)
        if event is not None:
            sent.append((clock(), event.arguments))
        clock.advance(0.04)
    # at most one per interval: 0.12 s apart with pieces every 0.04 s
    times = [at for at, _ in sent]
    assert all(later - earlier >= TOOL_INPUT_INTERVAL for earlier, later in zip(times, times[1:], strict=False))
    assert [arguments for _, arguments in sent] == [
        {},
        {"title": "S"},
        {"title": "Sales by mont"},
        {"title": "Sales by month"},
        {"title": "Sales by month", "bars": [1, 2, 3]},
    ]


def test_an_input_is_sent_only_when_the_arguments_changed() -> None:
    clock = ManualClock()
    stream = ToolInputStream.of({"chart": app_tool()}, clock)
    assert stream is not None
    first = stream.feed(ToolCallDelta(0, "call_c", "chart", '{"ti'))
    assert isinstance(first, ToolInputEvent) and first.arguments == {}
    clock.advance(1)
    assert stream.feed(ToolCallDelta(0, None, None, 'tle": ')) is None  # still {}
    clock.advance(1)
    assert stream.feed(ToolCallDelta(0, None, None, "12")) is None  # a number that may go on
    event = stream.feed(ToolCallDelta(0, None, None, "}"))
    assert event is not None and event.arguments == {"title": 12}


def test_calls_of_one_reply_are_followed_apart() -> None:
    clock = ManualClock()
    stream = ToolInputStream.of(
        {"chart": app_tool(), "plain": BoundTool("plain", app_tool().server, ToolInfo(name="p"))}, clock
    )
    assert stream is not None
    sent = [
        stream.feed(ToolCallDelta(0, "call_a", "chart", '{"title": "A')),
        stream.feed(ToolCallDelta(1, "call_p", "plain", '{"x": "1')),
        stream.feed(ToolCallDelta(1, None, None, '"}')),
        stream.feed(ToolCallDelta(2, "call_b", "chart", '{"title": "B')),
        # a provider reusing an index for the next call: its id tells them apart
        stream.feed(ToolCallDelta(2, "call_c", "chart", '{"title": "C')),
    ]
    assert [(e.id, e.arguments) for e in sent if e is not None] == [
        ("call_a", {"title": "A"}),
        ("call_b", {"title": "B"}),
        ("call_c", {"title": "C"}),
    ]
    # a call whose pieces carry no id, or no index, cannot be tied to its tool_call
    assert stream.feed(ToolCallDelta(3, None, "chart", '{"title": "D')) is None
    assert stream.feed(ToolCallDelta(None, "call_e", "chart", '{"title": "E"}')) is None


def test_only_shown_apps_are_followed() -> None:
    assert ToolInputStream.of({"plain": app_tool(app=None)}, ManualClock()) is None
    assert ToolInputStream.of({"chart": app_tool(apps=False)}, ManualClock()) is None
