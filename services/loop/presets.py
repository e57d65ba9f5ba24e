"""Parameter presets: arguments an admin fixes per assistant and tool, with {{variable}} references.

A preset is checked when saved (every variable known, every key in the tool's schema), resolved
for each turn from who is asking and where, merged over what the model sent (the model cannot
override it) and removed from the schema the model sees.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Mapping
from typing import Any

from ..errors import ConfigError

VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
KNOWN_VARIABLES = frozenset(
    {
        "user.id",
        "user.login",
        "user.name",
        "user.email",
        "user.lang",
        "user.tz",
        "user.company_id.id",
        "user.company_id.name",
        "cloud_service.id",
        "cloud_service.name",
        "conversation.id",
        "assistant.id",
        "assistant.name",
    }
)


def variables_in(value: Any) -> set[str]:
    """Every {{variable}} referenced anywhere in a preset value."""
    if isinstance(value, str):
        return set(VARIABLE.findall(value))
    if isinstance(value, Mapping):
        return set().union(*(variables_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(variables_in(v) for v in value)) if value else set()
    return set()


def validate_preset(
    arguments: Mapping[str, Any], input_schema: Mapping[str, Any], known: Collection[str] = KNOWN_VARIABLES
) -> None:
    """Raise ConfigError naming the first unknown key or variable."""
    properties = input_schema.get("properties") or {}
    for key in arguments:
        if key not in properties:
            offered = ", ".join(sorted(properties)) or "none"
            raise ConfigError("arguments", f"{key!r} is not an argument of this tool (its arguments: {offered})")
    unknown = sorted(variables_in(dict(arguments)) - set(known))
    if unknown:
        raise ConfigError(
            "arguments", f"{{{{{unknown[0]}}}}} is not a known variable; use one of: {', '.join(sorted(known))}"
        )


def resolve_preset(arguments: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """Fill in the variables. A value that is exactly one reference keeps the variable's type
    (`"{{user.id}}"` gives 7); references inside longer text are formatted into it."""
    return {key: _resolve(value, values) for key, value in arguments.items()}


def _resolve(value: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(value, str):
        whole = VARIABLE.fullmatch(value.strip())
        if whole:
            return values.get(whole.group(1))
        return VARIABLE.sub(lambda m: "" if values.get(m.group(1)) is None else str(values[m.group(1)]), value)
    if isinstance(value, Mapping):
        return {k: _resolve(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, values) for v in value]
    return value


def schema_without(schema: Mapping[str, Any], keys: Collection[str]) -> dict[str, Any]:
    """The tool's schema as the model sees it: fixed arguments are neither shown nor required."""
    if not keys:
        return dict(schema)
    trimmed = copy.deepcopy(dict(schema))
    properties = trimmed.get("properties") or {}
    for key in keys:
        properties.pop(key, None)
    if "required" in trimmed:
        trimmed["required"] = [name for name in trimmed["required"] if name not in keys]
    return trimmed
