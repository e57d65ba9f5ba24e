"""A server's announcements that its tools, prompts or resources changed, in either generation.

Before 2026-07-28 they are notifications on the session (the SDK hands them to the session's
message handler); at 2026-07-28 there is no session to push them on, and a client that wants them
keeps a `subscriptions/listen` request open. One such stream per pooled session, for the lists the
server says change; a stream that breaks is opened again after a pause, since the server keeps
no replay and a missed change is only seen at the next sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from mcp import Client, MCPError
from mcp import types as mcp_types
from mcp.client.subscriptions import (
    ListenNotSupportedError,
    PromptsListChanged,
    ResourcesListChanged,
    SubscriptionLost,
    ToolsListChanged,
)

from ..server_spec import ServerSpec

_logger = logging.getLogger(__name__)

# a handshake-era notification, or a listen stream's event, and the list it names
LIST_CHANGES: dict[type, str] = {
    mcp_types.ToolListChangedNotification: "tools",
    mcp_types.ResourceListChangedNotification: "resources",
    mcp_types.PromptListChangedNotification: "prompts",
    ToolsListChanged: "tools",
    ResourcesListChanged: "resources",
    PromptsListChanged: "prompts",
}
RELISTEN_FIRST = 1.0
RELISTEN_MAX = 60.0

OnListChanged = Callable[[ServerSpec, str], None]


@contextlib.asynccontextmanager
async def listen_for_changes(
    client: Client, spec: ServerSpec, on_list_changed: OnListChanged, ack_timeout: float
) -> AsyncIterator[None]:
    """Listen for as long as the context lasts, where the server announces list changes. The
    context is entered once the server acknowledged the stream (or `ack_timeout` passed): a
    change made after that is heard, since the server keeps no replay for a stream that was not
    there yet."""
    lists = _changing_lists(client.server_capabilities)
    if not lists:
        yield
        return
    listening = asyncio.Event()
    task = asyncio.create_task(_listen(client, spec, lists, on_list_changed, listening), name=f"mcp-listen {spec.key}")
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(listening.wait(), ack_timeout)
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _changing_lists(capabilities: mcp_types.ServerCapabilities) -> set[str]:
    lists = set()
    for name in ("tools", "prompts", "resources"):
        capability = getattr(capabilities, name, None)
        if capability is not None and getattr(capability, "list_changed", False):
            lists.add(name)
    return lists


async def _listen(
    client: Client, spec: ServerSpec, lists: set[str], on_list_changed: OnListChanged, listening: asyncio.Event
) -> None:
    pause = RELISTEN_FIRST
    while True:
        try:
            async with client.listen(
                tools_list_changed="tools" in lists,
                prompts_list_changed="prompts" in lists,
                resources_list_changed="resources" in lists,
            ) as subscription:
                _logger.info("MCP listening: server=%s lists=%s", spec.label(), ",".join(sorted(lists)))
                listening.set()
                pause = RELISTEN_FIRST
                async for event in subscription:
                    kind = LIST_CHANGES.get(type(event))
                    if kind is not None:
                        _logger.info("MCP list changed: server=%s list=%s", spec.label(), kind)
                        on_list_changed(spec, kind)
            return  # the server closed the stream on purpose
        except ListenNotSupportedError:
            listening.set()
            return
        except (MCPError, SubscriptionLost, TimeoutError, OSError) as exc:
            _logger.info("MCP listen ended: server=%s error=%s retry_in=%.0fs", spec.label(), exc, pause)
            listening.set()  # the session serves all the same; changes are seen at the next sync
        await asyncio.sleep(pause)
        pause = min(pause * 2, RELISTEN_MAX)
