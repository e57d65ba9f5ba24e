"""The models a provider serves, as its `GET /models` lists them, asked with the provider's own
URL, key, headers and query parameters, with the context length where the listing gives one."""

from __future__ import annotations

from typing import Any

import openai
from pydantic import BaseModel, ConfigDict

from ..errors import ConfigError, _lt
from .provider_errors import map_llm_error
from .settings import LlmSettings, ProviderKind

# where a listing gives a model's context length: OpenRouter's, Together's and others'
# `context_length` (https://openrouter.ai/docs/api-reference/list-available-models), vLLM's
# `max_model_len` (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)
_CONTEXT_FIELDS = ("context_length", "max_model_len")


class ListedModel(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    context_window: int | None = None  # tokens, where the listing says


def list_models(settings: LlmSettings) -> list[ListedModel]:
    """The models the provider lists, sorted by id and without repeats; raises LlmError as a model
    call does.

    Azure is refused, at either URL: its `/models` lists the models of the resource, and a request
    names a deployment, which only Azure's portal lists."""
    if settings.kind is ProviderKind.AZURE:
        raise ConfigError(
            "kind",
            _lt(
                "Azure OpenAI lists the models of its resource, not the deployments a request names: type the "
                "deployment's name."
            ),
        )
    client = openai.OpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key.get_secret_value() or "not-needed",
        timeout=settings.timeout,
        max_retries=0,
        default_headers=dict(settings.extra_headers) or None,
        default_query=dict(settings.extra_query) or None,
    )
    try:
        listed = {model.id: _context_window(model.model_extra or {}) for model in client.models.list() if model.id}
    except Exception as exc:  # every failure of the provider ends up as one LLM_* code
        raise map_llm_error(exc) from exc
    finally:
        client.close()
    return [ListedModel(id=name, context_window=listed[name]) for name in sorted(listed)]


def _context_window(fields: dict[str, Any]) -> int | None:
    for name in _CONTEXT_FIELDS:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
