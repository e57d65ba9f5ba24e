"""What a server says while a call runs, as the user sees it: live progress (coalesced), its log
messages, cancelling one call while the rest of the turn goes on, and a tool list that changes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ManualClock, http_spec
from test_agent_loop import settings, tools_of

from services.errors import ErrorCode, McpError
from services.events import ToolLogEvent, ToolProgressEvent
from services.loop import TurnControl, TurnRequest, run_turn
from services.loop.tool_runner import CANCELLED_BY_USER
from services.mcp import CallObserver, McpHub
from services.mcp.call_observer import MAX_LOG_EVENTS
from services.server_spec import ServerSpec
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


def call(hub: McpHub, spec: ServerSpec, tool: str, arguments: dict[str, Any]) -> tuple[Any, list[Any], CallObserver]:
    events: list[Any] = []
    observer = CallObserver("call-1", events.append)
    result = hub.run(hub.acall_tool(spec, tool, arguments, observer=observer), timeout=30)
    return result, events, observer


def test_progress_reaches_the_call_coalesced_with_the_last_one_kept(hub: McpHub, notifying_spec: ServerSpec) -> None:
    result, events, observer = call(hub, notifying_spec, "progress", {"steps": 200, "seconds": 1.2})
    assert result.text_for_model() == "200 steps done"
    assert observer.received == 200
    progress = [e for e in events if isinstance(e, ToolProgressEvent)]
    # the first at once, then at most one each half second of the call, then the last: never one row per
    # notification (counted against the call's own duration, which a busy machine stretches)
    assert 2 <= len(progress) <= 2 + progress[-1].elapsed_ms // 500, [(p.progress, p.elapsed_ms) for p in progress]
    assert progress[0].progress < 50
    assert (progress[-1].progress, progress[-1].total, progress[-1].message) == (200, 200, "step 200 of 200")
    assert [p.elapsed_ms for p in progress] == sorted(p.elapsed_ms for p in progress)
    assert {p.id for p in progress} == {"call-1"}


def test_a_call_nobody_watches_sends_no_progress_token(hub: McpHub, notifying_http: HttpServer) -> None:
    result = hub.run(hub.acall_tool(http_spec(notifying_http, key="unwatched"), "progress", {"steps": 5, "seconds": 0}))
    assert result.text_for_model() == "5 steps done"


async def _burst(observer: CallObserver, count: int) -> None:
    for i in range(count):
        await observer.progress(i + 1, count, None)
    observer.finish()


def test_a_thousand_notifications_in_a_burst_become_two_events() -> None:
    events: list[Any] = []
    asyncio.run(_burst(CallObserver("c", events.append), 1000))
    assert [e.progress for e in events] == [1, 1000]


def test_progress_keeps_a_call_alive_past_its_timeout(hub: McpHub, notifying_spec: ServerSpec) -> None:
    # a notification every 0.1 s for 3 s: three times the call's 1 s timeout, which each one starts again
    spec = notifying_spec.model_copy(update={"call_timeout": 1.0})
    result, events, _ = call(hub, spec, "progress", {"steps": 30, "seconds": 3.0})
    assert result.text_for_model() == "30 steps done"


def test_a_silent_call_still_times_out_and_the_server_is_told(
    hub: McpHub, notifying_http: HttpServer, state_dir: Path
) -> None:
    (state_dir / "slow-cancelled").unlink(missing_ok=True)
    spec = http_spec(notifying_http, key="silent", call_timeout=0.5)
    with pytest.raises(McpError) as info:
        call(hub, spec, "slow", {"seconds": 30})
    assert info.value.code is ErrorCode.MCP_TIMEOUT
    assert info.value.message.startswith("silent sent neither a result nor progress for 0.5 seconds; the call was")
    deadline = time.monotonic() + 5
    while not (state_dir / "slow-cancelled").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (state_dir / "slow-cancelled").exists()


def test_a_call_reporting_progress_stops_at_its_cap(
    clocked_hub: McpHub, clock: ManualClock, notifying_http: HttpServer
) -> None:
    spec = http_spec(notifying_http, key="endless", call_timeout=120)  # the cap: 10 minutes by default
    shown: list[Any] = []

    def two_minutes_less_twenty_seconds_pass(event: Any) -> None:
        shown.append(event)
        if isinstance(event, ToolProgressEvent):
            clock.advance(100)  # within the 120 s timeout, which the next notification starts again

    observer = CallObserver("call-1", two_minutes_less_twenty_seconds_pass)
    with pytest.raises(McpError) as info:
        clocked_hub.run(
            clocked_hub.acall_tool(spec, "progress", {"steps": 300, "seconds": 60}, observer=observer), timeout=30
        )
    assert info.value.code is ErrorCode.MCP_TIMEOUT
    assert "still running this call after 10 minutes, the most a call may take however often" in info.value.message
    # its progress carried it five times past the 120 s timeout, to the cap
    assert sum(isinstance(e, ToolProgressEvent) for e in shown) >= 6


def test_server_log_messages_are_shown_in_their_call_and_capped(hub: McpHub, notifying_spec: ServerSpec) -> None:
    result, events, _ = call(hub, notifying_spec, "chatty", {"count": 3})
    assert result.text_for_model() == "logged 3"
    logs = [(e.level, e.message) for e in events if isinstance(e, ToolLogEvent)]
    assert logs == [
        ("info", "working on item 1"),
        ("info", "working on item 2"),
        ("warning", '{"items": 3, "note": "last one"}'),
    ]

    _, events, _ = call(hub, notifying_spec, "chatty", {"count": MAX_LOG_EVENTS + 10})
    assert sum(isinstance(e, ToolLogEvent) for e in events) == MAX_LOG_EVENTS


def test_the_servers_log_level_setting_filters_what_it_sends(
    hub: McpHub, notifying_http: HttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    spec = http_spec(notifying_http, key="warnings-only", log_level="warning")
    with caplog.at_level("INFO", logger="services.mcp.session"):
        _, events, _ = call(hub, spec, "chatty", {"count": 4})
    assert [(e.level, e.message) for e in events if isinstance(e, ToolLogEvent)] == [
        ("warning", '{"items": 4, "note": "last one"}')
    ]
    assert any("MCP server log: server=warnings-only level=warning" in r.getMessage() for r in caplog.records)


def test_cancelling_one_call_tells_the_server_and_the_turn_goes_on(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer, state_dir: Path
) -> None:
    spec = http_spec(notifying_http, key="cancel-one")
    state = state_dir
    for name in ("slow-cancelled", "slow-finished"):
        (state / name).unlink(missing_ok=True)
    llm.queue(
        Turn(
            tool_calls=(
                ToolCall("slow", {"seconds": 30}, id="call_slow"),
                ToolCall("progress", {"steps": 4, "seconds": 1.0}, id="call_p"),
            )
        ),
        Turn(text="Done without the slow one."),
    )
    control = TurnControl()
    request = TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="go")
    started = time.monotonic()
    events = []
    for event in hub.iterate(lambda: run_turn(request, hub, control), idle_every=0.1):
        if event is None:
            continue
        events.append(event)
        if event.type == "tool_progress" and event.id == "call_p" and not any(e.type == "tool_result" for e in events):
            control.cancel_call("call_slow")
    assert time.monotonic() - started < 15  # half the slow call's 30 s
    results = {e.id: e for e in events if e.type == "tool_result"}
    assert (results["call_slow"].ok, results["call_slow"].error_code) == (False, "CANCELLED")
    assert results["call_p"].ok and results["call_p"].model_text == "4 steps done"
    assert events[-1].type == "done"
    # the model read that the user cancelled it, and the server was told
    seen = {m.get("tool_call_id"): m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"}
    assert CANCELLED_BY_USER in seen["call_slow"]
    deadline = time.monotonic() + 5
    while not (state / "slow-cancelled").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (state / "slow-cancelled").exists() and not (state / "slow-finished").exists()


def test_a_cancel_that_comes_before_the_call_starts_refuses_it(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    spec = http_spec(notifying_http, key="cancel-early")
    llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="call_echo"),)), Turn(text="ok"))
    control = TurnControl()
    control.cancel_call("call_echo")
    request = TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="go")
    events = [e for e in hub.iterate(lambda: run_turn(request, hub, control)) if e is not None]
    result = next(e for e in events if e.type == "tool_result")
    assert (result.ok, result.error_code) == (False, "CANCELLED")


def test_a_pooled_session_announces_a_changed_tool_list(hub: McpHub, notifying_http: HttpServer) -> None:
    spec = http_spec(notifying_http, key="growing")
    announced: list[tuple[str, str]] = []
    hub.pool.list_changed_listeners.append(lambda changed, kind: announced.append((changed.key, kind)))
    assert hub.run(hub.acall_tool(spec, "grow", {"name": "sprout"})).text_for_model() == "added sprout"
    deadline = time.monotonic() + 5
    while not announced and time.monotonic() < deadline:
        time.sleep(0.05)
    assert announced == [("growing", "tools")]
    assert "sprout" in {t.name for t in hub.run(hub.alist_tools(spec)).tools}


def test_structured_content_that_breaks_the_output_schema_is_a_protocol_error_the_model_reads(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    spec = http_spec(notifying_http, key="misreporting")
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(spec, "misreport", {"city": "Taipei"}))
    assert info.value.code is ErrorCode.MCP_PROTOCOL_ERROR
    assert "misreporting" in info.value.message and "21.5" in info.value.message

    llm.queue(
        Turn(tool_calls=(ToolCall("misreport", {"city": "Taipei"}, id="call_m"),)),
        Turn(text="The server sent bad data."),
    )
    request = TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="Weather?")
    events = [e for e in hub.iterate(lambda: run_turn(request, hub)) if e is not None]
    result = next(e for e in events if e.type == "tool_result")
    assert (result.ok, result.error_code) == (False, "MCP_PROTOCOL_ERROR")
    seen = {m.get("tool_call_id"): m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"}
    assert seen["call_m"].startswith("Error MCP_PROTOCOL_ERROR:")
    assert events[-1].type == "done"
