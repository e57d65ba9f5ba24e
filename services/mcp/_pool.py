"""Keeps one live session per server configuration and shares it between all callers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ErrorCode, McpError
from ..server_spec import ServerSpec
from ._list_cache import ListCache
from .session import McpSession, log_start_failure

_logger = logging.getLogger(__name__)

# Failures worth another connection attempt; a refused credential or a wrong path stays wrong.
TRANSIENT = frozenset({ErrorCode.MCP_UNREACHABLE, ErrorCode.MCP_TIMEOUT})


@dataclass(frozen=True)
class _Down:
    """A configuration whose every connection attempt failed, and until when it is not retried."""

    fingerprint: str
    failed_at: float
    until: float
    error: McpError
    # the wall clock's time of the failure, which the spec's `saved_at` is compared with
    failed_wall: float


class SessionPool:
    def __init__(
        self,
        idle_timeout: float = 300.0,
        max_sessions: int = 32,
        failure_cooldown: float = 30.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        """`now`: the monotonic clock the failure cooldown is counted with."""
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        # A dead server would otherwise cost every turn of every user its whole connect backoff
        # (seconds) before the model is even asked; within the cooldown it fails at once.
        self.failure_cooldown = failure_cooldown
        self._now = now
        # list results a 2026-07-28 server says stay good, shared by this pool's sessions
        self.list_cache = ListCache(now)
        # configurations whose server ended its session on the server/discover probe (Python SDK
        # servers up to mcp 1.8): their next sessions go straight to the initialize handshake
        self.handshake_only: set[str] = set()
        self.opened = 0
        self._sessions: dict[str, McpSession] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._down: dict[str, _Down] = {}
        # told, on the hub's loop, when a pooled session's server announces a changed list
        self.list_changed_listeners: list[Callable[[ServerSpec, str], None]] = []

    def get(self, key: str) -> McpSession | None:
        return self._sessions.get(key)

    def open_count(self) -> int:
        return sum(1 for s in self._sessions.values() if s.alive)

    def stats(self) -> dict[str, float | int]:
        """What an operator checks: open sessions against the limit, calls in flight, churn.
        Read it on the pool's loop (McpHub.stats), where the sessions change."""
        sessions = list(self._sessions.values())
        return {
            "open_sessions": sum(1 for s in sessions if s.alive),
            "pooled_sessions": len(sessions),
            "max_sessions": self.max_sessions,
            "calls_in_flight": sum(s.in_flight for s in sessions),
            "sessions_opened": self.opened,
            "closing": len(self._closing),
            "idle_timeout": self.idle_timeout,
            "servers_down": sum(1 for down in self._down.values() if down.until > self._now()),
        }

    async def acquire(self, spec: ServerSpec) -> McpSession:
        """The live session for this exact config, opening it (with backoff) if needed."""
        key = spec.pool_key
        current = self._sessions.get(key)
        if current is not None:
            # a call cancelled on it may have ended it (servers of older SDKs): the check says
            await current.settled()
        if current is not None and current.alive and _serves(current, spec):
            return current
        async with self._locks.setdefault(key, asyncio.Lock()):
            current = self._sessions.get(key)
            if current is not None and current.alive and _serves(current, spec):
                return current
            if current is not None:
                self._retire(key)
            self._raise_if_down(spec)
            self._make_room()
            try:
                session = await self._open_with_backoff(spec)
            except McpError as exc:
                self._mark_down(spec, exc)
                log_start_failure(spec, exc)
                raise
            self._down.pop(key, None)
            self._sessions[key] = session
            return session

    def forget_failure(self, key: str) -> None:
        """Let the next caller connect at once (a connection just succeeded outside the pool)."""
        self._down.pop(key, None)

    def _raise_if_down(self, spec: ServerSpec) -> None:
        down = self._down.get(spec.pool_key)
        if down is None or down.fingerprint != spec.fingerprint():
            return
        now = self._now()
        # saved since it failed (by this process or another: a "Test connection" on another Odoo
        # worker or node); the record's time has whole seconds, so a save in the second of the
        # failure counts too: one attempt too many rather than a server left out for the cooldown
        if now >= down.until or (spec.saved_at is not None and spec.saved_at >= int(down.failed_wall)):
            del self._down[spec.pool_key]
            return
        raise McpError(
            down.error.code,
            f"{down.error.message} (failed {now - down.failed_at:.0f} s ago; tried again in {down.until - now:.0f} s,"
            ' or at once by "Test connection")',
        )

    def _mark_down(self, spec: ServerSpec, error: McpError) -> None:
        if error.code in TRANSIENT and self.failure_cooldown > 0:
            now = self._now()
            self._down[spec.pool_key] = _Down(spec.fingerprint(), now, now + self.failure_cooldown, error, time.time())

    async def _open_with_backoff(self, spec: ServerSpec) -> McpSession:
        attempt = 0
        for delay in [*spec.retry.delays(), None]:
            attempt += 1
            session = McpSession(
                spec,
                on_list_changed=self._list_changed,
                cache=self.list_cache.config(spec),
                handshake_only=self.handshake_only,
            )
            self.opened += 1
            try:
                await session.open()
                return session
            except McpError as exc:
                await session.close()
                if exc.code not in TRANSIENT or delay is None:
                    raise
                _logger.info(
                    "MCP connect retry: server=%s attempt=%d error=%s next_in=%.1fs",
                    spec.label(),
                    attempt,
                    exc.code.value,
                    delay,
                )
                await asyncio.sleep(delay)
        raise McpError(ErrorCode.MCP_UNREACHABLE, f"{spec.name}: no connection attempt was allowed.")

    def _list_changed(self, spec: ServerSpec, kind: str) -> None:
        for listener in self.list_changed_listeners:
            try:
                listener(spec, kind)
            except Exception:  # a listener's failure must not break the session's receive loop
                _logger.exception("MCP list-changed listener failed: server=%s list=%s", spec.label(), kind)

    def _make_room(self) -> None:
        if len(self._sessions) < self.max_sessions:
            return
        idle = sorted((s for s in self._sessions.values() if s.in_flight == 0), key=lambda s: s.last_used)
        if not idle:
            raise McpError(
                ErrorCode.MCP_UNREACHABLE,
                f"All {self.max_sessions} MCP sessions are busy; try again in a moment or raise the pool limit.",
            )
        self._retire(idle[0].spec.pool_key)

    def _retire(self, key: str) -> None:
        session = self._sessions.pop(key, None)
        if session is None:
            return
        task = asyncio.create_task(session.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self, key: str, owner: str | None = None) -> None:
        """Close the server's sessions: all of them (every token owner's), or one owner's only."""
        if owner is not None:
            keys = [f"{key}@{owner}"]
        else:
            keys = [k for k in self._sessions if k == key or k.startswith(f"{key}@")]
        sessions = [s for s in (self._sessions.pop(k, None) for k in keys) if s is not None]
        await asyncio.gather(*(s.close() for s in sessions))

    async def reap_idle(self) -> int:
        """Close sessions unused for longer than the idle timeout; returns how many."""
        stale = [k for k, s in self._sessions.items() if s.idle_for > self.idle_timeout or not s.alive]
        for key in stale:
            await self.close(key)
        return len(stale)

    async def close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), *self._closing, return_exceptions=True)


def _serves(session: McpSession, spec: ServerSpec) -> bool:
    """The session was opened for this configuration. The very spec it was opened with needs no
    digest: a turn passes the same one for each of its calls, and digesting it costs more than
    the rest of the pool's work on a call."""
    return session.spec is spec or session.fingerprint == spec.fingerprint()
