"""'Test provider': one tiny chat completion, to check base URL, API key and model in one go."""

from __future__ import annotations

import time

import openai

from ..errors import ErrorCode, LlmError
from .settings import LlmSettings
from .stream import map_llm_error

PING_MESSAGES = [{"role": "user", "content": "Reply with OK."}]


def ping(settings: LlmSettings) -> int:
    """Ask the model for one token; returns the round trip in milliseconds, raises LlmError."""
    client = openai.OpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key.get_secret_value() or "not-needed",
        timeout=settings.timeout,
        max_retries=0,
    )
    started = time.monotonic()
    try:
        try:
            response = client.chat.completions.create(model=settings.model, messages=PING_MESSAGES, max_tokens=1)
        except openai.BadRequestError as exc:
            # reasoning models refuse max_tokens (they want max_completion_tokens) and a 1-token
            # budget; the endpoint, key and model answered, so ask once more without a limit
            if "max_tokens" not in str(exc):
                raise
            response = client.chat.completions.create(model=settings.model, messages=PING_MESSAGES)
    except Exception as exc:  # every failure of the provider ends up as one LLM_* code
        raise map_llm_error(exc) from exc
    finally:
        client.close()
    if not getattr(response, "choices", None):
        raise LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model answered without any choice; check the model name.")
    return int((time.monotonic() - started) * 1000)
