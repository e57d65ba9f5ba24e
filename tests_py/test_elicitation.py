"""A server asks the user during a call (elicitation, form and URL modes): the question becomes an
event, the user's answer reaches the server, and neither the call's timeout nor the turn's runs
while the user answers; an unanswered question is cancelled at its own limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import ManualClock, http_spec
from test_agent_loop import settings, tools_of

from services.loop import TurnControl, TurnRequest, run_turn
from services.mcp import CallObserver, McpHub
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


def ask_and_answer(
    hub: McpHub,
    llm: ScriptedLLM,
    spec: Any,
    calls: tuple[ToolCall, ...],
    answer: Callable[[Any], tuple[str, dict | None] | None],
    tools: list[Any] | None = None,
    **limits: Any,
) -> list[Any]:
    """A turn calling `calls`; every elicitation_required gets `answer(event)` through a TurnControl.
    `tools`: the bindings offered (by default every tool of `spec`)."""
    llm.queue(Turn(tool_calls=calls), Turn(text="Thanks."))
    control = TurnControl()
    tools = tools_of(hub, spec) if tools is None else tools
    request = TurnRequest(assistant=settings(llm, **limits), tools=tools, user_message="go")
    events = []
    for event in hub.iterate(lambda: run_turn(request, hub, control), idle_every=0.1):
        if event is None:
            continue
        events.append(event)
        if event.type == "elicitation_required":
            reply = answer(event)
            if reply is not None:
                control.answer_elicitation(event.elicitation, *reply)
    return events


def result_of(events: list[Any], call_id: str) -> Any:
    return next(e for e in events if e.type == "tool_result" and e.id == call_id)


def test_a_form_question_is_answered_by_the_user(hub: McpHub, llm: ScriptedLLM, notifying_spec: Any) -> None:
    events = ask_and_answer(
        hub,
        llm,
        notifying_spec,
        (ToolCall("ask_preferences", {}, id="call_ask"),),
        lambda event: ("accept", {"name": "Ann", "color": "blue", "newsletter": True}),
    )
    question = next(e for e in events if e.type == "elicitation_required")
    assert (question.id, question.mode, question.message) == (
        "call_ask",
        "form",
        "Who are you, and which colour do you like?",
    )
    schema = question.requested_schema
    assert schema["properties"]["color"]["enum"] == ["red", "green", "blue"] and schema["required"] == ["name"]
    done = next(e for e in events if e.type == "elicitation_done")
    assert (done.elicitation, done.action) == (question.elicitation, "accept")
    assert result_of(events, "call_ask").model_text == "hello Ann, blue (subscribed)"
    assert [e.type for e in events].index("elicitation_done") < [e.type for e in events].index("tool_result")


def test_decline_and_cancel_reach_the_server(hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer) -> None:
    spec = http_spec(notifying_http, key="asking")
    for action in ("decline", "cancel"):
        events = ask_and_answer(
            hub,
            llm,
            spec,
            (ToolCall("ask_preferences", {}, id="call_ask"),),
            lambda event, action=action: (action, None),
        )
        assert result_of(events, "call_ask").model_text == f"no answer: {action}"


def test_a_url_question_shows_its_host_and_waits_for_the_user(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    spec = http_spec(notifying_http, key="asking-url")
    events = ask_and_answer(
        hub, llm, spec, (ToolCall("ask_visit", {}, id="call_visit"),), lambda event: ("accept", None)
    )
    question = next(e for e in events if e.type == "elicitation_required")
    assert (question.mode, question.host, question.url) == (
        "url",
        "pay.example.com",
        "https://pay.example.com/confirm?id=42",
    )
    assert question.requested_schema is None
    assert result_of(events, "call_visit").model_text == "visit: accept"


def test_the_users_time_counts_against_neither_the_call_nor_the_turn(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    spec = http_spec(notifying_http, key="asking-slowly", call_timeout=1.0, question_timeout=7200)

    def after_an_hour(event: Any) -> tuple[str, dict]:
        clock.advance(3600)  # the call's 1 s and the turn's 5 s are long past, the question's 2 h not
        return "accept", {"name": "Ann", "color": "green"}

    events = ask_and_answer(
        clocked_hub,
        llm,
        spec,
        (ToolCall("ask_preferences", {}, id="call_ask"),),
        after_an_hour,
        call_timeout=1.0,
        turn_timeout=5.0,
    )
    assert result_of(events, "call_ask").model_text == "hello Ann, green"
    assert next(e for e in events if e.type == "elicitation_done").note is None
    assert events[-1].type == "done"


@pytest.mark.parametrize(("tool", "told"), [("ask_preferences", "no answer: cancel"), ("ask_visit", "visit: cancel")])
def test_an_unanswered_question_is_cancelled_at_its_limit_and_the_block_says_so(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, notifying_http: HttpServer, tool: str, told: str
) -> None:
    spec = http_spec(notifying_http, key=f"asking-{tool}")  # the question's default limit: 10 minutes

    def never(event: Any) -> None:
        clock.advance(600)

    events = ask_and_answer(clocked_hub, llm, spec, (ToolCall(tool, {}, id="call_ask"),), never)
    done = next(e for e in events if e.type == "elicitation_done")
    assert (done.action, done.note) == ("cancel", "No answer within 10 minutes: the question was cancelled.")
    assert result_of(events, "call_ask").model_text == told  # the server was answered `cancel`, and went on
    assert events[-1].type == "done"


def test_a_tools_inline_icon_is_kept_and_a_remote_one_never(hub: McpHub, notifying_http: HttpServer) -> None:
    tools = {t.name: t for t in hub.run(hub.alist_tools(http_spec(notifying_http, key="icons"))).tools}
    assert tools["ask_preferences"].icon.startswith("data:image/png;base64,iVBOR")
    assert tools["echo"].icon is None


def test_a_call_nobody_can_be_asked_for_declines_the_question_at_once(hub: McpHub, notifying_spec: Any) -> None:
    events: list[Any] = []
    observer = CallObserver("call_app", events.append)  # as an app's call: no turn to show the question
    result = hub.run(hub.acall_tool(notifying_spec, "ask_preferences", {}, observer=observer), timeout=30)
    assert result.text_for_model() == "no answer: decline"
    assert observer.declined == ["Who are you, and which colour do you like?"]
    assert not [e for e in events if e.type.startswith("elicitation")]
