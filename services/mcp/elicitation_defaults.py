"""The defaults of a server's question (MCP elicitation, form mode) applied to the user's answer.

The 2025-11-25 specification lets each field of a requested schema carry a `default` and asks the
client to apply it. The chat's form starts with the defaults filled in; an accepted answer that
still leaves such a field out (the user cleared it, or the answer came from elsewhere) gets the
default here, before it is checked and sent, so a server receives the same answer whether or not it
fills in defaults itself. A requested schema is flat (top-level primitive fields), so only the
top-level properties are looked at.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from .. import json_schema
from ..json_schema import SchemaProblem

_logger = logging.getLogger(__name__)


def apply_defaults(schema: Any, content: Any) -> Any:
    """`content` with each property of `schema` it leaves out set to that property's default.

    A default the property's own schema refuses (wrong type, not among the choices) is not applied:
    it would make the answer invalid for a field the user left alone. Anything that is not an object
    of properties (an odd schema, an answer that is not an object) is returned unchanged, for the
    answer's check to report."""
    if not isinstance(schema, dict) or not isinstance(content, dict) or not isinstance(schema.get("properties"), dict):
        return content
    filled = dict(content)
    for name, field in schema["properties"].items():
        if name in filled or not isinstance(field, dict) or "default" not in field:
            continue
        if _accepts(schema, name, field["default"]):
            filled[name] = copy.deepcopy(field["default"])
    return filled


def _accepts(schema: dict[str, Any], name: str, value: Any) -> bool:
    """Whether property `name` of `schema` accepts `value` ($refs resolved against the whole schema)."""
    try:
        return json_schema.accepts(schema, schema["properties"][name], value)
    except SchemaProblem as exc:
        _logger.info("Elicitation default not applied: field=%s error=%s", name, exc.reason)
        return False
