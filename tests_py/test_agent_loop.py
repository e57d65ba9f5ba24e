"""The agent loop with the scripted LLM and real FastMCP servers: what a user would see, event by event."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST_RETRY, ManualClock, http_spec, stdio_spec

from services.events import ErrorEvent, RoundEvent, TextEvent, ToolCallEvent, ToolResultEvent, parse_event
from services.llm import LlmSettings
from services.loop import (
    AssistantSettings,
    HistoryMessage,
    LoopLimits,
    Resume,
    ToolBinding,
    TurnRequest,
    history_from_events,
    run_turn,
)
from services.loop.transcript import INTERRUPTED_CALL, INTERRUPTED_REPLY, HistoryToolCall, to_langchain
from services.loop.turn_control import TurnControl
from services.loop.turn_tools import _offered_tool
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_info import ToolInfo
from testing.mcp_servers import HttpServer, free_port, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


def tools_of(hub: McpHub, spec: ServerSpec, approval: frozenset[str] = frozenset()) -> list[ToolBinding]:
    listing = hub.run(hub.alist_tools(spec))
    return [ToolBinding(server=spec, tool=t, requires_approval=t.name in approval) for t in listing.tools]


def settings(llm: ScriptedLLM, **limits: Any) -> AssistantSettings:
    return AssistantSettings(
        name="Helper",
        llm=LlmSettings(
            base_url=llm.base_url,
            api_key="k",
            model="scripted-model",
            max_retries=0,
            timeout=limits.pop("llm_timeout", 10),
        ),
        system_prompt="You are helpful.",
        limits=LoopLimits(**limits),
    )


def run(hub: McpHub, request: TurnRequest) -> list[Any]:
    return list(hub.iterate(lambda: run_turn(request, hub)))


def kinds(events: list[Any]) -> list[str]:
    """The types of the turn's events, without the `usage` following each model call (tested on
    its own in test_token_usage.py): what the user is shown."""
    return [e.type for e in events if e.type != "usage"]


def persisted(events: list[Any]) -> list[Any]:
    """What the Odoo layer stores and reads back: JSON payloads only."""
    return [parse_event(json.loads(json.dumps(e.data()))) for e in events]


def test_three_round_chain_streams_every_step(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    spec = http_spec(tools_server)
    llm.queue(
        Turn(text="Let me add. ", tool_calls=(ToolCall("add", {"a": 1, "b": 2}),)),
        Turn(tool_calls=(ToolCall("echo", {"text": "three"}),)),
        Turn(tool_calls=(ToolCall("weather", {"city": "Taipei"}),)),
        Turn(text="It is 21.5 °C in Taipei.", chunks=4),
    )
    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="Weather?"))
    assert kinds(events) == [
        "start",
        "round",
        "text",
        "text",
        "text",
        "tool_call",
        "tool_result",
        "round",
        "tool_call",
        "tool_result",
        "round",
        "tool_call",
        "tool_result",
        "round",
        "text",
        "text",
        "text",
        "text",
        "done",
    ]
    results = [e for e in events if e.type == "tool_result"]
    assert [r.ok for r in results] == [True, True, True]
    assert results[0].model_text == "3.0"
    assert results[2].content[-1].data == {"city": "Taipei", "celsius": 21.5}
    assert "".join(e.delta for e in events if e.type == "text") == "Let me add. It is 21.5 °C in Taipei."
    done = events[-1]
    assert done.rounds == 4 and done.usage["total_tokens"] > 0
    # the model saw each result, tied to its call, before the next round
    last_seen = llm.requests[1]["messages"][-1]
    assert (last_seen["role"], last_seen["content"], last_seen["tool_call_id"]) == ("tool", "3.0", results[0].id)
    offered = [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert {"add", "echo", "weather"} <= set(offered)


def test_a_tool_changed_on_its_server_is_offered_as_it_is_now(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    add = next(t for t in hub.run(hub.alist_tools(spec)).tools if t.name == "add")
    request = TurnRequest(assistant=settings(llm), tools=[ToolBinding(server=spec, tool=add)], user_message="add")
    llm.queue(Turn(text="ok"), Turn(text="ok"))
    run(hub, request)
    schema = {**add.input_schema, "properties": {**add.input_schema["properties"], "round": {"type": "boolean"}}}
    changed = add.model_copy(update={"description": "Adds two numbers, rounding when asked.", "input_schema": schema})
    run(hub, request.model_copy(update={"tools": [ToolBinding(server=spec, tool=changed)]}))
    before, after = (body["tools"][0]["function"] for body in llm.requests)
    assert before["description"] == add.description and "round" not in before["parameters"]["properties"]
    assert after["description"] == "Adds two numbers, rounding when asked."
    assert list(after["parameters"]["properties"]) == [*before["parameters"]["properties"], "round"]
    # what the model is offered, exactly: the server's schema, titles stripped
    assert llm.requests[1]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Adds two numbers, rounding when asked.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "round": {"type": "boolean"}},
                    "required": ["a", "b"],
                },
            },
        }
    ]


def test_a_schema_is_offered_dereferenced_and_without_titles() -> None:
    """The offer is what langchain-mcp-adapters 0.3 made of the same schema, byte for byte: `$ref`s
    inlined, `$defs` and titles gone, everything else as the server wrote it."""
    schema = {
        "type": "object",
        "title": "BookArgs",
        "properties": {
            "room": {"$ref": "#/$defs/Room", "description": "where"},
            "when": {"type": "string", "format": "date-time", "title": "When"},
            "filters": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "mode": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}], "default": None},
        },
        "required": ["room", "when"],
        "$defs": {
            "Room": {
                "type": "object",
                "title": "Room",
                "properties": {"name": {"type": "string", "title": "Name"}, "floor": {"type": "integer"}},
                "required": ["name"],
            }
        },
    }
    offered, _size = _offered_tool(ToolInfo(name="book", description="Books a room.", input_schema=schema), "srv__book")
    assert json.dumps(offered) == (
        '{"type": "function", "function": {"name": "srv__book", "description": "Books a room.", "parameters": '
        '{"type": "object", "properties": {"room": {"type": "object", "properties": {"name": {"type": "string"}, '
        '"floor": {"type": "integer"}}, "required": ["name"], "description": "where"}, "when": {"type": "string", '
        '"format": "date-time"}, "filters": {"type": "object"}, "tags": {"type": "array", "items": {"type": '
        '"string"}, "default": []}, "mode": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}], "default": null}}, '
        '"required": ["room", "when"]}}}'
    )


def test_calls_to_two_servers_overlap(hub: McpHub, llm: ScriptedLLM, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = stdio_spec("alpha", "--state-dir", str(tmp_path / "a"), name="alpha")
    with serve_http("streamable-http", "--state-dir", str(tmp_path / "b")) as beta_server:
        b = http_spec(beta_server, key="beta", name="beta")
        bindings = [x for x in tools_of(hub, a) + tools_of(hub, b) if x.tool.name == "slow"]
        llm.queue(
            Turn(tool_calls=(ToolCall("alpha__slow", {"seconds": 0.6}), ToolCall("beta__slow", {"seconds": 0.6}))),
            Turn(text="ok"),
        )
        events = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="both"))
    assert [e.ok for e in events if e.type == "tool_result"] == [True, True]
    (a_start, a_end), (b_start, b_end) = (_span(tmp_path / d) for d in ("a", "b"))
    assert a_start < b_end and b_start < a_end  # they really ran at the same time


def _span(state: Path) -> tuple[float, float]:
    start, end = (state / "slow-finished").read_text().split()
    return float(start), float(end)


def test_per_round_call_limit(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    spec = http_spec(tools_server)
    calls = tuple(ToolCall("add", {"a": i, "b": 0}) for i in range(12))
    llm.queue(Turn(tool_calls=calls), Turn(text="done"))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="many"))
    results = {e.id: e for e in events if e.type == "tool_result"}
    assert len(results) == 12
    assert [r.error_code for r in results.values()].count("LIMIT_EXCEEDED") == 2
    assert sum(1 for r in results.values() if r.ok) == 10


def _always_tools(body: dict) -> Turn:
    if body.get("tools"):
        return Turn(tool_calls=(ToolCall("echo", {"text": "again"}),))
    return Turn(text="Final answer without tools.")


def test_round_limit_asks_to_continue_then_resumes_from_history(hub: McpHub, tools_server: HttpServer) -> None:
    spec = http_spec(tools_server)
    with ScriptedLLM(responder=_always_tools) as llm:
        first = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="loop"))
        assert kinds(first).count("round") == 4
        assert first[-1].type == "confirm_continue" and first[-1].rounds_used == 4
        history = history_from_events(persisted(first), user_message="loop")

        go_on = run(
            hub,
            TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), history=history, resume=Resume(go_on=True)),
        )
        assert [e.n for e in go_on if e.type == "round"] == [5]
        assert go_on[-1].type == "done" and go_on[-1].rounds == 5
        assert "Final answer without tools." in "".join(e.delta for e in go_on if e.type == "text")
        assert "tools" not in llm.requests[-1]  # the closing call offers none

        stop = run(
            hub,
            TurnRequest(
                assistant=settings(llm), tools=tools_of(hub, spec), history=history, resume=Resume(go_on=False)
            ),
        )
        assert kinds(stop)[0] == "start" and kinds(stop)[-1] == "done"
        assert set(kinds(stop)[1:-1]) == {"text"}  # no round, no tool call: straight to the answer
        assert stop[-1].rounds == 4


def test_approval_pause_and_resume_allow_and_deny(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    spec = http_spec(tools_server)
    bindings = tools_of(hub, spec, approval=frozenset({"echo"}))
    llm.queue(
        Turn(tool_calls=(ToolCall("echo", {"text": "risky"}, id="c1"), ToolCall("add", {"a": 1, "b": 1}, id="c2")))
    )
    paused = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="go"))
    assert paused[-1].type == "approval_required"
    assert [(c.id, c.tool, c.arguments) for c in paused[-1].calls] == [("c1", "echo", {"text": "risky"})]
    assert not [e for e in paused if e.type == "tool_result"]  # nothing ran before the user decided
    history = history_from_events(persisted(paused), user_message="go")

    llm.queue(Turn(text="Echoed."))
    allowed = run(
        hub,
        TurnRequest(assistant=settings(llm), tools=bindings, history=history, resume=Resume(approvals={"c1": True})),
    )
    assert {e.id: e.ok for e in allowed if e.type == "tool_result"} == {"c1": True, "c2": True}
    assert allowed[-1].type == "done"

    llm.queue(Turn(text="Understood."))
    denied = run(
        hub,
        TurnRequest(assistant=settings(llm), tools=bindings, history=history, resume=Resume(approvals={"c1": False})),
    )
    results = {e.id: e for e in denied if e.type == "tool_result"}
    assert results["c1"].error_code == "TOOL_DENIED" and results["c2"].ok
    told = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool" and m["tool_call_id"] == "c1"]
    assert "denied by the user" in told[0]["content"]


def test_an_unattended_turn_refuses_what_would_wait_and_answers_at_its_round_limit(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    bindings = tools_of(hub, spec, approval=frozenset({"echo"}))
    llm.queue(
        Turn(tool_calls=(ToolCall("echo", {"text": "risky"}, id="c1"), ToolCall("add", {"a": 1, "b": 1}, id="c2")))
    )
    llm.queue(Turn(text="Added, without the echo."))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="go", unattended=True))
    assert "approval_required" not in kinds(events), "nobody is there to approve: no pause"
    results = {e.id: e for e in events if e.type == "tool_result"}
    assert results["c1"].error_code == "TOOL_DENIED" and results["c2"].ok
    told = [m for m in llm.requests[1]["messages"] if m["role"] == "tool" and m["tool_call_id"] == "c1"]
    assert "runs unattended" in told[0]["content"]
    assert events[-1].type == "done"

    with ScriptedLLM(responder=_always_tools) as looping:
        ended = run(
            hub,
            TurnRequest(assistant=settings(looping), tools=tools_of(hub, spec), user_message="loop", unattended=True),
        )
    assert "confirm_continue" not in kinds(ended), "nobody is asked whether to go on"
    assert ended[-1].type == "done" and ended[-1].rounds == 5


def test_truncated_arguments_are_never_run(hub: McpHub, llm: ScriptedLLM, tmp_path: Path) -> None:
    with serve_http("streamable-http", "--state-dir", str(tmp_path)) as server:
        spec = http_spec(server)
        llm.queue(
            Turn(tool_calls=(ToolCall("slow", '{"seconds": 0.1, "note": "cut he'),), finish_reason="length"),
            Turn(text="I will be shorter."),
        )
        events = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="x"))
    result = next(e for e in events if e.type == "tool_result")
    assert not result.ok and result.error_code == "LLM_BAD_RESPONSE" and "cut" in result.error_message
    assert not (tmp_path / "slow-started").exists()
    assert events[-1].type == "done"
    assert any("output limit" in m.get("content", "") for m in llm.requests[-1]["messages"] if m["role"] == "tool")


def test_unbound_tool_and_invalid_arguments_go_back_to_the_model(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    bindings = [b for b in tools_of(hub, spec) if b.tool.name == "add"]
    llm.queue(
        Turn(tool_calls=(ToolCall("die", {}), ToolCall("add", {"a": "one", "b": 2}))),
        Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}),)),
        Turn(text="3"),
    )
    events = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="x"))
    results = [e for e in events if e.type == "tool_result"]
    assert results[0].error_code == "MCP_TOOL_NOT_FOUND" and "not offered" in results[0].error_message
    assert results[1].error_code == "MCP_INVALID_PARAMS" and "arguments.a" in results[1].error_message
    assert results[2].ok and results[2].model_text == "3.0"
    assert events[-1].type == "done"


def test_unreachable_server_is_left_out_with_a_warning(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    good = http_spec(tools_server)
    dead = build_server_spec(
        key="dead", name="Dead server", url=f"http://127.0.0.1:{free_port()}/mcp", retry=FAST_RETRY
    )
    dead_tool = tools_of(hub, good)[0].tool
    bindings = tools_of(hub, good) + [ToolBinding(server=dead, tool=dead_tool)]
    llm.queue(Turn(text="Still here."))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="x"))
    warning = next(e for e in events if e.type == "warning")
    assert warning.code == "MCP_UNREACHABLE" and "Dead server is unavailable" in warning.message
    assert events[-1].type == "done"
    offered = [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert len(offered) == len(set(offered)) == len(bindings) - 1


def test_a_call_of_a_server_that_could_not_start_is_the_warning_not_a_failed_call(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    crashing = build_server_spec(
        key="sheet",
        name="sheet-music",
        transport="stdio",
        command=sys.executable,
        args=(str(Path(__file__).resolve().parents[1] / "testing" / "limits_server.py"), "--crash"),
        retry=FAST_RETRY,
    )
    play = ToolInfo(name="play_sheet_music", description="Plays a score.")
    bindings = [*tools_of(hub, http_spec(tools_server)), ToolBinding(server=crashing, tool=play)]
    # a model that calls it anyway, as one that saw it called earlier in the conversation may
    llm.queue(Turn(tool_calls=(ToolCall("play_sheet_music", {}), ToolCall("echo", {"text": "hi"}))), Turn(text="ok"))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="Play it"))
    shown = [e for e in kinds(events) if e != "text"]
    assert shown == ["start", "warning", "round", "tool_call", "tool_result", "round", "done"]
    warning = events[1]
    assert warning.code == "MCP_UNREACHABLE" and warning.message.startswith("sheet-music could not start")
    assert [e.tool for e in events if e.type == "tool_call"] == ["echo"]
    assert "play_sheet_music" not in [t["function"]["name"] for t in llm.requests[0]["tools"]]
    answers = {m["tool_call_id"]: m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"}
    asked = next(m for m in llm.requests[1]["messages"] if m.get("tool_calls"))
    played = next(c["id"] for c in asked["tool_calls"] if c["function"]["name"] == "play_sheet_music")
    assert answers[played].startswith("Error MCP_UNREACHABLE: Not run: sheet-music could not be reached")
    assert "Answer without them." in answers[played]
    # what is stored rebuilds a history the model can take: no call without its answer
    rebuilt = history_from_events(persisted(events), user_message="Play it")
    calls = [c.id for m in rebuilt for c in m.tool_calls]
    assert calls == [m.tool_call_id for m in rebuilt if m.role == "tool"] and len(calls) == 1


def test_an_approved_call_of_a_server_gone_meanwhile_says_it_could_not_be_reached(
    hub: McpHub, llm: ScriptedLLM
) -> None:
    with serve_http("streamable-http") as server:
        spec = http_spec(server, key="gone-meanwhile")
        bindings = tools_of(hub, spec, approval=frozenset({"echo"}))
        llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "risky"}, id="c1"),)))
        paused = run(hub, TurnRequest(assistant=settings(llm), tools=bindings, user_message="go"))
        assert paused[-1].type == "approval_required"
    hub.run(hub.aclose_server("gone-meanwhile"))
    llm.queue(Turn(text="It is down."))
    history = history_from_events(persisted(paused), user_message="go")
    resumed = run(
        hub,
        TurnRequest(assistant=settings(llm), tools=bindings, history=history, resume=Resume(approvals={"c1": True})),
    )
    assert [e for e in kinds(resumed) if e != "text"] == ["start", "warning", "tool_result", "round", "done"]
    result = next(e for e in resumed if e.type == "tool_result")
    assert result.id == "c1" and result.error_code == "MCP_UNREACHABLE"
    assert result.error_message.startswith("Not run: gone-meanwhile could not be reached when this answer started")


@pytest.mark.parametrize(
    ("turn", "code"),
    [
        (Turn(status=500), "LLM_BAD_RESPONSE"),
        (Turn(status=401), "LLM_AUTH_FAILED"),
        (Turn(status=429, retry_after=7), "LLM_RATE_LIMITED"),
        (Turn(text="partial answer", malformed_after=1), "LLM_BAD_RESPONSE"),
        (Turn(text="partial answer", disconnect_after=1), "LLM_BAD_RESPONSE"),
        (Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}),), disconnect_after=1), "LLM_BAD_RESPONSE"),
        (Turn(text="late", latency=3), "LLM_TIMEOUT"),
    ],
)
def test_llm_failures_end_the_turn_with_a_code(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer, turn: Turn, code: str
) -> None:
    llm.queue(turn)
    events = run(
        hub,
        TurnRequest(
            assistant=settings(llm, llm_timeout=1), tools=tools_of(hub, http_spec(tools_server)), user_message="x"
        ),
    )
    assert events[-1].type == "error"
    assert events[-1].code == code
    if code == "LLM_RATE_LIMITED":
        assert "retry in 7" in events[-1].message


@pytest.mark.parametrize(
    ("turn", "billed"),
    [
        (Turn(status=500), False),
        (Turn(status=429, retry_after=7), False),
        (Turn(text="a partial answer that was cut", chunks=4, disconnect_after=3), True),
        (Turn(text="late", latency=3), True),
    ],
)
def test_a_model_call_whose_stream_did_not_complete_is_charged_as_incomplete(
    hub: McpHub, llm: ScriptedLLM, turn: Turn, billed: bool
) -> None:
    """Providers bill what they read and streamed: a cut or stalled call has its usage, estimated
    and marked incomplete, before the error; a refused request has none."""
    llm.queue(turn)
    events = run(hub, TurnRequest(assistant=settings(llm, llm_timeout=1), user_message="x" * 400))
    usage = [e for e in events if e.type == "usage"]
    assert events[-1].type == "error"
    if not billed:
        assert usage == []
        return
    assert [(u.incomplete, events.index(u)) for u in usage] == [(True, len(events) - 2)]
    assert usage[0].usage.input_tokens >= 100  # the request's 400 characters, estimated
    assert (usage[0].usage.output_tokens > 0) == (turn.text != "late")


def test_a_turn_stopped_mid_answer_leaves_the_calls_usage_to_record(hub: McpHub, llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="word " * 40, chunks=40, chunk_delay=0.2))
    control = TurnControl()
    request = TurnRequest(assistant=settings(llm), user_message="x")
    stream = hub.iterate(lambda: run_turn(request, hub, control))
    for event in stream:
        if event.type == "text":
            break
    stream.close()  # the browser went away
    usage = control.take_unfinished()
    assert usage is not None and usage.incomplete
    assert usage.usage.input_tokens > 0 and usage.usage.output_tokens > 0
    assert control.take_unfinished() is None, "recorded once"


def test_a_stopped_turn_is_told_as_such_to_the_model_in_the_next() -> None:
    """A reply cut off is given back saying so; a call that ran when the turn stopped may have run."""
    events = [
        RoundEvent(n=1, max=5),
        TextEvent(delta="Checking"),
        ToolCallEvent(id="c1", name="add", tool="add", title="add", server="s", arguments={"a": 1}, round=1),
        ErrorEvent(code="CANCELLED", message="Stopped"),
    ]
    history = history_from_events(persisted(events), user_message="q")
    assert history[1:] == [
        HistoryMessage(
            role="assistant", content="Checking", tool_calls=(HistoryToolCall(id="c1", name="add", arguments={"a": 1}),)
        ),
        HistoryMessage(role="tool", content=INTERRUPTED_CALL, tool_call_id="c1"),
    ]
    assert "may have run" in INTERRUPTED_CALL
    cut = history_from_events(persisted([RoundEvent(n=1, max=5), TextEvent(delta="Half an"), events[-1]]), "q")
    assert cut[1] == HistoryMessage(role="assistant", content="Half an", interrupted=True)
    assert to_langchain(cut, "", native_tools=True)[1].content == f"Half an\n\n{INTERRUPTED_REPLY}"


def test_unreachable_llm(hub: McpHub) -> None:
    llm = LlmSettings(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", max_retries=0)
    events = run(hub, TurnRequest(assistant=AssistantSettings(name="A", llm=llm), user_message="x"))
    assert events[-1].type == "error" and events[-1].code == "LLM_UNREACHABLE"


def test_consumer_disconnect_cancels_everything(hub: McpHub, llm: ScriptedLLM, tmp_path: Path) -> None:
    with serve_http("streamable-http", "--state-dir", str(tmp_path)) as server:
        spec = http_spec(server)
        bindings = tools_of(hub, spec)
        llm.queue(Turn(tool_calls=(ToolCall("slow", {"seconds": 30}),)))
        stream = hub.iterate(
            lambda: run_turn(TurnRequest(assistant=settings(llm), tools=bindings, user_message="x"), hub)
        )
        for event in stream:
            if event.type == "tool_call":
                break
        _wait(lambda: (tmp_path / "slow-started").exists())
        assert "ToolRunner._run_one" in _turn_tasks(hub)
        stream.close()  # the browser went away
        _wait(lambda: (tmp_path / "slow-cancelled").exists())
        assert _turn_tasks(hub) == []  # no task of the turn outlives it
        assert not (tmp_path / "slow-finished").exists()


def test_prompted_tools_for_models_without_function_calling(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    assistant = settings(llm).model_copy(update={"prompted_tools": True})
    llm.queue(
        Turn(text='I will add.\n```json\n{"tool_calls": [{"name": "add", "arguments": {"a": 20, "b": 22}}]}\n```'),
        Turn(text="<echo><text>forty-two</text></echo>"),
        Turn(text="The answer is 42."),
    )
    events = run(hub, TurnRequest(assistant=assistant, tools=tools_of(hub, spec), user_message="add"))
    results = [e for e in events if e.type == "tool_result"]
    assert [r.model_text for r in results] == ["42.0", "forty-two"]
    assert "tools" not in llm.requests[0]
    assert "tool_calls" in llm.requests[0]["messages"][0]["content"]  # described in the system prompt
    assert "Result of add" in llm.requests[1]["messages"][-1]["content"]
    assert events[-1].type == "done"


def _turn_tasks(hub: McpHub) -> list[str]:
    """Tasks of a turn (the bridge's producer, tool calls), as opposed to the pool's sessions."""

    async def names() -> list[str]:
        current = asyncio.current_task()
        return sorted(t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not current)

    return [n for n in hub.run(names()) if n.startswith(("ToolRunner", "McpHub.iterate"))]


def _wait(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_history_round_trip_keeps_what_the_model_saw() -> None:
    events = [
        RoundEvent(n=1, max=5),
        TextEvent(delta="Checking"),
        ToolCallEvent(id="c1", name="add", tool="add", title="add", server="s", arguments={"a": 1}, round=1),
        ToolResultEvent(id="c1", ok=True, model_text="1"),
        RoundEvent(n=2, max=5),
        TextEvent(delta="One."),
    ]
    assert history_from_events(persisted(events), user_message="q") == [
        HistoryMessage(role="user", content="q"),
        HistoryMessage(
            role="assistant", content="Checking", tool_calls=(HistoryToolCall(id="c1", name="add", arguments={"a": 1}),)
        ),
        HistoryMessage(role="tool", content="1", tool_call_id="c1"),
        HistoryMessage(role="assistant", content="One."),
    ]


def test_calls_to_one_server_respect_its_concurrency_limit(hub: McpHub, llm: ScriptedLLM, tmp_path: Path) -> None:
    with serve_http("streamable-http", "--state-dir", str(tmp_path)) as server:
        spec = http_spec(server)
        llm.queue(
            Turn(tool_calls=(ToolCall("slow", {"seconds": 0.4}), ToolCall("slow", {"seconds": 0.4}))), Turn(text="ok")
        )
        events = run(
            hub,
            TurnRequest(assistant=settings(llm, per_server_concurrency=1), tools=tools_of(hub, spec), user_message="x"),
        )
    assert [e.ok for e in events if e.type == "tool_result"] == [True, True]
    spans = sorted(tuple(map(float, line.split())) for line in (tmp_path / "slow-finished").read_text().splitlines())
    assert spans[1][0] >= spans[0][1]  # the second started only after the first finished


def test_turn_time_limit_bounds_tools_and_ends_the_turn(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    llm.queue(Turn(tool_calls=(ToolCall("slow", {"seconds": 20}),)))
    started = time.monotonic()
    events = run(
        hub, TurnRequest(assistant=settings(llm, turn_timeout=1.0), tools=tools_of(hub, spec), user_message="x")
    )
    assert time.monotonic() - started < 10
    result = next(e for e in events if e.type == "tool_result")
    assert result.error_code == "MCP_TIMEOUT"
    assert events[-1].type == "error" and events[-1].code == "LLM_TIMEOUT"
    assert "1 s limit" in events[-1].message


def test_a_turn_resumed_after_a_long_approval_goes_on_with_the_time_it_had_left(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    hub = clocked_hub
    bindings = tools_of(hub, http_spec(tools_server, call_timeout=1000), approval=frozenset({"slow"}))
    limits = {"turn_timeout": 100.0, "call_timeout": 1000.0}
    llm.queue(Turn(tool_calls=(ToolCall("slow", {"seconds": 0.2}, id="c1"),)))
    paused = []
    first = TurnRequest(assistant=settings(llm, **limits), tools=bindings, user_message="go")
    for event in hub.iterate(lambda: run_turn(first, hub)):
        paused.append(event)
        if event.type == "round":
            clock.advance(70)  # the model thinks for 70 s
    assert paused[-1].type == "approval_required" and paused[-1].turn_ms == 70_000
    clock.advance(3600)  # the user answers an hour later: not counted
    history = history_from_events(persisted(paused), user_message="go")

    def resume(then: float) -> list[Any]:
        """The approved call runs, then the model answers; `then` seconds pass as the turn goes on."""
        request = TurnRequest(
            assistant=settings(llm, **limits),
            tools=bindings,
            history=history,
            resume=Resume(approvals={"c1": True}),
            spent=persisted(paused)[-1].turn_ms / 1000,
        )
        llm.queue(Turn(text="Done."))
        events = []
        for event in hub.iterate(lambda: run_turn(request, hub)):
            events.append(event)
            if event.type == "start":
                clock.advance(then)
        return events

    in_time = resume(29)  # 30 s were left
    assert [e.ok for e in in_time if e.type == "tool_result"] == [True] and in_time[-1].type == "done"
    late = resume(31)
    assert late[-1].type == "error" and late[-1].code == "LLM_TIMEOUT" and "100 s limit" in late[-1].message


def test_tools_with_unusable_schemas_are_left_out_with_a_warning(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    good = tools_of(hub, spec)
    echo = next(b for b in good if b.tool.name == "echo")
    broken = [
        ToolBinding(
            server=spec, tool=echo.tool.model_copy(update={"name": "odd_type", "input_schema": {"type": "string"}})
        ),
        ToolBinding(
            server=spec,
            tool=echo.tool.model_copy(
                update={"name": "bad_schema", "input_schema": {"type": "object", "properties": 3}}
            ),
        ),
    ]
    llm.queue(Turn(text="fine"))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=good + broken, user_message="x"))
    warnings = [e.message for e in events if e.type == "warning"]
    assert any("'odd_type' is left out" in w and "must be an object" in w for w in warnings)
    assert any("'bad_schema' is left out" in w and "invalid" in w for w in warnings)
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "odd_type" not in offered and "bad_schema" not in offered and "echo" in offered
    assert events[-1].type == "done"


def test_a_ten_megabyte_result_is_cut_for_the_model_and_the_user(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    llm.queue(Turn(tool_calls=(ToolCall("big", {"chars": 10_000_000}),)), Turn(text="That was long."))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="x"))
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok
    assert len(result.model_text) < 21_000 and "truncated" in result.model_text
    assert len(json.dumps(result.data())) < 250_000  # what is stored and sent to the browser
    assert "truncated" in result.content[0].text
    assert len(json.dumps(llm.requests[1])) < 50_000
    assert events[-1].type == "done"
