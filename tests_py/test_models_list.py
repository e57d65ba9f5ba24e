"""A provider's models as its `GET /models` lists them, asked the way its settings say, and the
defaults a model starts from."""

from __future__ import annotations

import pytest

from services.errors import ConfigError, ErrorCode, LlmError
from services.llm import (
    PRESETS,
    ListedModel,
    LlmSettings,
    ProviderKind,
    check_azure_url,
    default_capabilities,
    list_models,
)
from testing.mcp_servers import free_port
from testing.scripted_llm import ScriptedLLM


def settings(base_url: str, **values) -> LlmSettings:
    return LlmSettings(base_url=base_url, model="any", timeout=5, **values)


def test_every_listed_model_once_and_sorted() -> None:
    with ScriptedLLM() as llm:
        llm.models = ("zeta", "alpha", "mid", "alpha")
        assert [model.id for model in list_models(settings(llm.base_url))] == ["alpha", "mid", "zeta"]


def test_a_listed_context_length_comes_with_its_model() -> None:
    with ScriptedLLM() as llm:
        # OpenRouter's `context_length`, vLLM's `max_model_len`, or nothing
        llm.models = (
            {"id": "openai/gpt-4o-mini", "context_length": 128_000},
            {"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32_768},
            "plain",
        )
        assert list_models(settings(llm.base_url)) == [
            ListedModel(id="Qwen/Qwen2.5-7B-Instruct", context_window=32_768),
            ListedModel(id="openai/gpt-4o-mini", context_window=128_000),
            ListedModel(id="plain"),
        ]


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
    assert [model.id for model in listed] == ["a"]
    assert listing["headers"]["x-org"] == "acme"
    assert listing["headers"]["authorization"] == "Bearer sk-right"
    assert listing["query"] == {"tenant": "t1"}


@pytest.mark.parametrize("api_version", ["", "2024-10-21"])
def test_azure_is_not_listed_at_either_url_and_says_what_to_do(api_version: str) -> None:
    # the v1 URL's /models lists the resource's base models, which a v1 request cannot name
    with ScriptedLLM() as llm:
        with pytest.raises(ConfigError) as info:
            list_models(settings(llm.base_url, kind=ProviderKind.AZURE, api_version=api_version))
        assert not llm.listings
    assert "deployment's name" in info.value.message


def test_an_azure_deployment_url_without_api_version_says_what_is_wrong_with_the_url() -> None:
    deployment = "https://acme.openai.azure.com/openai/deployments/prod-gpt4o/chat/completions"
    with pytest.raises(ConfigError) as info:
        check_azure_url(ProviderKind.AZURE, deployment, "")
    assert info.value.field == "base_url"
    assert "needs an API version" in info.value.message and "/openai/v1" in info.value.message
    check_azure_url(ProviderKind.AZURE, deployment, "2024-10-21")
    check_azure_url(ProviderKind.AZURE, "https://acme.openai.azure.com/openai/v1", "")


def test_an_azure_deployments_name_says_nothing_of_its_model() -> None:
    # a deployment named after a reasoning model may serve another: plain defaults, learned from refusals
    capabilities = default_capabilities("o3-mini", ProviderKind.AZURE)
    assert capabilities.temperature and capabilities.max_tokens_param is None
    assert capabilities.reasoning_effort is None and capabilities.context_window is None
    assert capabilities.prompt_cache_key


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
        assert preset.kind is not ProviderKind.AZURE or not preset.lists_models, key
