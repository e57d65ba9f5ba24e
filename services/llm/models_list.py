"""The models a provider serves, as its `GET /models` lists them, asked with the provider's own
URL, key, headers and query parameters."""

from __future__ import annotations

import openai

from ..errors import ConfigError, _lt
from .provider_errors import map_llm_error
from .settings import LlmSettings, ProviderKind


def list_models(settings: LlmSettings) -> list[str]:
    """The ids the provider lists, sorted and without repeats; raises LlmError as a model call does.

    Azure's deployment URL is refused: its `/models` lists the resource's models, and a request
    names a deployment, which only Azure's portal lists."""
    if settings.kind is ProviderKind.AZURE and settings.api_version:
        raise ConfigError(
            "api_version",
            _lt("lists no deployments on Azure's deployment URL: type the deployment's name, or use the v1 URL."),
        )
    key = settings.api_key.get_secret_value()
    headers = dict(settings.extra_headers)
    if settings.kind is ProviderKind.AZURE and key:
        headers.setdefault("api-key", key)  # Azure's own header; its v1 URL takes the bearer token too
    client = openai.OpenAI(
        base_url=settings.base_url,
        api_key=key or "not-needed",
        timeout=settings.timeout,
        max_retries=0,
        default_headers=headers or None,
        default_query=dict(settings.extra_query) or None,
    )
    try:
        return sorted({model.id for model in client.models.list() if model.id})
    except Exception as exc:  # every failure of the provider ends up as one LLM_* code
        raise map_llm_error(exc) from exc
    finally:
        client.close()
