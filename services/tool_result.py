"""Tool results as typed parts, and their text rendering for the model."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MODEL_TEXT_LIMIT = 20_000
# What one part may weigh in an event: events are stored and sent to the browser.
DISPLAY_TEXT_LIMIT = 100_000
DISPLAY_BINARY_LIMIT = 2_000_000
TRUNCATION_MARKER = "\n[... truncated: {omitted} more characters not shown ...]"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True)


class TextPart(_Part):
    type: Literal["text"] = "text"
    text: str


class ImagePart(_Part):
    type: Literal["image"] = "image"
    mime_type: str
    data: str  # base64, as sent by the server


class AudioPart(_Part):
    type: Literal["audio"] = "audio"
    mime_type: str
    data: str


class ResourcePart(_Part):
    type: Literal["resource"] = "resource"
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


class ResourceLinkPart(_Part):
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None


class StructuredPart(_Part):
    type: Literal["structured"] = "structured"
    data: dict[str, Any]


Part = Annotated[
    TextPart | ImagePart | AudioPart | ResourcePart | ResourceLinkPart | StructuredPart,
    Field(discriminator="type"),
]


class RunningTask(BaseModel):
    """A server's task (MCP Tasks extension) that still ran when its call's wait ended: polled later."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    # the pool key of the server that runs it (ServerSpec.key)
    server_key: str = ""


class ToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    parts: list[Part] = Field(default_factory=list)
    is_error: bool = False
    # set when the call ended while the server's task still runs: the parts say so
    task: RunningTask | None = None

    def text_for_model(self, limit: int = DEFAULT_MODEL_TEXT_LIMIT) -> str:
        """What the model reads: text kept, binaries described, capped with a visible marker."""
        parts = self.parts
        if any(isinstance(p, TextPart) for p in parts):
            # The spec has servers repeat structured content as JSON text; say it once.
            parts = [p for p in parts if not isinstance(p, StructuredPart)]
        return truncate("\n".join(_render(part) for part in parts), limit)

    def for_display(self, text_limit: int = DISPLAY_TEXT_LIMIT, binary_limit: int = DISPLAY_BINARY_LIMIT) -> list[Part]:
        """The parts as a user sees them: long texts cut with a marker, oversized media replaced by a note."""
        return [_display_part(part, text_limit, binary_limit) for part in self.parts]


def _display_part(part: _Part, text_limit: int, binary_limit: int) -> _Part:
    if isinstance(part, TextPart) and len(part.text) > text_limit:
        return TextPart(text=truncate(part.text, text_limit))
    if isinstance(part, ResourcePart) and part.text is not None and len(part.text) > text_limit:
        return part.model_copy(update={"text": truncate(part.text, text_limit)})
    if isinstance(part, (ImagePart, AudioPart)) and len(part.data) > binary_limit:
        return TextPart(text=f"[{part.type} {part.mime_type} of {len(part.data) * 3 // 4} bytes, too large to show]")
    if isinstance(part, ResourcePart) and part.blob is not None and len(part.blob) > binary_limit:
        return part.model_copy(
            update={"blob": None, "text": f"[binary resource of {len(part.blob) * 3 // 4} bytes, too large to show]"}
        )
    if isinstance(part, StructuredPart):
        dumped = json.dumps(part.data, ensure_ascii=False)
        if len(dumped) > text_limit:
            return TextPart(text=truncate(dumped, text_limit))
    return part


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARKER.format(omitted=len(text) - limit)


def _render(part: _Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, StructuredPart):
        return json.dumps(part.data, ensure_ascii=False)
    if isinstance(part, ResourcePart):
        return (
            part.text if part.text is not None else f"[binary resource {part.uri} ({part.mime_type or 'unknown type'})]"
        )
    if isinstance(part, ResourceLinkPart):
        return f"[resource link {part.name}: {part.uri}]"
    if isinstance(part, (ImagePart, AudioPart)):
        return f"[{part.type} {part.mime_type}, {len(part.data) * 3 // 4} bytes]"
    raise TypeError(f"unknown part {type(part).__name__}")


def still_running(server: str, task: RunningTask) -> ToolResult:
    """The answer of a call whose wait ended while its server's task still runs: the model reads
    that the result comes later, in the conversation."""
    text = (
        f"{server} is still running this call as a task ({task.status}"
        f"{': ' + task.status_message if task.status_message else ''}); its result will be added to "
        f"the conversation when it is done."
    )
    return ToolResult(parts=[TextPart(text=text)], task=task)


def normalize_result(result: mcp_types.CallToolResult) -> ToolResult:
    parts: list[_Part] = [_part(block) for block in result.content]
    if result.structured_content is not None:
        parts.append(StructuredPart(data=result.structured_content))
    return ToolResult(parts=parts, is_error=bool(result.is_error))


def _part(block: mcp_types.ContentBlock) -> _Part:
    if isinstance(block, mcp_types.TextContent):
        return TextPart(text=block.text)
    if isinstance(block, mcp_types.ImageContent):
        return ImagePart(mime_type=block.mime_type, data=block.data)
    if isinstance(block, mcp_types.AudioContent):
        return AudioPart(mime_type=block.mime_type, data=block.data)
    if isinstance(block, mcp_types.EmbeddedResource):
        res = block.resource
        return ResourcePart(
            uri=str(res.uri),
            mime_type=res.mime_type,
            text=getattr(res, "text", None),
            blob=getattr(res, "blob", None),
        )
    if isinstance(block, mcp_types.ResourceLink):
        return ResourceLinkPart(
            uri=str(block.uri), name=block.name, description=block.description, mime_type=block.mime_type
        )
    return TextPart(
        text=json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)
    )
