"""'Test provider' against the scripted OpenAI-compatible server: the call a turn makes, refused key,
unreachable, a provider's refusal explained."""

from __future__ import annotations

from typing import Any

import pytest

from services.errors import ErrorCode, LlmError
from services.llm import LlmSettings, capabilities_without
from services.llm import ping as aping
from services.mcp import McpHub
from testing.llm_providers import GeminiCompat, OpenAIReasoning, Redirected, VllmWithoutAutoToolChoice
from testing.mcp_servers import free_port
from testing.scripted_llm import Provider, ScriptedLLM, ToolCall, Turn

_HUB: list[McpHub] = []


@pytest.fixture(autouse=True)
def _on_a_hub(hub: McpHub) -> Any:
    """The test runs where a turn runs: on the hub's loop, with the turn's chat model."""
    _HUB.append(hub)
    yield
    _HUB.pop()


def ping(llm: LlmSettings, **options: Any) -> int:
    return _HUB[-1].run(aping(llm, **options))


def settings(base_url: str, key: str = "sk-right") -> LlmSettings:
    return LlmSettings(base_url=base_url, api_key=key, model="scripted-model", timeout=5)


def test_ping_makes_the_call_a_turn_makes() -> None:
    with ScriptedLLM(api_key="sk-right") as llm:
        llm.queue(Turn(text="OK"))
        ping(settings(llm.base_url).model_copy(update={"temperature": 0.3, "max_output_tokens": 64}))
        (request,) = llm.requests
    assert request["model"] == "scripted-model"
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert [tool["function"]["name"] for tool in request["tools"]] == ["get_time"]
    assert (request["temperature"], request.get("max_tokens")) == (0.3, None)


def test_ping_fails_where_a_turn_fails_and_says_why() -> None:
    with ScriptedLLM(provider=VllmWithoutAutoToolChoice()) as llm, pytest.raises(LlmError) as info:
        ping(settings(llm.base_url))
    assert "--enable-auto-tool-choice" in info.value.message
    # the message says what fixes it: no generic "retry or pick another model" after it
    assert info.value.advice == ""


def test_ping_with_tools_in_the_prompt_offers_none_as_such_a_turn_does() -> None:
    with ScriptedLLM(provider=VllmWithoutAutoToolChoice()) as llm:
        llm.queue(Turn(text="OK"))
        assert ping(capabilities_without(settings(llm.base_url), "native_tools")) >= 0
        (request,) = llm.requests
    assert "tools" not in request


def test_ping_follows_a_redirect_as_a_turn_does() -> None:
    with ScriptedLLM(provider=Redirected()) as llm:
        llm.queue(Turn(text="OK"))
        assert ping(settings(llm.base_url)) >= 0
        assert len(llm.requests) == 2  # asked where the base URL says, answered where it was sent


def test_ping_reads_a_tool_call_streamed_without_index() -> None:
    with ScriptedLLM(provider=GeminiCompat()) as llm:
        llm.queue(Turn(tool_calls=(ToolCall("get_time", {}),)))
        assert ping(settings(llm.base_url)) >= 0


def test_ping_tells_each_refused_parameter_and_passes_without_them() -> None:
    refused: list[tuple[str, str]] = []
    with ScriptedLLM(provider=OpenAIReasoning()) as llm:
        llm.queue(Turn(text="OK"), Turn(text="OK"))
        ping(settings(llm.base_url).model_copy(update={"temperature": 0.2}), on_refused=lambda *r: refused.append(r))
        last = llm.requests[-1]
    assert [param for param, _ in refused] == ["temperature"]
    assert "temperature" not in last


def test_refused_key_is_auth_failed() -> None:
    with ScriptedLLM(api_key="sk-right") as llm, pytest.raises(LlmError) as info:
        ping(settings(llm.base_url, key="sk-wrong"))
    assert info.value.code is ErrorCode.LLM_AUTH_FAILED
    assert "401" in info.value.message


def test_server_error_is_bad_response() -> None:
    with ScriptedLLM() as llm, pytest.raises(LlmError) as info:
        llm.queue(Turn(status=500))
        ping(settings(llm.base_url))
    assert info.value.code is ErrorCode.LLM_BAD_RESPONSE


def test_nothing_listening_is_unreachable() -> None:
    with pytest.raises(LlmError) as info:
        ping(settings(f"http://127.0.0.1:{free_port()}/v1"))
    assert info.value.code is ErrorCode.LLM_UNREACHABLE


def test_ping_says_which_call_piece_could_not_be_read() -> None:
    class Nameless(Provider):
        def stream(self, reply: Any, chunks: list[dict]) -> list[bytes]:
            for chunk in chunks:
                for choice in chunk["choices"]:
                    for call in choice["delta"].get("tool_calls") or ():
                        call.get("function", {}).pop("name", None)
            return super().stream(reply, chunks)

    with ScriptedLLM(provider=Nameless()) as llm, pytest.raises(LlmError) as info:
        llm.queue(Turn(tool_calls=(ToolCall("get_time", {}),)))
        ping(settings(llm.base_url))
    assert "could not read" in info.value.message
