"""'Test provider' against the scripted OpenAI-compatible server: ok, refused key, unreachable."""

from __future__ import annotations

import pytest

from services.errors import ErrorCode, LlmError
from services.llm import LlmSettings, ping
from testing.mcp_servers import free_port
from testing.scripted_llm import ScriptedLLM, Turn


def settings(base_url: str, key: str = "sk-right") -> LlmSettings:
    return LlmSettings(base_url=base_url, api_key=key, model="scripted-model", timeout=5)


def test_ping_asks_for_one_token_and_measures() -> None:
    with ScriptedLLM(api_key="sk-right") as llm:
        llm.queue(Turn(text="OK"))
        latency = ping(settings(llm.base_url))
        (request,) = llm.requests
    assert latency >= 0
    assert request["max_tokens"] == 1
    assert request["model"] == "scripted-model"
    assert not request.get("stream")


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
