"""Tool results as an MCP App reads them: MCP CallToolResult JSON (`content` blocks with MCP's field
names, `structuredContent`, `isError`), made from the parts the chat stores and shows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tool_result import AudioPart, ImagePart, Part, ResourceLinkPart, ResourcePart, StructuredPart, TextPart


def call_tool_result(parts: Iterable[Part], is_error: bool) -> dict[str, Any]:
    """{content, structuredContent?, isError} of a result's parts."""
    content: list[dict[str, Any]] = []
    structured: dict[str, Any] | None = None
    for part in parts:
        if isinstance(part, StructuredPart):
            structured = part.data
        else:
            content.append(content_block(part))
    result: dict[str, Any] = {"content": content, "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def content_block(part: Part) -> dict[str, Any]:
    """One content block as MCP names its fields."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, (ImagePart, AudioPart)):
        return {"type": part.type, "data": part.data, "mimeType": part.mime_type}
    if isinstance(part, ResourcePart):
        return {"type": "resource", "resource": resource_contents(part)}
    if isinstance(part, ResourceLinkPart):
        link = {"type": "resource_link", "uri": part.uri, "name": part.name}
        if part.description is not None:
            link["description"] = part.description
        if part.mime_type is not None:
            link["mimeType"] = part.mime_type
        return link
    raise TypeError(f"no content block for {type(part).__name__}")


def resource_contents(part: ResourcePart) -> dict[str, Any]:
    """{uri, mimeType?, text | blob} of a resource read or embedded."""
    contents: dict[str, Any] = {"uri": part.uri}
    if part.mime_type is not None:
        contents["mimeType"] = part.mime_type
    if part.blob is not None:
        contents["blob"] = part.blob
    else:
        contents["text"] = part.text or ""
    return contents
