"""Lists (tools, prompts, resources) kept for as long as their server's caching hints allow.

A 2026-07-28 server may say how long a list result stays good (`ttlMs`) and whether it may be
shared between callers of other identities (`cacheScope`: "public") or only with the identity it
was fetched for ("private", the default). The SDK's Client keeps and serves such results; this
module gives every pooled session of the process one store, so a listing outlives a session that
is rebuilt, with the partition rules that keep one user's private listing from another: the
partition is the session's whole configuration, credentials included, and the target is the
server without them. Results of earlier revisions carry no hints and are never kept.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore

from ..server_spec import ServerSpec, Transport

MAX_ENTRIES = 4096


class ListCache:
    """`now`: the clock the hints are counted with (seconds; any origin)."""

    def __init__(self, now: Callable[[], float] = time.time, max_entries: int = MAX_ENTRIES) -> None:
        self.now = now
        self.store = InMemoryResponseCacheStore(max_entries=max_entries)

    def config(self, spec: ServerSpec) -> CacheConfig:
        return CacheConfig(
            store=self.store,
            partition=spec.fingerprint(),
            target_id=server_identity(spec),
            clock=self.now,
            share_public=True,
        )


def server_identity(spec: ServerSpec) -> str:
    """Which server a configuration reaches, without its credentials."""
    if spec.transport is Transport.STDIO:
        where = [spec.command, list(spec.args), spec.cwd]
    else:
        where = [spec.transport.value, spec.url]
    return hashlib.sha256(json.dumps(where).encode()).hexdigest()[:24]
