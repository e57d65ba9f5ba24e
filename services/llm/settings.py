"""What a model call is made with: the provider's endpoint and credentials, the model, and what
that model accepts (ModelCapabilities).

Odoo's provider and model records build one LlmSettings per turn; the model wing reads nothing
else. It is frozen and hashable, so the ChatOpenAI built from it is cached per configuration.
Headers and query parameters are tuples of pairs for that reason.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ..errors import ConfigError, _lt
from ..limits import FALLBACK_CONTEXT_WINDOW, TEMPERATURE


class ProviderKind(StrEnum):
    """How a provider is addressed. OPENAI: OpenAI's own API. AZURE: Azure OpenAI, either its v1
    URL (`.../openai/v1`, like OPENAI) or the classic deployment URL with `api_version` and the
    `api-key` header. COMPATIBLE: any server speaking OpenAI's chat completions (Ollama, vLLM,
    LiteLLM, OpenRouter, Mistral, Groq, DeepSeek, Gemini's and Anthropic's compatibility ...)."""

    OPENAI = "openai"
    AZURE = "azure"
    COMPATIBLE = "compatible"


class ApiStyle(StrEnum):
    """The API a turn speaks: chosen by the administrator, never guessed from a model's name."""

    CHAT_COMPLETIONS = "chat_completions"
    RESPONSES = "responses"


class ReasoningEffort(StrEnum):
    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class ModelCapabilities(BaseModel):
    """What a model accepts. A request never carries a parameter the model is known to refuse."""

    model_config = ConfigDict(frozen=True)

    temperature: bool = True
    native_tools: bool = True  # False: the tools are described in the prompt
    stream_options: bool = True  # `stream_options.include_usage`
    tool_choice: bool = True
    parallel_tool_calls: bool = True
    reasoning_effort: ReasoningEffort | None = None  # sent when set
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None  # None: no cap sent
    context_window: int | None = Field(None, gt=0)  # tokens; None when unknown
    # `prompt_cache_key`, which routes requests of one assistant and user to the same prompt cache
    prompt_cache_key: bool = False


class LlmSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    base_url: str
    api_key: SecretStr = SecretStr("")
    model: str  # for Azure's classic URL: the deployment's name
    temperature: float | None = Field(None, ge=TEMPERATURE.low, le=TEMPERATURE.high)  # None: the provider's default
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(1, ge=0, le=5)
    kind: ProviderKind = ProviderKind.COMPATIBLE
    api: ApiStyle = ApiStyle.CHAT_COMPLETIONS
    api_version: str = ""  # Azure classic only (`?api-version=`)
    extra_headers: tuple[tuple[str, str], ...] = ()
    extra_query: tuple[tuple[str, str], ...] = ()
    capabilities: ModelCapabilities = ModelCapabilities()
    max_output_tokens: int | None = Field(None, gt=0)
    # the window the history is fitted to when the model's own (capabilities) is unknown
    fallback_context_window: int = FALLBACK_CONTEXT_WINDOW.field()

    @property
    def context_window(self) -> int:
        """The tokens a request may hold, prompt and answer together."""
        return self.capabilities.context_window or self.fallback_context_window


# Azure's deployment URL, `{resource}/openai/deployments/{deployment}/...`: only with an API version
_AZURE_DEPLOYMENT_PATH = "/openai/deployments/"
AZURE_V1_URL = "https://RESOURCE.openai.azure.com/openai/v1"


def check_azure_url(kind: ProviderKind, base_url: str, api_version: str) -> None:
    """Raises ConfigError (field `base_url`) for Azure's deployment URL without an API version:
    it would be sent as a v1 request with the key as a bearer token, which Azure refuses with a 401
    that says nothing of the URL."""
    if kind is ProviderKind.AZURE and not api_version.strip() and _AZURE_DEPLOYMENT_PATH in base_url:
        raise ConfigError(
            "base_url",
            _lt(
                "is an Azure deployment URL, which needs an API version: fill in API Version (e.g. 2024-10-21) "
                "and the deployment's name as the model, or use the resource's v1 URL, %(v1)s."
            ),
            v1=AZURE_V1_URL,
        )
