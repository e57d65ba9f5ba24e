"""Token usage and its cost: what providers report, summed and priced in Decimal; and a real
turn's `usage` event after each model call (the scripted LLM reporting as OpenAI documents)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from conftest import http_spec
from langchain_openai.chat_models.base import _create_usage_metadata
from pydantic import ValidationError
from test_agent_loop import run, settings, tools_of

from services.events import UsageEvent
from services.llm import ApiStyle, LlmSettings, ProviderKind, default_capabilities
from services.loop import AssistantSettings, TurnRequest
from services.mcp import McpHub
from services.token_usage import Prices, TokenUsage, cost_of
from testing.llm_providers import DeepSeekContextCache, ResponsesApi
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn, openai_usage


def test_langchain_usage_metadata_is_read_with_cached_and_reasoning_tokens() -> None:
    usage = TokenUsage.from_metadata(
        {
            "input_tokens": 1200,
            "output_tokens": 300,
            "total_tokens": 1500,
            "input_token_details": {"cache_read": 1024, "audio": 0},
            "output_token_details": {"reasoning": 256},
        }
    )
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.reasoning_tokens) == (
        1200,
        1024,
        300,
        256,
    )
    assert usage.total_tokens == 1500
    assert usage.totals() == {
        "input_tokens": 1200,
        "output_tokens": 300,
        "cached_input_tokens": 1024,
        "reasoning_tokens": 256,
        "total_tokens": 1500,
    }


@pytest.mark.parametrize("metadata", [None, {}, {"input_tokens": None, "output_tokens": -3, "total_tokens": True}])
def test_nothing_or_odd_counts_reported_is_no_usage(metadata: Any) -> None:
    usage = TokenUsage.from_metadata(metadata)
    assert usage == TokenUsage() and not usage.reported and usage.totals() == {}


def test_cost_prices_the_cached_part_of_the_input_at_its_own_rate() -> None:
    prices = Prices(input=Decimal("2.50"), cached_input=Decimal("1.25"), output=Decimal("10"))
    usage = TokenUsage(input_tokens=1000, cached_input_tokens=600, output_tokens=50, reasoning_tokens=20)
    # 400 x 2.50 + 600 x 1.25 + 50 x 10, per million; reasoning is inside the output
    assert cost_of(usage, prices) == Decimal("0.00225")
    assert cost_of(usage, Prices(input=Decimal("2.50"), output=Decimal("10"))) == Decimal("0.003")


def test_a_month_of_cheap_rounds_sums_exactly() -> None:
    prices = Prices(input=Decimal("0.15"), output=Decimal("0.60"))
    one = cost_of(TokenUsage(input_tokens=700, output_tokens=30), prices)
    assert one == Decimal("0.000123")
    assert sum([one] * 100_000, Decimal(0)) == Decimal("12.3")


def test_cached_tokens_reported_beyond_the_input_are_not_a_discount_below_zero() -> None:
    prices = Prices(input=Decimal(2), cached_input=Decimal(1), output=Decimal(0))
    assert cost_of(TokenUsage(input_tokens=10, cached_input_tokens=50), prices) == Decimal("0.00001")


def test_negative_prices_are_refused() -> None:
    with pytest.raises(ValidationError, match="input"):
        Prices(input=Decimal(-1))


def test_usages_add_up() -> None:
    total = TokenUsage(input_tokens=1, output_tokens=2, cached_input_tokens=1) + TokenUsage(
        input_tokens=3, output_tokens=4, reasoning_tokens=4
    )
    assert total == TokenUsage(input_tokens=4, output_tokens=6, cached_input_tokens=1, reasoning_tokens=4)


def test_each_model_call_of_a_turn_reports_its_usage(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    llm.queue(
        Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}),), usage=openai_usage(900, 40, cached=512)),
        Turn(text="3", usage=openai_usage(1000, 12, reasoning=5)),
    )
    events = run(
        hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, http_spec(tools_server)), user_message="1+2?")
    )
    usages = [e for e in events if isinstance(e, UsageEvent)]
    assert [(u.round, u.usage) for u in usages] == [
        (1, TokenUsage(input_tokens=900, output_tokens=40, cached_input_tokens=512)),
        (2, TokenUsage(input_tokens=1000, output_tokens=12, reasoning_tokens=5)),
    ]
    # each comes before what the round's calls did, and the turn's sum is on `done`
    kinds = [e.type for e in events]
    assert kinds.index("usage") < kinds.index("tool_call")
    assert events[-1].usage == {
        "input_tokens": 1900,
        "output_tokens": 52,
        "cached_input_tokens": 512,
        "reasoning_tokens": 5,
        "total_tokens": 1952,
    }


def test_a_provider_reporting_nothing_still_leaves_one_usage_per_call(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    llm.queue(Turn(text="hi", usage={}))
    events = run(
        hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, http_spec(tools_server)), user_message="hi")
    )
    assert [e.usage for e in events if isinstance(e, UsageEvent)] == [TokenUsage()]
    assert events[-1].usage == {}


def _usages(hub: McpHub, tools_server: HttpServer, assistant: AssistantSettings) -> list[TokenUsage]:
    events = run(
        hub, TurnRequest(assistant=assistant, tools=tools_of(hub, http_spec(tools_server)), user_message="1+2?")
    )
    assert events[-1].type == "done", events[-1]
    return [e.usage for e in events if isinstance(e, UsageEvent)]


def test_deepseek_cache_hits_are_recorded_as_cached_input(hub: McpHub, tools_server: HttpServer) -> None:
    # DeepSeek reports them as prompt_cache_hit_tokens, which LangChain's usage_metadata leaves out
    with ScriptedLLM(provider=DeepSeekContextCache()) as llm:
        llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}),), usage=openai_usage(900, 40, cached=768)),
            Turn(text="3", usage=openai_usage(1000, 12, cached=896, reasoning=7)),
        )
        usages = _usages(hub, tools_server, settings(llm))
    assert [(u.input_tokens, u.cached_input_tokens, u.reasoning_tokens) for u in usages] == [
        (900, 768, 0),
        (1000, 896, 7),
    ]
    prices = Prices(input=Decimal("0.27"), cached_input=Decimal("0.07"), output=Decimal("1.10"))
    assert cost_of(usages[0], prices) == (132 * Decimal("0.27") + 768 * Decimal("0.07") + 40 * Decimal("1.10")) / (
        10**6
    )


def test_the_responses_api_cached_and_reasoning_tokens_are_recorded(hub: McpHub, tools_server: HttpServer) -> None:
    with ScriptedLLM(provider=ResponsesApi()) as llm:
        llm.queue(
            Turn(
                tool_calls=(ToolCall("add", {"a": 1, "b": 2}),),
                usage=openai_usage(900, 40, cached=512, reasoning=30),
            ),
            Turn(text="3", usage=openai_usage(1000, 12)),
        )
        assistant = settings(llm)
        llm_settings = LlmSettings(
            **{
                **assistant.llm.model_dump(),
                "model": "gpt-5",
                "kind": ProviderKind.OPENAI,
                "api": ApiStyle.RESPONSES,
                "capabilities": default_capabilities("gpt-5", ProviderKind.OPENAI),
            }
        )
        usages = _usages(hub, tools_server, assistant.model_copy(update={"llm": llm_settings}))
    assert [(u.input_tokens, u.cached_input_tokens, u.output_tokens, u.reasoning_tokens) for u in usages] == [
        (900, 512, 40, 30),
        (1000, 0, 12, 0),
    ]


@pytest.mark.parametrize("tier", ["priority", "flex"])
def test_a_service_tiers_cached_and_reasoning_tokens_are_read(tier: str) -> None:
    # LangChain names them after the tier (priority_cache_read) when OpenAI answers with one
    metadata = _create_usage_metadata(openai_usage(2000, 500, cached=1500, reasoning=200), tier)
    usage = TokenUsage.from_metadata(metadata)
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (1500, 200)
