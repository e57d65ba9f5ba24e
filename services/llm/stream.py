"""One streamed model call through langchain-openai, with failures mapped to LLM_* codes."""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple

import httpx
import openai
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from ..errors import ErrorCode, LlmError
from ._chat_completions import post_payloads_as_they_are
from .settings import LlmSettings

_logger = logging.getLogger(__name__)


class ModelReply(BaseModel):
    """What one model call produced, once its stream ended."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    invalid_tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)


class ToolCallDelta(NamedTuple):
    """A piece of a tool call as the model streams it. `index` tells the calls of one reply apart:
    a call's first piece has its id and name, the next ones add to its arguments' JSON text."""

    index: int | None
    id: str | None
    name: str | None
    arguments: str


# Building a ChatOpenAI costs ~3 ms of CPU (its OpenAI clients, an SSL context): once per provider
# configuration, not once per turn. It holds no per-call state, so concurrent turns share it.
CHAT_MODEL_CACHE_SIZE = 64


@functools.lru_cache(maxsize=CHAT_MODEL_CACHE_SIZE)
def make_chat_model(settings: LlmSettings) -> ChatOpenAI:
    chat = ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key.get_secret_value() or "not-needed",
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        streaming=True,
        stream_usage=True,
        # its per-chunk asyncio.wait_for costs a task per chunk; `timeout` already bounds each read
        stream_chunk_timeout=None,
    )
    post_payloads_as_they_are(chat)
    return chat


def with_tools(chat: ChatOpenAI, tools: Sequence[dict[str, Any]]) -> Runnable[Any, BaseMessage]:
    """`chat` offering `tools`, OpenAI tools as bind_tools makes them (turn_tools._offered_tool)."""
    return chat.bind_tools(list(tools)) if tools else chat


async def stream_reply(
    chat: ChatOpenAI,
    messages: Sequence[BaseMessage],
    runnable: Runnable[Any, BaseMessage] | None = None,
    tool_deltas: bool = False,
) -> AsyncIterator[str | ToolCallDelta | ModelReply]:
    """Yields text deltas as they arrive (and the pieces of tool calls, with `tool_deltas`), then
    the whole ModelReply last. `runnable`: `chat` with its tools bound (with_tools); `chat` alone
    when not given."""
    runnable = runnable or chat
    started = time.monotonic()
    chunks: list[AIMessageChunk] = []
    try:
        async for chunk in runnable.astream(list(messages)):
            assert isinstance(chunk, AIMessageChunk)
            chunks.append(chunk)
            if isinstance(chunk.content, str) and chunk.content:
                yield chunk.content
            if tool_deltas:
                for piece in chunk.tool_call_chunks:
                    yield ToolCallDelta(piece.get("index"), piece.get("id"), piece.get("name"), piece.get("args") or "")
    except Exception as exc:  # every failure of the provider ends up as one LLM_* code
        raise map_llm_error(exc, got_output=bool(chunks)) from exc
    if not chunks:
        raise LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model sent an empty answer.")
    _logger.debug("LLM reply: model=%s duration_ms=%d", chat.model_name, (time.monotonic() - started) * 1000)
    # merged once at the end: adding chunk by chunk re-parses the partial tool-call JSON every time
    yield _reply(add_ai_message_chunks(chunks[0], *chunks[1:]))


def _reply(message: AIMessageChunk) -> ModelReply:
    usage = message.usage_metadata or {}
    return ModelReply(
        text=message.content if isinstance(message.content, str) else "",
        tool_calls=[dict(call) for call in message.tool_calls],
        invalid_tool_calls=[dict(call) for call in message.invalid_tool_calls],
        finish_reason=message.response_metadata.get("finish_reason"),
        usage={k: int(v) for k, v in usage.items() if k in ("input_tokens", "output_tokens", "total_tokens")},
    )


def map_llm_error(exc: BaseException, got_output: bool = False) -> LlmError:
    if isinstance(exc, LlmError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return LlmError(ErrorCode.LLM_TIMEOUT, "The model did not answer in time.")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return LlmError(
            ErrorCode.LLM_AUTH_FAILED,
            f"The model provider refused the API key ({_status(exc)}). Check the provider's API key.",
        )
    if isinstance(exc, openai.RateLimitError):
        wait = exc.response.headers.get("retry-after")
        hint = f" It asks to retry in {wait} s." if wait else ""
        return LlmError(ErrorCode.LLM_RATE_LIMITED, f"The model provider is rate limiting (HTTP 429).{hint}")
    if isinstance(exc, openai.APIConnectionError):
        if got_output:
            return LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model's answer was cut off mid-stream; retry.")
        return LlmError(ErrorCode.LLM_UNREACHABLE, "Cannot reach the model provider; check its base URL.")
    if isinstance(exc, openai.APIStatusError):
        return LlmError(
            ErrorCode.LLM_BAD_RESPONSE, f"The model provider answered with an error ({_status(exc)}): {exc.message}"
        )
    if isinstance(exc, httpx.TimeoutException):
        return LlmError(ErrorCode.LLM_TIMEOUT, "The model did not answer in time.")
    if isinstance(exc, httpx.TransportError):
        # raised while reading a stream the provider had started: openai wraps only the request itself
        return LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model's answer was cut off mid-stream; retry.")
    if isinstance(exc, (json.JSONDecodeError, ValueError, openai.APIError)):
        return LlmError(ErrorCode.LLM_BAD_RESPONSE, f"The model sent something that could not be read: {exc}")
    return LlmError(ErrorCode.LLM_BAD_RESPONSE, f"The model call failed: {type(exc).__name__}: {exc}")


def _status(exc: openai.APIStatusError) -> str:
    return f"HTTP {exc.status_code}"
