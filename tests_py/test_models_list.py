"""A provider's models as its `GET /models` lists them, asked the way its settings say, and the
defaults a model starts from."""

from __future__ import annotations

import pytest

from services.errors import ConfigError, ErrorCode, LlmError
from services.llm import PRESETS, LlmSettings, ProviderKind, default_capabilities, list_models
from testing.mcp_servers import free_port
from testing.scripted_llm import ScriptedLLM


def settings(base_url: str, **values) -> LlmSettings:
    return LlmSettings(base_url=base_url, model="any", timeout=5, **values)


def test_every_listed_model_once_and_sorted() -> None:
    with ScriptedLLM() as llm:
        llm.models = ("zeta", "alpha", "mid", "alpha")
        assert list_models(settings(llm.base_url)) == ["alpha", "mid", "zeta"]


def test_the_providers_headers_query_and_key_are_sent() -> None:
    with ScriptedLLM(api_key="sk-right", model="a") as llm:
        listed = list_models(
            settings(
                llm.base_url,
                api_key="sk-right",
                extra_headers=(("X-Org", "acme"),),
                extra_query=(("tenant", "t1"),),
            )
        )
        (listing,) = llm.listings
    assert listed == ["a"]
    assert listing["headers"]["x-org"] == "acme"
    assert listing["headers"]["authorization"] == "Bearer sk-right"
    assert listing["query"] == {"tenant": "t1"}


def test_azure_v1_also_gets_the_key_in_its_own_header() -> None:
    with ScriptedLLM(api_key="sk-az") as llm:
        list_models(settings(llm.base_url, api_key="sk-az", kind=ProviderKind.AZURE))
        (listing,) = llm.listings
    assert listing["headers"]["api-key"] == "sk-az"


def test_azure_deployment_url_is_not_listed_and_says_what_to_do() -> None:
    with ScriptedLLM() as llm:
        with pytest.raises(ConfigError) as info:
            list_models(settings(llm.base_url, kind=ProviderKind.AZURE, api_version="2024-10-21"))
        assert not llm.listings
    assert "deployment's name" in info.value.message


def test_a_refused_key_is_auth_failed() -> None:
    with ScriptedLLM(api_key="sk-right") as llm, pytest.raises(LlmError) as info:
        list_models(settings(llm.base_url, api_key="sk-wrong"))
    assert info.value.code is ErrorCode.LLM_AUTH_FAILED


def test_an_unreachable_provider_is_unreachable() -> None:
    with pytest.raises(LlmError) as info:
        list_models(settings(f"http://127.0.0.1:{free_port()}/v1"))
    assert info.value.code is ErrorCode.LLM_UNREACHABLE


def test_reasoning_models_start_without_temperature() -> None:
    reasoning = default_capabilities("o3-mini", ProviderKind.OPENAI)
    assert not reasoning.temperature
    assert reasoning.max_tokens_param == "max_completion_tokens"
    assert default_capabilities("gpt-4o-mini", ProviderKind.OPENAI).temperature


def test_every_preset_is_a_valid_provider() -> None:
    for key, preset in PRESETS.items():
        if preset.base_url:
            LlmSettings(base_url=preset.base_url, model=preset.default_model, kind=preset.kind)
        assert preset.kind is ProviderKind.AZURE or not preset.api_version, key
