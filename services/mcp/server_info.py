"""What a session learns of its server when it connects (name, version, revision agreed,
capabilities), and what it makes of a tool listing."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from ..icons import display_icon
from ..tool_info import ToolInfo


class ServerInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    protocol_version: str
    capabilities: dict[str, Any]
    instructions: str | None = None
    icon: str | None = None

    @property
    def stateless(self) -> bool:
        """A 2026-07-28 connection keeps no session on the server: every request stands alone."""
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS


class ToolListing(BaseModel):
    model_config = ConfigDict(frozen=True)

    tools: list[ToolInfo]
    total: int
    warnings: list[str] = []


def server_info(client: Client, fallback_name: str) -> ServerInfo:
    """What the server said of itself. A 2026-07-28 server need not give its name: the
    configuration's stands in."""
    implementation = client.server_info
    return ServerInfo(
        name=implementation.name if implementation is not None else fallback_name,
        version=implementation.version if implementation is not None else "",
        protocol_version=str(client.protocol_version),
        capabilities=client.server_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True),
        instructions=client.instructions,
        icon=display_icon(implementation.icons) if implementation is not None else None,
    )
