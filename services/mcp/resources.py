"""A server's resources (MCP resources/list, resources/templates/list, resources/read): opened from
a tool result's resource link, or attached in the composer as context of the user's message.

Read contents are ResourceParts (tool_result.py) with the same caps as tool results: text cut with a
visible marker, binaries over the display limit replaced by a note.
"""

from __future__ import annotations

from typing import Any

import uritemplate
from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict

from ..apps import AppResource, app_resource
from ..errors import ErrorCode, McpError
from ..tool_result import DISPLAY_BINARY_LIMIT, DISPLAY_TEXT_LIMIT, ResourcePart, truncate
from .session import McpSession

MAX_RESOURCES = 200


class ResourceInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class TemplateInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    variables: list[str] = []


class ResourceListing(BaseModel):
    model_config = ConfigDict(frozen=True)
    resources: list[ResourceInfo] = []
    templates: list[TemplateInfo] = []
    # whether the server suggests values for its templates' variables (completion.py)
    completions: bool = False


async def list_resources(session: McpSession) -> ResourceListing:
    """Resources and templates (paginated, capped); none when the server does not declare resources."""
    if session.info is None or "resources" not in session.info.capabilities:
        return ResourceListing()
    resources = await session.list_pages(
        lambda c, cursor: c.list_resources(cursor=cursor), lambda page: page.resources, MAX_RESOURCES
    )
    templates = await session.list_pages(
        lambda c, cursor: c.list_resource_templates(cursor=cursor),
        lambda page: page.resource_templates,
        MAX_RESOURCES,
    )
    return ResourceListing(
        completions="completions" in session.info.capabilities,
        resources=[
            ResourceInfo(
                uri=str(r.uri),
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
                size=r.size,
            )
            for r in resources
        ],
        templates=[
            TemplateInfo(
                uri_template=t.uri_template,
                name=t.name,
                title=t.title,
                description=t.description,
                mime_type=t.mime_type,
                variables=sorted(uritemplate.URITemplate(t.uri_template).variable_names),
            )
            for t in templates
        ],
    )


def expand(template: str, arguments: dict[str, Any]) -> str:
    """The URI of a template with the user's values (RFC 6570, values percent-encoded), every
    variable given."""
    parsed = uritemplate.URITemplate(template)
    values = {k: str(v) for k, v in arguments.items() if v is not None and str(v).strip()}
    missing = sorted(parsed.variable_names - values.keys())
    if missing:
        raise McpError(ErrorCode.MCP_INVALID_PARAMS, f"Fill in {', '.join(missing)} to read {template}.")
    return parsed.expand(values)


async def read_resource(session: McpSession, uri: str) -> list[ResourcePart]:
    result = await session.send(session.client.read_resource(uri))
    if not result.contents:
        raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{session.spec.name} returned nothing for {uri}.")
    return [_part(content) for content in result.contents]


async def read_app(session: McpSession, uri: str) -> AppResource:
    """The MCP App `uri` (a ui:// resource) whole, with what its `_meta.ui` asks for: not capped as
    a resource shown in the chat is, and refused when it is not an app's HTML."""
    result = await session.send(session.client.read_resource(uri))
    return app_resource(result, uri, session.spec.name)


def _part(content: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> ResourcePart:
    if isinstance(content, mcp_types.TextResourceContents):
        return ResourcePart(
            uri=str(content.uri), mime_type=content.mime_type, text=truncate(content.text, DISPLAY_TEXT_LIMIT)
        )
    if len(content.blob) > DISPLAY_BINARY_LIMIT:
        note = f"[binary resource of {len(content.blob) * 3 // 4} bytes, too large to open here]"
        return ResourcePart(uri=str(content.uri), mime_type=content.mime_type, text=note)
    return ResourcePart(uri=str(content.uri), mime_type=content.mime_type, blob=content.blob)
