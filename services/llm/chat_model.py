"""The LangChain chat model an LlmSettings makes, and what it adds to LangChain on the wire.

OpenAI and OpenAI-compatible providers, and Azure's v1 URL (`.../openai/v1`, which takes the key as
a bearer token), use ChatOpenAI. Azure's classic URL (`{resource}/openai/deployments/{deployment}
/chat/completions?api-version=...` with an `api-key` header) uses AzureChatOpenAI, which builds
that URL, query and header from the resource, deployment and version (openai's AzureOpenAI client)
and routes the Responses API to the resource's own path.

LangChain sends what the settings hold, and two things more come from this module:
- the request carries only what the model accepts (ModelCapabilities), under the names it takes,
  and fields a provider needs back on an assistant message or a tool call (DeepSeek's
  `reasoning_content`, Gemini's `extra_content`) are put back on the messages LangChain builds;
- the fields a provider streams that LangChain drops (reasoning, a tool call's extra fields, usage
  counts of its own such as DeepSeek's cache hits) are kept on the message chunks, where stream.py
  reads them.
The API is the settings' choice: `use_responses_api` is always set, so no model name switches it.
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from pydantic import PrivateAttr

from ..token_usage import PROVIDER_USAGE_FIELDS
from ._chat_completions import post_payloads_as_they_are
from .settings import ApiStyle, LlmSettings, ModelCapabilities, ProviderKind

# additional_kwargs keys of an AIMessage(Chunk): fields to send back on the message / per tool call id
REPLAY = "replay"
TOOL_CALL_REPLAY = "tool_call_replay"
# streamed: reasoning text under the provider's field name, a tool call's extra fields by its index
REASONING_FIELDS = ("reasoning_content", "reasoning")
STREAMED_CALL_EXTRAS = "tool_call_extras"
# streamed: the usage counts of the provider's own that LangChain leaves out of usage_metadata
STREAMED_USAGE = "provider_usage"
_CALL_KEYS = frozenset({"index", "id", "type", "function"})
# request fields a capability may leave out (ModelCapabilities, by field name)
_OPTIONAL_FIELDS = ("temperature", "stream_options", "tool_choice", "parallel_tool_calls", "prompt_cache_key")
_TOKEN_CAPS = ("max_tokens", "max_completion_tokens")


def shape_payload(payload: dict[str, Any], messages: list[BaseMessage], settings: LlmSettings) -> dict[str, Any]:
    """The request as the model accepts it, with what the provider needs back put on the messages."""
    capabilities = settings.capabilities
    for field in _OPTIONAL_FIELDS:
        if not getattr(capabilities, field):
            payload.pop(field, None)
    if "messages" not in payload:  # the Responses API: LangChain names its own output cap
        return payload
    cap = next((payload.pop(name) for name in _TOKEN_CAPS if name in payload), None)
    if cap is not None and capabilities.max_tokens_param:
        payload[capabilities.max_tokens_param] = cap
    for message, sent in zip(messages, payload["messages"], strict=True):
        if isinstance(message, AIMessage) and message.additional_kwargs:
            _put_back(message, sent)
    return payload


def _put_back(message: AIMessage, sent: dict[str, Any]) -> None:
    sent.update(message.additional_kwargs.get(REPLAY) or {})
    by_call = message.additional_kwargs.get(TOOL_CALL_REPLAY)
    if by_call:
        for call in sent.get("tool_calls") or ():
            call.update(by_call.get(call.get("id"), {}))


def keep_streamed_fields(chunk: dict[str, Any], message: AIMessageChunk) -> None:
    """Keeps on `message` what LangChain drops from a streamed chunk: reasoning text (merged as
    text across chunks), a tool call's extra fields (by the call's index) and the provider's own
    usage counts (on the last chunk, which has no choices)."""
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        own = {field: usage[field] for field in PROVIDER_USAGE_FIELDS if field in usage}
        if own:
            message.additional_kwargs[STREAMED_USAGE] = own
    choices = chunk.get("choices")
    if not choices:
        return
    delta = choices[0].get("delta") or {}
    for field in REASONING_FIELDS:
        reasoning = delta.get(field)
        if isinstance(reasoning, str) and reasoning:
            message.additional_kwargs[field] = reasoning
    for call in delta.get("tool_calls") or ():
        extra = {key: value for key, value in call.items() if key not in _CALL_KEYS}
        if extra:
            message.additional_kwargs.setdefault(STREAMED_CALL_EXTRAS, {})[str(call.get("index"))] = extra


class _Wire:
    """The overrides both chat model classes share (see the module's docstring)."""

    _llm: LlmSettings

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)  # type: ignore[misc]
        return shape_payload(payload, self._convert_input(input_).to_messages(), self._llm)  # type: ignore[attr-defined]

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
    ) -> Any:
        generation = super()._convert_chunk_to_generation_chunk(  # type: ignore[misc]
            chunk, default_chunk_class, base_generation_info
        )
        if generation is not None and isinstance(generation.message, AIMessageChunk):
            keep_streamed_fields(chunk, generation.message)
        return generation


