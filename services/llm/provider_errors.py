"""A provider's failure as an LLM_* code and a sentence that helps: the provider's own explanation
(whatever the shape of its error body), what to change where the cause is known, the parameter a
model refused, which the call is retried without (ParamRefused), and a request longer than the
model reads (ContextExceeded), which the loop retries once with less of the conversation.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError

from ..errors import ErrorCode, LlmError

# the request fields a model may refuse and a call can do without (or name the other way)
REFUSABLE = (
    "temperature",
    "stream_options",
    "max_completion_tokens",
    "max_tokens",
    "tool_choice",
    "parallel_tool_calls",
    "prompt_cache_key",
)
_PARAM = re.compile(r"\b(" + "|".join(REFUSABLE) + r")\b")
# words providers refuse a parameter with: OpenAI "Unsupported parameter"/"Unsupported value",
# LiteLLM "does not support parameters", vLLM/pydantic "Extra inputs are not permitted",
# Gemini "Unknown name", others "not allowed", "unrecognized"; not "invalid", which also says a
# value is out of range (OpenAI "Invalid 'temperature': decimal above maximum value")
_REFUSING = re.compile(
    r"unsupported|not supported|does not support|not permitted|not allowed|unrecogni[sz]ed|unknown|"
    r"extra_forbidden|extra inputs|unexpected",
    re.IGNORECASE,
)
# vLLM started without `--enable-auto-tool-choice` refuses every request offering tools
_VLLM_AUTO_TOOL_CHOICE = "--enable-auto-tool-choice"
_VLLM_HINT = (
    " The server does not let the model choose tools itself: start vLLM with "
    "`--enable-auto-tool-choice --tool-call-parser <parser of the model>`, or switch on "
    "'Tools in the Prompt' on the assistant."
)
_MESSAGE_LIMIT = 1000
# A request longer than the model's context window, as providers word it: OpenAI's error code
# `context_length_exceeded` ("This model's maximum context length is 8192 tokens. However, your
# messages resulted in 8227 tokens."), vLLM and LiteLLM repeat OpenAI's sentence, Anthropic's
# compatibility says "prompt is too long", Mistral and others "context window"/"context length",
# Gemini "exceeds the maximum number of tokens", Ollama "input length exceeds".
_CONTEXT_CODES = ("context_length_exceeded",)
_CONTEXT_WORDS = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many (input )?tokens|"
    r"exceeds the maximum number of tokens|input length exceeds|reduce the length of the messages",
    re.IGNORECASE,
)
_CONTEXT_LIMIT = re.compile(
    r"maximum context length is (\d+)|context window of (\d+)|limit of (\d+) tokens", re.IGNORECASE
)
_CONTEXT_SENT = re.compile(r"(\d+) in the messages|resulted in (\d+) tokens|prompt is too long: (\d+)", re.IGNORECASE)

_logger = logging.getLogger(__name__)


class ParamRefused(LlmError):
    """The model refused one request field; the call can be made again without it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(ErrorCode.LLM_BAD_RESPONSE, message)
        self.param = param


class ContextExceeded(LlmError):
    """The request was longer than the model reads. `limit`: the window the provider named, and
    `sent`: the tokens it counted in the request, when its message says them."""

    def __init__(self, message: str, limit: int | None = None, sent: int | None = None) -> None:
        super().__init__(ErrorCode.LLM_CONTEXT_EXCEEDED, message)
        self.limit = limit
        self.sent = sent


def provider_message(exc: openai.APIStatusError) -> str:
    """The provider's explanation, from whatever its error body is: OpenAI's `{"error": {...}}`,
    Gemini's JSON list of such objects, a bare string, or a body that is not JSON at all."""
    texts = _texts(exc.body) if exc.body is not None else []
    if not texts:
        raw = _raw_body(exc.response)
        texts = _texts(_json_or_text(raw)) if raw else []
    text = "; ".join(dict.fromkeys(t.strip() for t in texts if t.strip())) or exc.message
    return text[:_MESSAGE_LIMIT]


