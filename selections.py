"""The selection fields whose values a services enum defines: built from the enum, so the values a
record stores are the ones the services accept. The labels are literal here; Odoo translates them
as the field's ir.model.fields.selection terms."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import get_args

from .services.llm import PRESETS, ApiStyle, ModelCapabilities, ProviderKind, ReasoningEffort
from .services.server_spec import AuthType, LogLevel, Transport
from .services.tool_info import Visibility


def selection(values: Iterable[str], labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """[(value, label)] for each of `values` in their order; a value without a label is a mistake
    caught when the module is imported, not a blank option in a form."""
    pairs = [(value.value if isinstance(value, Enum) else value, labels.get(value)) for value in values]
    missing = [value for value, label in pairs if label is None]
    if missing:
        raise ValueError(f"no label for {missing}")
    return pairs


_AUTH_LABELS = {
    AuthType.NONE: "None",
    AuthType.BEARER: "Bearer token",
    AuthType.API_KEY: "API key header",
    AuthType.HEADERS: "Custom headers",
    AuthType.OAUTH: "OAuth sign-in",
}

TRANSPORTS = selection(
    Transport,
    {
        Transport.STREAMABLE_HTTP: "Streamable HTTP",
        Transport.SSE: "SSE",
        Transport.STDIO: "stdio",
        Transport.ODOO: "This Odoo",
    },
)
AUTH_TYPES = selection(AuthType, _AUTH_LABELS)
# a catalog entry that signs in with OAuth says so with its own flag (needs_oauth)
PRESET_AUTH_TYPES = selection([auth for auth in AuthType if auth is not AuthType.OAUTH], _AUTH_LABELS)
LOG_LEVELS = selection(
    get_args(LogLevel),
    {
        "debug": "Debug",
        "info": "Info",
        "notice": "Notice",
        "warning": "Warning",
        "error": "Error",
        "critical": "Critical",
        "alert": "Alert",
        "emergency": "Emergency",
    },
)
TOOL_VISIBILITIES = selection(
    get_args(Visibility), {"model_app": "Model and app", "model": "Model only", "app": "App only"}
)

PROVIDER_KINDS = selection(
    ProviderKind,
    {ProviderKind.OPENAI: "OpenAI", ProviderKind.AZURE: "Azure OpenAI", ProviderKind.COMPATIBLE: "OpenAI-compatible"},
)
API_STYLES = selection(ApiStyle, {ApiStyle.CHAT_COMPLETIONS: "Chat Completions", ApiStyle.RESPONSES: "Responses"})
PROVIDER_PRESETS = selection(PRESETS, {key: preset.label for key, preset in PRESETS.items()})
REASONING_EFFORTS = selection(
    ReasoningEffort,
    {
        ReasoningEffort.NONE: "None",
        ReasoningEffort.LOW: "Low",
        ReasoningEffort.MEDIUM: "Medium",
        ReasoningEffort.HIGH: "High",
    },
)
# the Literal inside `Literal[...] | None`
MAX_TOKENS_PARAMS = selection(
    get_args(get_args(ModelCapabilities.model_fields["max_tokens_param"].annotation)[0]),
    {"max_tokens": "max_tokens", "max_completion_tokens": "max_completion_tokens"},
)
