"""What a model accepts by default, from its name: the families whose providers document a
difference from a plain chat model. A model record starts from these and learns the rest from the
provider's refusals (refusals.py).

Only what the provider's own documentation states is encoded, each with where it says so; any
other name gets the plain defaults, which every OpenAI-compatible server accepts.
"""

from __future__ import annotations

import re

from .settings import ModelCapabilities, ProviderKind, ReasoningEffort

# OpenAI reasoning models (o1, o3, o4-mini, ...): "temperature, top_p ... are not supported";
# `max_tokens` is refused in favour of `max_completion_tokens`; `reasoning_effort` low/medium/high.
# https://platform.openai.com/docs/guides/reasoning#limitations
# https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens
_O_SERIES = re.compile(r"^(o\d)(-mini|-pro|-preview|-deep-research)?([-_].*)?$")

# GPT-5 family: reasoning models, same parameter rules as the o-series ("temperature ... not
# supported" unless reasoning effort is none); gpt-5-chat is a plain chat model.
# https://platform.openai.com/docs/guides/latest-model#gpt-5-parameter-compatibility
_GPT5 = re.compile(r"^gpt-5(?!.*-chat)")

# DeepSeek: deepseek-reasoner (thinking mode) ignores temperature/top_p and refuses tool_choice
# other than auto; it streams `reasoning_content`.
# https://api-docs.deepseek.com/guides/reasoning_model
_DEEPSEEK_REASONER = re.compile(r"^deepseek-reasoner")

# Gemini through its OpenAI compatibility: 2.5 and 3 are thinking models taking
# `reasoning_effort`; the compatibility layer takes `max_tokens` and temperature; contexts of
# 1,048,576 tokens. https://ai.google.dev/gemini-api/docs/openai#thinking
# https://ai.google.dev/gemini-api/docs/models
_GEMINI_THINKING = re.compile(r"^(models/)?gemini-(2\.5|3)")

# Anthropic's OpenAI SDK compatibility: `stream_options` is accepted, `parallel_tool_calls` and
# `tool_choice` too; temperature 0..1. https://docs.claude.com/en/api/openai-sdk
# (nothing refused: plain defaults)

# `prompt_cache_key` (requests sharing a key are routed to the same prompt cache): OpenAI's Chat
# Completions and Responses https://platform.openai.com/docs/guides/prompt-caching, Azure OpenAI
# https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/prompt-caching, and Mistral's
# API for its own models https://docs.mistral.ai/inference/conversations/advanced/prompt-caching.
# Other OpenAI-compatible servers may refuse a field they do not know (vLLM up to 0.6.4, servers
# validating a fixed schema): off, unless the administrator turns it on.
_CACHE_KEY_KINDS = (ProviderKind.OPENAI, ProviderKind.AZURE)
_MISTRAL = re.compile(r"^(mistral|magistral|codestral|devstral|ministral|pixtral|open-mistral|open-mixtral)")

_CONTEXT = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek-": 128_000,
    "gemini-2.5": 1_048_576,
    "gemini-3": 1_048_576,
}


def _name(model_name: str) -> str:
    """The model's own name: without a router's `vendor/` prefix (OpenRouter, LiteLLM)."""
    name = model_name.strip().lower()
    return name.rsplit("/", 1)[-1] if not name.startswith("models/") else name


def _context_window(name: str) -> int | None:
    matches = [prefix for prefix in _CONTEXT if name.removeprefix("models/").startswith(prefix)]
    return _CONTEXT[max(matches, key=len)] if matches else None


def default_capabilities(model_name: str, kind: ProviderKind) -> ModelCapabilities:
    """What `model_name` accepts as its provider documents it; plain defaults for unknown names.

    `kind` matters where the same name is served differently: an Azure deployment's name is the
    admin's choice and says nothing of the model behind it, so it starts from the plain defaults,
    and learns what the model refuses as any model does."""
    name = _name(model_name)
    if kind is ProviderKind.AZURE:
        return ModelCapabilities(prompt_cache_key=_takes_cache_key(name, kind))
    # the family rules key on the model's own name, whoever serves it; the cache key on who serves it
    common = {"context_window": _context_window(name), "prompt_cache_key": _takes_cache_key(name, kind)}
    if _O_SERIES.match(name) or _GPT5.match(name):
        return ModelCapabilities(
            temperature=False,
            max_tokens_param="max_completion_tokens",
            reasoning_effort=ReasoningEffort.MEDIUM,  # the providers' own default, shown in the form
            **common,
        )
    if _DEEPSEEK_REASONER.match(name):
        return ModelCapabilities(temperature=False, tool_choice=False, max_tokens_param="max_tokens", **common)
    if _GEMINI_THINKING.match(name):
        return ModelCapabilities(max_tokens_param="max_tokens", **common)
    return ModelCapabilities(**common)


def _takes_cache_key(name: str, kind: ProviderKind) -> bool:
    return kind in _CACHE_KEY_KINDS or bool(_MISTRAL.match(name))
