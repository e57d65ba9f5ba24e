"""Connecting to many servers at once for "Sync tools" (the cron, a multi-record action).

Each server's sync is mostly waiting: a stdio process starting, a TLS handshake, tools/list. One
after the other, ten servers cost the sum of their waits; together, about the slowest one. Only
the listing is concurrent: the caller writes each server's records afterwards, in its own thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from ..errors import AiMcpError
from ..oauth import TokenSet
from ..server_spec import ServerSpec
from .hub import ConnectionReport, McpHub

_logger = logging.getLogger(__name__)

# stdio servers are processes: a database with a hundred of them must not start them all at once
MAX_CONCURRENT = 8


Outcome = ConnectionReport | AiMcpError | Exception


async def aconnect_all(
    hub: McpHub,
    specs: Sequence[ServerSpec],
    limit: int = MAX_CONCURRENT,
    grants: Mapping[str, TokenSet] | None = None,
) -> list[Outcome]:
    """hub.atest_connection for every spec, at most `limit` at a time (`grants`: by server key, the
    OAuth grant whose token its spec bears). A failure is returned in its server's place (an
    AiMcpError, or any other exception: a bug for the caller to log), so one server never hides
    the others' listings."""
    grants = grants or {}
    slots = asyncio.Semaphore(limit)

    async def one(spec: ServerSpec) -> ConnectionReport | AiMcpError:
        async with slots:
            try:
                return await hub.atest_connection(spec, grants.get(spec.key))
            except AiMcpError as exc:
                _logger.info("MCP sync connection failed: server=%s code=%s", spec.label(), exc.code.value)
                return exc

    return list(await asyncio.gather(*(one(spec) for spec in specs), return_exceptions=True))


def connect_all(
    hub: McpHub,
    specs: Sequence[ServerSpec],
    limit: int = MAX_CONCURRENT,
    grants: Mapping[str, TokenSet] | None = None,
) -> list[Outcome]:
    """aconnect_all from a plain thread (an Odoo request or the cron)."""
    return hub.run(aconnect_all(hub, specs, limit, grants))