def _raw_body(response: httpx.Response) -> str:
    try:
        return response.text
    except httpx.ResponseNotRead:
        return ""


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _texts(body: Any) -> list[str]:
    if isinstance(body, str):
        return [body]
    if isinstance(body, list):
        return [text for item in body for text in _texts(item)]
    if isinstance(body, dict):
        if "error" in body:
            return _texts(body["error"])
        message = body.get("message") or body.get("detail") or body.get("msg")
        if message is not None:
            return _texts(message)
        return [json.dumps(body, ensure_ascii=False)]
    return []


def refused_param(exc: openai.APIStatusError, message: str) -> str | None:
    """The request field a 400 says the model refuses, if any: the error's own `param` when it
    names one, else the first such field its message names next to a refusing word."""
    if exc.status_code not in (400, 422):
        return None
    body = exc.body if isinstance(exc.body, dict) else {}
    named = body.get("param") if isinstance(body.get("param"), str) else None
    if named in REFUSABLE:
        return named
    if not _REFUSING.search(message):
        return None
    found = _PARAM.search(message)
    return found.group(1) if found else None


def map_llm_error(exc: BaseException, got_output: bool = False) -> LlmError:
    if isinstance(exc, LlmError):
        return exc
    if isinstance(exc, ContextOverflowError) and not isinstance(exc, openai.APIStatusError):
        # LangChain's reading of an error the Responses API streams ("exceeds the context window")
        return ContextExceeded(f"The model provider answered that the request is longer than the model reads: {exc}")
    if isinstance(exc, openai.APITimeoutError):
        return LlmError(ErrorCode.LLM_TIMEOUT, "The model did not answer in time.")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return LlmError(
            ErrorCode.LLM_AUTH_FAILED,
            f"The model provider refused the API key ({_status(exc)}): {provider_message(exc)} "
            "Check the provider's API key.",
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
        return _status_error(exc)
    if isinstance(exc, httpx.TimeoutException):
        return LlmError(ErrorCode.LLM_TIMEOUT, "The model did not answer in time.")
    if isinstance(exc, httpx.TransportError):
        # raised while reading a stream the provider had started: openai wraps only the request itself
        return LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model's answer was cut off mid-stream; retry.")
    if isinstance(exc, (json.JSONDecodeError, ValueError, openai.APIError)):
        return LlmError(ErrorCode.LLM_BAD_RESPONSE, f"The model sent something that could not be read: {exc}")
    return LlmError(ErrorCode.LLM_BAD_RESPONSE, f"The model call failed: {type(exc).__name__}: {exc}")


def _status_error(exc: openai.APIStatusError) -> LlmError:
    explained = provider_message(exc)
    # the administrator's copy, with where the provider answered from (not the query: it may hold a key)
    url = exc.request.url
    _logger.info("Model provider error: %s %s%s: %s", _status(exc), url.host, url.path, explained)
    message = f"The model provider answered with an error ({_status(exc)}): {explained}"
    if _VLLM_AUTO_TOOL_CHOICE in explained:
        return LlmError(ErrorCode.LLM_BAD_RESPONSE, message + _VLLM_HINT, advice="")
    if _context_exceeded(exc, explained):
        return ContextExceeded(message, _number(_CONTEXT_LIMIT, explained), _number(_CONTEXT_SENT, explained))
    param = refused_param(exc, explained)
    if param is not None:
        return ParamRefused(param, message)
    return LlmError(ErrorCode.LLM_BAD_RESPONSE, message)


def _context_exceeded(exc: openai.APIStatusError, message: str) -> bool:
    if exc.status_code not in (400, 413, 422):
        return False
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return error.get("code") in _CONTEXT_CODES or bool(_CONTEXT_WORDS.search(message))


def _number(pattern: re.Pattern[str], message: str) -> int | None:
    found = pattern.search(message)
    return int(next(group for group in found.groups() if group)) if found else None


def _status(exc: openai.APIStatusError) -> str:
    return f"HTTP {exc.status_code}"
