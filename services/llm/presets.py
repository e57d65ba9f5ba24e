"""The providers an administrator picks from when adding one: where each is reached, how, and a
model it serves. Choosing a preset fills the provider's form; every value stays editable.

Presets are data shipped with the code (the vendors' documented URLs change with the module, not
with a database), so they are a table here and a selection on the provider, not records an
administrator maintains.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .settings import ApiStyle, ProviderKind


class ProviderPreset(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    kind: ProviderKind = ProviderKind.COMPATIBLE
    base_url: str = ""
    default_model: str = ""
    api_version: str = ""  # Azure's classic URL only
    api: ApiStyle = ApiStyle.CHAT_COMPLETIONS
    lists_models: bool = True  # answers GET /models with the models it serves


# Both Azure URLs name a deployment in a request (the v1 URL as `model`), and their `/models` lists
# the models of the resource, not the deployments: the deployment's name is typed in.
_AZURE_API_VERSION = "2024-10-21"

PRESETS: dict[str, ProviderPreset] = {
    "openai": ProviderPreset(
        label="OpenAI", kind=ProviderKind.OPENAI, base_url="https://api.openai.com/v1", default_model="gpt-4o-mini"
    ),
    "azure": ProviderPreset(
        label="Azure OpenAI (deployment URL)",
        kind=ProviderKind.AZURE,
        base_url="https://RESOURCE.openai.azure.com",
        default_model="gpt-4o-mini",
        api_version=_AZURE_API_VERSION,
        lists_models=False,
    ),
    "azure_v1": ProviderPreset(
        label="Azure OpenAI (v1 URL)",
        kind=ProviderKind.AZURE,
        base_url="https://RESOURCE.openai.azure.com/openai/v1",
        default_model="gpt-4o-mini",
        lists_models=False,
    ),
    "ollama": ProviderPreset(label="Ollama", base_url="http://localhost:11434/v1", default_model="llama3.1"),
    "vllm": ProviderPreset(label="vLLM", base_url="http://localhost:8000/v1", default_model="Qwen/Qwen2.5-7B-Instruct"),
    "litellm": ProviderPreset(label="LiteLLM proxy", base_url="http://localhost:4000/v1", default_model="gpt-4o-mini"),
    "openrouter": ProviderPreset(
        label="OpenRouter", base_url="https://openrouter.ai/api/v1", default_model="openai/gpt-4o-mini"
    ),
    "mistral": ProviderPreset(
        label="Mistral", base_url="https://api.mistral.ai/v1", default_model="mistral-small-latest"
    ),
    "groq": ProviderPreset(
        label="Groq", base_url="https://api.groq.com/openai/v1", default_model="llama-3.3-70b-versatile"
    ),
    "deepseek": ProviderPreset(label="DeepSeek", base_url="https://api.deepseek.com/v1", default_model="deepseek-chat"),
    "gemini": ProviderPreset(
        label="Google Gemini (OpenAI compatibility)",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        default_model="gemini-2.5-flash",
    ),
    "anthropic": ProviderPreset(
        label="Anthropic (OpenAI compatibility)",
        base_url="https://api.anthropic.com/v1",
        default_model="claude-sonnet-4-5",
        # its /models answers Anthropic's own API (x-api-key), not the compatibility layer's key
        lists_models=False,
    ),
    "together": ProviderPreset(
        label="Together AI",
        base_url="https://api.together.xyz/v1",
        default_model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
    ),
    "fireworks": ProviderPreset(
        label="Fireworks AI",
        base_url="https://api.fireworks.ai/inference/v1",
        default_model="accounts/fireworks/models/llama-v3p3-70b-instruct",
    ),
    "custom": ProviderPreset(label="Other OpenAI-compatible server"),
}
