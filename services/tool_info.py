"""A discovered MCP tool, normalized so the rest of the addon never sees SDK types."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict, Field

from . import json_schema
from .icons import display_icon
from .json_schema import SchemaProblem

APP_MIME_TYPE = "text/html;profile=mcp-app"
UI_EXTENSION = "io.modelcontextprotocol/ui"
Visibility = Literal["model_app", "model", "app"]


class ToolAnnotations(BaseModel):
    """Hints from the server. Untrusted: they only choose defaults an admin can override."""

    model_config = ConfigDict(frozen=True)

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @property
    def retry_safe(self) -> bool:
        return bool(self.read_only or self.idempotent)


class ToolInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = ToolAnnotations()
    # a data URI (icons.py); not part of what the model is told, so not of the review hash
    icon: str | None = None
    # MCP Apps (extension io.modelcontextprotocol/ui): the ui:// resource that renders the tool's
    # calls, and who may call it: "app" tools are never offered to the model
    app_uri: str | None = None
    visibility: Visibility = "model_app"

    @property
    def model_visible(self) -> bool:
        return self.visibility != "app"

    @property
    def display_title(self) -> str:
        return self.title or self.name

    def schema_problem(self) -> str | None:
        """Why this tool's input schema cannot be offered to a model, if it cannot: one bad schema
        makes the provider refuse the whole request."""
        return _schema_problem(self.input_schema)

    def content_hash(self) -> str:
        """Digest of what the model is told about the tool: a change means a new review (rug-pull guard)."""
        described: list[Any] = [self.description, self.input_schema, self.output_schema]
        # an app, or a say in who calls the tool, is part of what is reviewed; a tool without either
        # keeps the digest it had before apps existed
        if self.app_uri or self.visibility != "model_app":
            described += [self.app_uri, self.visibility]
        raw = json.dumps(described, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(raw.encode()).hexdigest()


def _schema_problem(schema: dict[str, Any]) -> str | None:
    if schema.get("type") != "object":
        return f"its input schema has type {schema.get('type')!r}; a tool's arguments must be an object"
    try:
        json_schema.validator(schema)
    except SchemaProblem as exc:
        return f"its input schema {exc.reason}"
    return None


def normalize_tool(tool: mcp_types.Tool) -> ToolInfo:
    hints = tool.annotations
    title = tool.title or (hints.title if hints else None)
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    return ToolInfo(
        name=tool.name,
        title=title,
        description=tool.description or "",
        input_schema=schema,
        output_schema=tool.output_schema,
        annotations=ToolAnnotations(
            read_only=hints.read_only_hint if hints else None,
            destructive=hints.destructive_hint if hints else None,
            idempotent=hints.idempotent_hint if hints else None,
            open_world=hints.open_world_hint if hints else None,
        ),
        icon=display_icon(tool.icons),
        **_app_of(tool.meta),
    )


def _app_of(meta: dict[str, Any] | None) -> dict[str, Any]:
    """app_uri and visibility from a tool's `_meta.ui` (the flat `ui/resourceUri` of the
    extension's drafts still read); anything malformed is no app, never a failed listing."""
    ui = (meta or {}).get("ui")
    ui = ui if isinstance(ui, dict) else {}
    uri = ui.get("resourceUri", (meta or {}).get("ui/resourceUri"))
    found: dict[str, Any] = {}
    if isinstance(uri, str) and uri.startswith("ui://"):
        found["app_uri"] = uri
    seen = ui.get("visibility")
    if isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        audience = {"model", "app"} & set(seen)
        # an empty list would hide the tool from everyone: read it as the default, as a host would
        if audience == {"model"}:
            found["visibility"] = "model"
        elif audience == {"app"}:
            found["visibility"] = "app"
    return found
