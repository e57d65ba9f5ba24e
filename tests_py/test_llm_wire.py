"""What the model wing makes of a provider's words and of a model's name: the parameter a 400
refuses, the explanation an admin reads, the defaults a new model record starts from."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from services.errors import ErrorCode
from services.llm import ParamRefused, ProviderKind, ReasoningEffort, default_capabilities, map_llm_error


def bad_request(body: Any, status: int = 400) -> openai.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://provider/v1/chat/completions"))
    error = openai.BadRequestError if status == 400 else openai.UnprocessableEntityError
    return error(f"Error code: {status} - {body}", response=response, body=body)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        # OpenAI names the parameter in the error object
        (
            {
                "message": "Unsupported value: 'temperature' does not support 0.2 with this model.",
                "param": "temperature",
            },
            "temperature",
        ),
        (
            {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                "param": "max_tokens",
            },
            "max_tokens",
        ),
        # LiteLLM without drop_params: only the message names it
        (
            {"message": "litellm.UnsupportedParamsError: openai does not support parameters: ['stream_options']"},
            "stream_options",
        ),
        # a pydantic-validated server (vLLM, FastAPI proxies)
        ("parallel_tool_calls: Extra inputs are not permitted", "parallel_tool_calls"),
        # Gemini's error body is a list
        (
            [
                {
                    "error": {
                        "code": 400,
                        "message": 'Invalid JSON payload received. Unknown name "tool_choice"',
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
            "tool_choice",
        ),
    ],
)
def test_a_refused_parameter_is_named_whatever_the_error_looks_like(body: Any, param: str) -> None:
    error = map_llm_error(bad_request(body, 422 if isinstance(body, str) else 400))
    assert isinstance(error, ParamRefused) and error.param == param


@pytest.mark.parametrize(
    "body",
    [
        {"message": "max_tokens is too large: 100000. This model supports at most 16384 completion tokens."},
        {"message": "temperature must be between 0 and 2", "param": None},
        {"message": "Invalid 'temperature': decimal above maximum value. Expected a value <= 1, but got 1.5 instead."},
    ],
)
def test_a_value_out_of_range_is_not_taken_for_a_refused_parameter(body: Any) -> None:
    error = map_llm_error(bad_request(body))
    assert not isinstance(error, ParamRefused)
    assert error.code is ErrorCode.LLM_BAD_RESPONSE and body["message"] in error.message


def test_a_gemini_error_list_reaches_the_user_as_googles_sentence() -> None:
    body = [
        {
            "error": {
                "code": 400,
                "message": "Function call is missing a thought_signature.",
                "status": "INVALID_ARGUMENT",
            }
        }
    ]
    error = map_llm_error(bad_request(body))
    assert (
        error.message
        == "The model provider answered with an error (HTTP 400): Function call is missing a thought_signature."
    )


def test_a_refused_key_keeps_the_providers_reason() -> None:
    response = httpx.Response(401, request=httpx.Request("POST", "http://provider/v1/chat/completions"))
    body = {"error": {"code": "401", "message": "Access denied due to invalid subscription key."}}
    error = map_llm_error(openai.AuthenticationError("Error code: 401", response=response, body=body))
    assert error.code is ErrorCode.LLM_AUTH_FAILED and "invalid subscription key" in error.message


@pytest.mark.parametrize(
    ("name", "temperature", "cap"),
    [
        ("o3", False, "max_completion_tokens"),
        ("o4-mini-2025-04-16", False, "max_completion_tokens"),
        ("openai/o1", False, "max_completion_tokens"),  # OpenRouter's vendor prefix
        ("gpt-5-mini", False, "max_completion_tokens"),
        ("gpt-5-chat-latest", True, None),
        ("deepseek-reasoner", False, "max_tokens"),
        ("gemini-2.5-flash", True, "max_tokens"),
        ("models/gemini-3-pro-preview", True, "max_tokens"),
        ("gpt-4o-mini", True, None),
        ("llama3.1:8b", True, None),
    ],
)
def test_known_families_start_from_what_their_provider_documents(name: str, temperature: bool, cap: str | None) -> None:
    capabilities = default_capabilities(name, ProviderKind.COMPATIBLE)
    assert (capabilities.temperature, capabilities.max_tokens_param) == (temperature, cap)


def test_reasoning_models_take_an_effort_and_know_their_context() -> None:
    o3 = default_capabilities("o3", ProviderKind.OPENAI)
    assert o3.reasoning_effort is ReasoningEffort.MEDIUM and o3.context_window == 200_000
    assert default_capabilities("gpt-4o", ProviderKind.OPENAI).reasoning_effort is None
    assert default_capabilities("prod-reasoner", ProviderKind.AZURE).temperature  # a deployment's name says nothing
