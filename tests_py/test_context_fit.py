"""The history a model call sends, fitted to the model's context window: the fitting rules on their
own, then turns through the agent loop against a scripted model that refuses, as OpenAI does, a
request longer than its window (testing/llm_providers.py ContextWindow)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest
from conftest import http_spec
from test_agent_loop import run, tools_of

from services.errors import ErrorCode
from services.llm import ContextExceeded, LlmSettings, ModelCapabilities, map_llm_error
from services.loop import AssistantSettings, HistoryMessage, TurnRequest
from services.loop.context_fit import ContextFitter, answer_reserve, cut_text, fit_history
from services.loop.token_estimate import messages_tokens, text_tokens
from services.loop.transcript import HistoryToolCall
from services.mcp import McpHub
from services.tool_result import truncate
from testing.llm_providers import ContextWindow
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


def earlier_turn(n: int, size: int = 800) -> list[HistoryMessage]:
    """A finished turn: a question, a tool call, its result of `size` characters, the answer."""
    return [
        HistoryMessage(role="user", content=f"question {n} " + "q" * 200),
        HistoryMessage(
            role="assistant", tool_calls=(HistoryToolCall(id=f"old{n}", name="echo", arguments={"text": f"{n}"}),)
        ),
        HistoryMessage(role="tool", content="r" * size, tool_call_id=f"old{n}"),
        HistoryMessage(role="assistant", content=f"answer {n}"),
    ]


def conversation(turns: int, size: int = 800) -> list[HistoryMessage]:
    return [message for n in range(turns) for message in earlier_turn(n, size)]


def questions(messages: list[Any]) -> list[str]:
    """The numbers of the earlier questions a request (or a history) holds, in order."""
    contents = [m["content"] if isinstance(m, dict) else m.content for m in messages if _role(m) == "user"]
    return [c.split()[1] for c in contents if c.startswith("question ")]


def _role(message: Any) -> str:
    return message["role"] if isinstance(message, dict) else message.role


def calls_are_answered(messages: list[dict[str, Any]]) -> bool:
    """Every tool result follows the call it answers, and every call has its result."""
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(asked) == sorted(answered)


# -- the fitting rules ---------------------------------------------------------------------------


def test_the_oldest_turns_go_first_and_whole() -> None:
    history = [*conversation(8), HistoryMessage(role="user", content="now")]
    turn = messages_tokens(earlier_turn(0))
    fitted = fit_history(history, room=3 * turn + 20)
    assert fitted.dropped_turns == 5
    assert questions(fitted.history) == ["5", "6", "7"]
    assert fitted.history[-1].content == "now" and fitted.history[0].role == "user"
    # a turn is kept whole or not at all: every result still has its call
    ids = [c.id for m in fitted.history for c in m.tool_calls]
    assert ids == [m.tool_call_id for m in fitted.history if m.role == "tool"] == ["old5", "old6", "old7"]


def test_a_long_result_of_an_earlier_turn_is_cut_rather_than_its_turn_left_out() -> None:
    history = [*conversation(1, size=40_000), HistoryMessage(role="user", content="now")]
    fitted = fit_history(history, room=4_000)
    assert fitted.dropped_turns == 0 and fitted.shortened == ("old0",) and fitted.shortened_now == ()
    result = fitted.history[2].content
    assert text_tokens(result) <= 1_000 and result.endswith("more characters not shown ...]")
    assert result.startswith("r" * 100)


def test_the_current_turn_is_never_left_out_and_its_results_share_what_is_left() -> None:
    current = [
        HistoryMessage(role="user", content="Compare the two files."),
        HistoryMessage(
            role="assistant",
            content="Reading both.",
            tool_calls=(
                HistoryToolCall(id="a", name="read", arguments={"path": "a"}),
                HistoryToolCall(id="b", name="read", arguments={"path": "b"}),
            ),
        ),
        HistoryMessage(role="tool", content="small result", tool_call_id="a"),
        HistoryMessage(role="tool", content="y" * 20_000, tool_call_id="b"),
    ]
    fitted = fit_history([*conversation(3), *current], room=1_000)
    assert fitted.dropped_turns == 3
    kept = fitted.history
    assert [m.role for m in kept] == ["user", "assistant", "tool", "tool"]
    assert kept[0] == current[0] and kept[1] == current[1] and kept[2] == current[2]
    assert fitted.shortened_now == ("b",) and "truncated" in kept[3].content
    assert messages_tokens(kept) <= 1_000


def test_a_window_smaller_than_the_current_turn_still_sends_every_message_of_it() -> None:
    current = [
        HistoryMessage(role="user", content="u" * 4_000),
        HistoryMessage(role="assistant", tool_calls=(HistoryToolCall(id="c", name="big"),)),
        HistoryMessage(role="tool", content="z" * 50_000, tool_call_id="c"),
    ]
    fitted = fit_history(current, room=100)
    # the user's message is never cut; the result keeps the least a result keeps
    assert fitted.history[0] == current[0] and fitted.history[1] == current[1]
    assert 0 < text_tokens(fitted.history[2].content) <= 64
    assert fitted.history[2].content.startswith("z")


def test_cutting_a_result_cut_before_counts_everything_left_out() -> None:
    once = truncate("a" * 30_000, 20_000)  # as a tool result reaches the model
    twice = cut_text(once, 100)
    assert twice.count("truncated") == 1
    kept = len(twice.split("\n[... truncated")[0])
    assert twice.endswith(f"[... truncated: {30_000 - kept} more characters not shown ...]")


def test_the_estimate_counts_other_scripts_per_character() -> None:
    assert text_tokens("abcd" * 100) == 100
    assert text_tokens("合計金額" * 25) == 100


def test_the_window_comes_from_the_model_else_from_the_providers_fallback() -> None:
    known = LlmSettings(base_url="http://x", model="m", capabilities=ModelCapabilities(context_window=128_000))
    assert ContextFitter(known).window == 128_000
    unknown = LlmSettings(base_url="http://x", model="m")
    assert ContextFitter(unknown).window == 32_000
    assert ContextFitter(unknown.model_copy(update={"fallback_context_window": 8_000})).window == 8_000
    # the answer keeps the model's output cap, else an eighth of the window (at most 16k)
    assert answer_reserve(32_000, None) == 4_000 and answer_reserve(1_000_000, None) == 16_384
    assert answer_reserve(32_000, 2_000) == 2_000


def test_the_providers_count_calibrates_the_estimate_for_the_rest_of_the_turn() -> None:
    settings = LlmSettings(base_url="http://x", model="m", capabilities=ModelCapabilities(context_window=8_000))
    fitter = ContextFitter(settings)
    history = [*conversation(20), HistoryMessage(role="user", content="now")]
    first = fitter.fit(history, "You are helpful.", [])
    sent = messages_tokens(first.history)
    # the provider counted twice what was estimated: the next request holds about half as much
    fitter.calibrate(2 * (sent + 10))
    assert fitter.ratio == pytest.approx(2 * (sent + 10) / fitter._sent, rel=0.01)  # noqa: SLF001
    second = fitter.fit(history, "You are helpful.", [])
    assert second.dropped_turns > first.dropped_turns
    assert messages_tokens(second.history) * fitter.ratio <= 8_000 - answer_reserve(8_000, None)
    # a count of nothing (no usage reported) leaves the estimate as it is
    fitter.calibrate(0)
    assert fitter.fit(history, "You are helpful.", []).dropped_turns == second.dropped_turns


def test_only_new_losses_are_told_once_per_turn() -> None:
    fitter = ContextFitter(
        LlmSettings(base_url="http://x", model="m", capabilities=ModelCapabilities(context_window=2_000))
    )
    history = [*conversation(10), HistoryMessage(role="user", content="now")]
    fitted = fitter.fit(history, "", [])
    (told,) = fitter.notices(fitted, history)
    left_out = f"The {fitted.dropped_turns} oldest turns of the conversation were left out"
    assert told == f"{left_out} to fit the model's context window."
    assert fitter.notices(fitter.fit(history, "", []), history) == []


def _bad_request(body: Any) -> openai.BadRequestError:
    request = httpx.Request("POST", "https://api.example.com/v1/chat/completions")
    return openai.BadRequestError("Error code: 400", response=httpx.Response(400, request=request), body=body)


@pytest.mark.parametrize(
    ("body", "limit", "sent"),
    [
        (
            {
                "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                "8227 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            },
            8192,
            8227,
        ),
        (
            {
                "message": "This model's maximum context length is 4097 tokens. However, you requested 4120 tokens "
                "(3120 in the messages, 1000 in the completion). Please reduce the length of the messages or "
                "completion.",
                "code": None,
            },
            4097,
            3120,
        ),
        (
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
            None,
            210000,
        ),
        (
            {
                "object": "error",
                "message": "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
            },
            None,
            None,
        ),
        (
            [
                {
                    "error": {
                        "code": 400,
                        "message": "The input token count exceeds the maximum number of tokens allowed.",
                    }
                }
            ],
            None,
            None,
        ),
    ],
)
def test_providers_words_for_a_request_too_long_are_one_code(body: Any, limit: int | None, sent: int | None) -> None:
    error = map_llm_error(_bad_request(body))
    assert isinstance(error, ContextExceeded) and error.code is ErrorCode.LLM_CONTEXT_EXCEEDED
    assert (error.limit, error.sent) == (limit, sent)


def test_a_value_out_of_range_is_not_a_context_error() -> None:
    error = map_llm_error(_bad_request({"message": "Invalid 'max_tokens': integer above maximum value.", "code": None}))
    assert not isinstance(error, ContextExceeded)


# -- turns against a model with a small window ---------------------------------------------------


@pytest.fixture
def small_window(scripted_llms: Callable[..., ScriptedLLM]) -> Callable[..., ScriptedLLM]:
    """A scripted LLM refusing requests longer than its window of `tokens`, as OpenAI does."""
    return lambda tokens, sizes=True: scripted_llms(provider=ContextWindow(tokens, sizes=sizes))


def assistant(llm: ScriptedLLM, window: int | None, **capabilities: Any) -> AssistantSettings:
    return AssistantSettings(
        name="Helper",
        llm=LlmSettings(
            base_url=llm.base_url,
            api_key="k",
            model="scripted-model",
            max_retries=0,
            timeout=10,
            capabilities=ModelCapabilities(context_window=window, **capabilities),
        ),
        system_prompt="You are helpful.",
    )


def refused(llm: ScriptedLLM) -> list[dict[str, Any]]:
    """The requests the scripted model refused as longer than its window."""
    provider = llm.provider
    assert isinstance(provider, ContextWindow)
    return [body for body in llm.requests if provider.prompt_tokens(body) > provider.tokens]


def big_then_echo(
    hub: McpHub, server: HttpServer, llm: ScriptedLLM, settings: AssistantSettings, **request: Any
) -> list[Any]:
    """A two-round tool turn: a long result (20,000 characters reach the model), a short one, the answer."""
    tools = [b for b in tools_of(hub, http_spec(server)) if b.tool.name in ("big", "echo")]
    llm.queue(
        Turn(tool_calls=(ToolCall("big", {"chars": 30_000}),)),
        Turn(tool_calls=(ToolCall("echo", {"text": "again"}),)),
        Turn(text="Both read."),
    )
    return run(hub, TurnRequest(assistant=settings, tools=tools, user_message="Read the log.", **request))


def warnings(events: list[Any]) -> list[str]:
    return [e.message for e in events if e.type == "warning"]


def test_a_long_conversation_with_a_big_result_finishes_a_two_round_turn_in_a_small_window(
    hub: McpHub, small_window: Any, tools_server: HttpServer
) -> None:
    llm = small_window(4_000)
    events = big_then_echo(hub, tools_server, llm, assistant(llm, 4_000), history=conversation(12))
    assert events[-1].type == "done" and "".join(e.delta for e in events if e.type == "text") == "Both read."
    # fitted before it is sent: no request is refused, the first of the turn included
    assert refused(llm) == [] and len(llm.requests) == 3
    assert "The conversation was longer than the model reads: it was sent again with less of it." not in warnings(
        events
    )
    for body in llm.requests:
        messages = body["messages"]
        # the oldest turns went: what is left is the newest ones, in order, then the current turn
        kept = questions(messages)
        assert kept == [str(n) for n in range(12 - len(kept), 12)]
        assert calls_are_answered(messages)
        assert [m["content"] for m in messages if m["role"] == "user"][-1] == "Read the log."
    # the current turn is all there in the last request, its long result shortened
    last = llm.requests[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"][-2:]
    assert "truncated" in results[0] and results[1] == "again"
    told = warnings(events)
    assert any(
        w.endswith("oldest turns of the conversation were left out to fit the model's context window.") for w in told
    )
    assert "The result of tool big was shortened to fit the model's context window." in told


def test_a_request_the_model_finds_too_long_is_sent_again_once_shorter_and_the_user_told(
    hub: McpHub, small_window: Any, tools_server: HttpServer
) -> None:
    llm = small_window(4_000)
    # the model's record says more than the model reads: the provider's refusal says how much
    events = big_then_echo(hub, tools_server, llm, assistant(llm, 100_000), history=conversation(30))
    assert events[-1].type == "done"
    assert len(refused(llm)) == 1 and llm.requests[0] in refused(llm)
    told = warnings(events)
    assert told[0] == "The conversation was longer than the model reads: it was sent again with less of it."
    assert told[1].endswith("oldest turns of the conversation were left out to fit the model's context window.")
    assert len(questions(llm.requests[1]["messages"])) < 30


def test_a_request_still_too_long_after_its_retry_ends_the_turn_with_the_providers_word(
    hub: McpHub, small_window: Any, tools_server: HttpServer
) -> None:
    llm = small_window(40)  # the system prompt and tools alone are longer
    events = big_then_echo(hub, tools_server, llm, assistant(llm, None), history=conversation(2))
    assert events[-1].type == "error" and events[-1].code == ErrorCode.LLM_CONTEXT_EXCEEDED.value
    assert "maximum context length is 40 tokens" in events[-1].message
    assert len(llm.requests) == 2 and len(refused(llm)) == 2


def test_the_first_rounds_count_keeps_the_next_round_within_the_window(
    hub: McpHub, small_window: Any, tools_server: HttpServer
) -> None:
    """The scripted model counts more tokens than the loop estimates: before it has counted, the
    estimate is fitted with a margin, so no request is refused; the count it reports with the
    first round's answer lets the second round fill more of the window than a model that reports
    nothing gets."""
    counted = small_window(3_000, sizes=False)
    events = big_then_echo(hub, tools_server, counted, assistant(counted, 3_000))
    assert events[-1].type == "done" and refused(counted) == []
    silent = small_window(3_000, sizes=False)
    events = big_then_echo(hub, tools_server, silent, assistant(silent, 3_000, stream_options=False))
    assert events[-1].type == "done" and refused(silent) == []
    assert "The conversation was longer than the model reads: it was sent again with less of it." not in warnings(
        events
    )
    window = counted.provider
    assert isinstance(window, ContextWindow)
    assert window.prompt_tokens(counted.requests[1]) > window.prompt_tokens(silent.requests[1])