class WireChatOpenAI(_Wire, ChatOpenAI):
    _llm: LlmSettings = PrivateAttr()


class WireAzureChatOpenAI(_Wire, AzureChatOpenAI):
    _llm: LlmSettings = PrivateAttr()


def is_azure_classic(settings: LlmSettings) -> bool:
    """Azure with an api-version is its classic URL; without one, its v1 URL (OpenAI's shape)."""
    return settings.kind is ProviderKind.AZURE and bool(settings.api_version)


# Building a chat model costs ~3 ms of CPU (its OpenAI clients, an SSL context): once per provider
# configuration, not once per turn. It holds no per-call state, so concurrent turns share it.
CHAT_MODEL_CACHE_SIZE = 64


@functools.lru_cache(maxsize=CHAT_MODEL_CACHE_SIZE)
def make_chat_model(settings: LlmSettings) -> ChatOpenAI:
    """The chat model of `settings`, on LangChain's shared connections (openai's HTTP client, which
    follows redirects): used on the hub's loop, by turns and the provider test alike."""
    capabilities = settings.capabilities
    common: dict[str, Any] = {
        "model": settings.model,
        "api_key": settings.api_key.get_secret_value() or "not-needed",
        "temperature": settings.temperature if capabilities.temperature else None,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        "streaming": True,
        "stream_usage": capabilities.stream_options,
        # its per-chunk asyncio.wait_for costs a task per chunk; `timeout` already bounds each read
        "stream_chunk_timeout": None,
        "default_headers": dict(settings.extra_headers) or None,
        "default_query": dict(settings.extra_query) or None,
        "max_tokens": settings.max_output_tokens if capabilities.max_tokens_param else None,
        "use_responses_api": settings.api is ApiStyle.RESPONSES,
        **_reasoning(settings),
    }
    if is_azure_classic(settings):
        chat: ChatOpenAI = WireAzureChatOpenAI(
            azure_endpoint=_azure_resource(settings.base_url),
            azure_deployment=settings.model,
            api_version=settings.api_version,
            # AzureChatOpenAI leaves parallel_tool_calls out unless told; the capabilities decide here
            disabled_params={},
            **common,
        )
    else:
        chat = WireChatOpenAI(base_url=settings.base_url, **common)
    chat._llm = settings  # noqa: SLF001 - set once, before the model is shared
    post_payloads_as_they_are(chat)
    return chat


def _reasoning(settings: LlmSettings) -> dict[str, Any]:
    """The reasoning effort, and on the Responses API the summary that shows the reasoning, which
    it sends only when asked (https://platform.openai.com/docs/guides/reasoning#reasoning-summaries)."""
    effort = settings.capabilities.reasoning_effort
    if effort is None:
        return {}
    if settings.api is ApiStyle.RESPONSES:
        return {"reasoning": {"effort": effort.value, "summary": "auto"}}
    return {"reasoning_effort": effort.value}


def _azure_resource(base_url: str) -> str:
    """The resource's endpoint from what an admin may paste: the endpoint itself, or a URL down to
    `/openai` or `/openai/deployments/<name>`."""
    url = base_url.rstrip("/")
    return url.split("/openai", 1)[0] if "/openai" in url else url


def capabilities_without(settings: LlmSettings, param: str) -> LlmSettings:
    """`settings` once the model refused `param`: the request leaves it out, or, for the output
    cap, names it the other way."""
    capabilities = settings.capabilities
    if param in _TOKEN_CAPS:
        other = "max_completion_tokens" if param == "max_tokens" else "max_tokens"
        update: dict[str, Any] = {"max_tokens_param": other}
    else:
        update = {param: False}
    return settings.model_copy(update={"capabilities": ModelCapabilities(**{**capabilities.model_dump(), **update})})
