"""A server asks the assistant's model for a completion (sampling) during a call: on a server of the
handshake era (`sampling/createMessage`) and at 2026-07-28 (`input_required`). The request waits for
the user's approval (she may edit it), the turn's model answers it as a model call of the turn (its
usage reported, its budgets checked), and the answer goes back to the server; a declined request,
a server the admin did not allow, a call nobody attends and a spent budget are refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from conftest import ManualClock, http_spec
from test_agent_loop import settings, tools_of

from services.errors import McpError
from services.loop import BudgetLine, SpendGuard, TurnControl, TurnRequest, run_turn
from services.mcp import McpHub
from services.server_spec import ServerSpec
from services.token_usage import Prices
from testing.mcp_servers import HttpServer, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn

ERAS = ("legacy", "modern")


@pytest.fixture(scope="module", params=ERAS)
def sampling_http(request: pytest.FixtureRequest) -> Iterator[tuple[str, HttpServer]]:
    with serve_http("streamable-http", "--sampling", "--era", request.param) as server:
        yield request.param, server


def sampling_spec(server: tuple[str, HttpServer], **fields: Any) -> ServerSpec:
    era, http = server
    return http_spec(
        http, key=f"sampling-{era}-{fields.get('sampling', True)}", **{"name": "Quiz", "sampling": True, **fields}
    )


def run(
    hub: McpHub,
    llm: ScriptedLLM,
    spec: ServerSpec,
    answer: Callable[[Any], tuple[str, dict | None] | None],
    model_says: str = "Paris.",
    limits: dict[str, Any] | None = None,
    **request: Any,
) -> list[Any]:
    """A turn that calls ask_model once; every sampling_required gets `answer(event)`; the scripted
    model answers the sampling request with `model_says`, then the turn with "Thanks."."""
    llm.queue(
        Turn(tool_calls=(ToolCall("ask_model", {"question": "Capital of France?"}, id="call_ask"),)),
        Turn(text=model_says),
        Turn(text="Thanks."),
    )
    control = TurnControl()
    turn = TurnRequest(
        assistant=settings(llm, **(limits or {})), tools=tools_of(hub, spec), user_message="go", **request
    )
    events = []
    for event in hub.iterate(lambda: run_turn(turn, hub, control), idle_every=0.1):
        if event is None:
            continue
        events.append(event)
        if event.type == "sampling_required":
            reply = answer(event)
            if reply is not None:
                control.answer_elicitation(event.sampling, *reply)
    return events


def result_of(events: list[Any]) -> Any:
    return next(e for e in events if e.type == "tool_result" and e.id == "call_ask")


def test_an_approved_request_is_answered_by_the_turns_model(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    events = run(hub, llm, sampling_spec(sampling_http), lambda event: ("accept", None))
    asked = next(e for e in events if e.type == "sampling_required")
    assert (asked.id, asked.server, asked.max_tokens) == ("call_ask", "Quiz", 200)
    assert [(m.role, m.text) for m in asked.messages] == [("user", "Capital of France?")]
    assert asked.system_prompt == "Answer in one short sentence."
    sampled = llm.requests[1]
    assert [(m["role"], m["content"]) for m in sampled["messages"]] == [
        ("system", "Answer in one short sentence."),
        ("user", "Capital of France?"),
    ]
    assert "tools" not in sampled
    done = next(e for e in events if e.type == "sampling_done")
    assert (done.sampling, done.action, done.answer, done.model) == (
        asked.sampling,
        "accept",
        "Paris.",
        "scripted-model",
    )
    assert result_of(events).model_text == "scripted-model said: Paris."
    usages = [e for e in events if e.type == "usage"]
    assert [u.sampling for u in usages] == [False, True, False]
    assert usages[1].round == 1 and usages[1].usage.total_tokens > 0
    # the turn's usage counts the sampling call too
    assert events[-1].type == "done"
    assert events[-1].usage["total_tokens"] == sum(u.usage.total_tokens for u in usages)


def test_the_users_edits_are_what_the_model_reads(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    edited = {"messages": [{"role": "user", "text": "Capital of Belgium?"}], "max_tokens": 50}
    events = run(hub, llm, sampling_spec(sampling_http), lambda event: ("accept", edited), model_says="Brussels.")
    sampled = llm.requests[1]
    assert sampled["messages"][-1] == {"role": "user", "content": "Capital of Belgium?"}
    assert sampled.get("max_tokens", sampled.get("max_completion_tokens")) == 50
    assert result_of(events).model_text == "scripted-model said: Brussels."


def test_a_declined_request_is_refused_to_the_server_and_the_model_is_not_called(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    era, _ = sampling_http
    llm_answers = "Thanks."  # the second scripted turn answers the turn itself: no sampling call
    events = run(hub, llm, sampling_spec(sampling_http), lambda event: ("decline", None), model_says=llm_answers)
    done = next(e for e in events if e.type == "sampling_done")
    assert (done.action, done.answer) == ("decline", None)
    told = "User rejected sampling request: the user declined it."
    result = result_of(events)
    if era == "legacy":  # the server is answered the refusal, and says so in its result
        assert result.model_text == f"refused: {told}"
    else:  # at 2026-07-28 a refused input ends the call: the model reads why
        assert not result.ok and told in result.model_text
    assert [e.sampling for e in events if e.type == "usage"] == [False, False]
    assert len(llm.requests) == 2


def test_a_server_the_admin_did_not_allow_sampling_is_not_offered_it(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    spec = sampling_spec(sampling_http, sampling=False)
    told = hub.run(hub.acall_tool(spec, "sampling_offered", {}))
    assert told.text_for_model(1000) == "sampling offered: False"
    events = run(hub, llm, spec, lambda event: ("accept", None), model_says="Thanks.")
    assert not [e for e in events if e.type.startswith("sampling")]
    assert "Sampling not supported" in result_of(events).model_text
    assert len(llm.requests) == 2


def test_an_allowed_server_is_offered_sampling(hub: McpHub, sampling_http: tuple[str, HttpServer]) -> None:
    told = hub.run(hub.acall_tool(sampling_spec(sampling_http), "sampling_offered", {}))
    assert told.text_for_model(1000) == "sampling offered: True"


def test_a_call_nobody_attends_is_refused_with_a_sentence(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    events = run(hub, llm, sampling_spec(sampling_http), lambda event: ("accept", None), "Thanks.", unattended=True)
    assert not [e for e in events if e.type.startswith("sampling")]
    assert "nobody can approve this request here" in result_of(events).model_text
    assert len(llm.requests) == 2


def test_a_call_outside_a_turn_is_refused_with_a_sentence(hub: McpHub, sampling_http: tuple[str, HttpServer]) -> None:
    call = hub.acall_tool(sampling_spec(sampling_http), "ask_model", {"question": "Capital of France?"})
    if sampling_http[0] == "legacy":  # the server is answered the refusal, and says so in its result
        assert "nobody can approve this request here" in hub.run(call).text_for_model(1000)
        return
    with pytest.raises(McpError, match="nobody can approve this request here"):  # at 2026-07-28 the call ends
        hub.run(call)


def test_a_spent_budget_refuses_the_sampling_call(
    hub: McpHub, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    # one token left: the turn's first round may start, the sampling call after it may not
    line = BudgetLine(budget_id=1, tokens=True, amount=Decimal(1_000_000), spent=Decimal(999_999), refusal="Spent.")
    spend = SpendGuard([line], Prices(), settle_timeout=0.0)
    events = run(hub, llm, sampling_spec(sampling_http), lambda event: ("accept", None), "Thanks.", spend=spend)
    done = next(e for e in events if e.type == "sampling_done")
    assert (done.action, done.note) == ("cancel", "Spent.")
    assert "Spent." in result_of(events).model_text
    assert [e.sampling for e in events if e.type == "usage"] == [False]
    assert events[-1].type == "error" and events[-1].code == "BUDGET_SPENT"


def test_the_users_time_counts_against_neither_the_call_nor_the_turn(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    spec = sampling_spec(sampling_http, call_timeout=1.0, question_timeout=7200)

    def after_an_hour(event: Any) -> tuple[str, None]:
        clock.advance(3600)  # the call's 1 s and the turn's 5 s are long past, the request's 2 h not
        return "accept", None

    events = run(clocked_hub, llm, spec, after_an_hour, limits={"call_timeout": 1.0, "turn_timeout": 5.0})
    assert result_of(events).model_text == "scripted-model said: Paris."
    assert events[-1].type == "done"


def test_an_unanswered_request_is_cancelled_at_the_question_limit_and_the_block_says_so(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, sampling_http: tuple[str, HttpServer]
) -> None:
    def never(event: Any) -> None:
        clock.advance(600)  # the question's default limit: 10 minutes

    events = run(clocked_hub, llm, sampling_spec(sampling_http), never, model_says="Thanks.")
    done = next(e for e in events if e.type == "sampling_done")
    assert (done.action, done.note) == ("cancel", "No answer within 10 minutes: the sampling request was cancelled.")
    assert done.note in result_of(events).model_text  # the server (or, at 2026-07-28, the model) is told why
    assert len(llm.requests) == 2
