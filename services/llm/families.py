"""What a model accepts by default, from its name and its provider's kind."""

from __future__ import annotations

import re

from .settings import ModelCapabilities, ProviderKind

# OpenAI's reasoning models refuse temperature and want max_completion_tokens
# (https://platform.openai.com/docs/guides/reasoning#limitations)
_REASONING = re.compile(r"^(o\d|gpt-5(?!.*-chat))")


def default_capabilities(model_name: str, kind: ProviderKind) -> ModelCapabilities:
    """What `model_name` accepts as its provider documents it; plain defaults for other names."""
    del kind  # the rule keys on the model's own name, whoever serves it
    name = model_name.strip().lower().rsplit("/", 1)[-1]
    if _REASONING.match(name):
        return ModelCapabilities(temperature=False, max_tokens_param="max_completion_tokens")
    return ModelCapabilities()
