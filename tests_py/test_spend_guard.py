"""A turn's budgets as the loop sees them (SpendGuard): its own calls count at once, the writer's
counters as they come; no model call starts once a budget is spent."""

from __future__ import annotations

import time
from decimal import Decimal

from conftest import http_spec
from test_agent_loop import settings, tools_of

from services.events import UsageEvent
from services.loop import BudgetLine, SpendGuard, TurnRequest, run_turn
from services.mcp import McpHub
from services.token_usage import Prices, TokenUsage
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn

# 2.50 per million input tokens: 40,000 input tokens cost 0.10
PRICES = Prices(input=Decimal("2.5"), output=Decimal(10))
ROUND = TokenUsage(input_tokens=40_000)
SPENT = "Your monthly AI budget “Chat cap” (0.15 €) is spent."


def line(amount: str, spent: str = "0", budget_id: int = 1, tokens: bool = False) -> BudgetLine:
    return BudgetLine(budget_id=budget_id, tokens=tokens, amount=Decimal(amount), spent=Decimal(spent), refusal=SPENT)


def guard_of(*lines: BudgetLine, prices: Prices = PRICES) -> SpendGuard:
    """A guard no writer confirms: the loop does not wait for one."""
    return SpendGuard(lines, prices, settle_timeout=0)


def test_the_turns_own_calls_count_before_the_writer_confirms_them() -> None:
    guard = guard_of(line("0.15"))
    guard.charge(ROUND)
    assert guard.refusal() is None
    guard.charge(ROUND)  # the writer has stored neither call yet
    assert guard.refusal() == SPENT


def test_a_confirmed_counter_replaces_the_calls_it_includes() -> None:
    guard = guard_of(line("0.25"))
    guard.charge(ROUND)
    guard.charge(ROUND)
    # the writer stored the first call: the counter holds it and another turn's 0.05
    guard.confirm(1, Decimal("0.15"), Decimal("0.25"), True, charged=1)
    assert guard.refusal() == SPENT  # 0.15 + the second call's 0.10
    # a confirmation older than the last is ignored
    guard.confirm(1, Decimal("0"), Decimal("0.25"), True, charged=0)
    assert guard.refusal() == SPENT


def test_another_turn_spending_the_budget_stops_this_one() -> None:
    guard = guard_of(line("1.00"))
    guard.charge(ROUND)
    guard.confirm(1, Decimal("1.10"), Decimal("1.00"), True, charged=1)
    assert guard.refusal() == SPENT


def test_a_raised_or_lifted_budget_lets_the_turn_go_on() -> None:
    guard = guard_of(line("0.10"))
    guard.charge(ROUND)
    assert guard.refusal() == SPENT
    guard.confirm(1, Decimal("0.10"), Decimal("0.50"), True, charged=1)
    assert guard.refusal() is None
    guard.confirm(1, Decimal("0.60"), Decimal("0.50"), False, charged=1)
    assert guard.refusal() is None


def test_a_token_budget_counts_tokens_not_money() -> None:
    guard = guard_of(line("50000", tokens=True), prices=Prices())
    guard.charge(ROUND)
    assert guard.refusal() is None
    guard.charge(TokenUsage(input_tokens=9_000, output_tokens=1_000))
    assert guard.refusal() == SPENT


def test_the_loop_starts_no_model_call_once_a_budget_is_spent(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    usage = {"prompt_tokens": 40_000, "completion_tokens": 0, "total_tokens": 40_000}
    add = (ToolCall("add", {"a": 1, "b": 2}),)
    llm.queue(Turn(tool_calls=add, usage=usage), Turn(tool_calls=add, usage=usage), Turn(text="3.", usage=usage))
    guard = guard_of(line("0.15"))
    request = TurnRequest(
        assistant=settings(llm), tools=tools_of(hub, http_spec(tools_server)), user_message="1+2?", spend=guard
    )
    events = list(hub.iterate(lambda: run_turn(request, hub)))
    assert len(llm.requests) == 2
    assert [e.round for e in events if isinstance(e, UsageEvent)] == [1, 2]
    assert events[-1].type == "error"
    assert events[-1].code == "BUDGET_SPENT"
    assert events[-1].message == SPENT
    assert [e.type for e in events if e.type == "round"] == ["round", "round"]


def test_the_final_answer_is_not_asked_for_either(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    usage = {"prompt_tokens": 40_000, "completion_tokens": 0, "total_tokens": 40_000}
    llm.queue(Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}),), usage=usage), Turn(text="3.", usage=usage))
    guard = guard_of(line("0.10"))
    request = TurnRequest(
        assistant=settings(llm, max_rounds=1),
        tools=tools_of(hub, http_spec(tools_server)),
        user_message="1+2?",
        spend=guard,
    )
    events = list(hub.iterate(lambda: run_turn(request, hub)))
    assert len(llm.requests) == 1
    assert events[-1].type == "error" and events[-1].code == "BUDGET_SPENT"


def test_the_loop_waits_for_the_writer_to_count_its_last_call_before_the_next(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    usage = {"prompt_tokens": 40_000, "completion_tokens": 0, "total_tokens": 40_000}
    add = (ToolCall("add", {"a": 1, "b": 2}),)
    llm.queue(Turn(tool_calls=add, usage=usage), Turn(tool_calls=add, usage=usage), Turn(text="3.", usage=usage))
    guard = SpendGuard([line("1.00")], PRICES, settle_timeout=30)
    request = TurnRequest(
        assistant=settings(llm), tools=tools_of(hub, http_spec(tools_server)), user_message="1+2?", spend=guard
    )
    events = []
    for event in hub.iterate(lambda: run_turn(request, hub)):
        events.append(event)
        if isinstance(event, UsageEvent):
            # the writer, late: the counter it reads holds another turn's charges, which spent the budget
            time.sleep(0.3)
            guard.confirm(1, Decimal("1.05"), Decimal("1.00"), True, charged=1)
    assert len(llm.requests) == 1
    assert events[-1].type == "error" and events[-1].message == SPENT
