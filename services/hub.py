"""The MCP hub: one asyncio loop per process, in a daemon thread, owning every MCP session.

Odoo serves requests from threads (or prefork workers) with no event loop of their own, and MCP
sessions are long-lived async objects. This module is the one place where the two meet: Odoo
threads submit coroutines here and wait for their results (OCA rest-framework's
fastapi/pools/event_loop.py bridges the same way). A forked worker never touches the loop it
inherited from its parent; it starts its own.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from . import prompts, resources
from .call_clock import CallClock, CallLimits, Now, TurnBudget
from .call_observer import CallObserver
from .errors import AiMcpError, ErrorCode, McpError
from .mcp_session import CLOCK_TICK, McpSession, ServerInfo, ToolListing
from .oauth_tokens import RefreshingTokens, with_token
from .prompts import PromptInfo
from .resources import ResourceListing
from .server_spec import ServerSpec
from .session_pool import SessionPool
from .tool_info import ToolInfo
from .tool_result import ResourcePart, ToolResult

_logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_IDLE_TIMEOUT = 300.0
DEFAULT_MAX_SESSIONS = 32
DEFAULT_FAILURE_COOLDOWN = 30.0


class ConnectionReport(BaseModel):
    """What "Test connection" shows an admin."""

    model_config = ConfigDict(frozen=True)

    server: ServerInfo
    tools: list[ToolInfo]
    total_tools: int
    warnings: list[str]
    latency_ms: int
    stderr_tail: list[str]


class _Credits:
    """How far the reader of `iterate` may fall behind its generator. The reader gives credit
    back without waking the loop unless the generator is waiting for it: a wake-up per item (a
    self-pipe write and a pass of the loop) was paid for every event of every turn."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self._loop = loop
        self._limit = limit
        self._lock = threading.Lock()
        self._outstanding = 0
        self._waiter: asyncio.Future[None] | None = None

    async def take(self) -> None:
        """On the loop: one more item handed to the reader; waits while `limit` are unread."""
        with self._lock:
            self._outstanding += 1
            if self._outstanding <= self._limit:
                return
            waiter = self._waiter = self._loop.create_future()
        await waiter

    def give(self) -> None:
        """In the reader's thread: one item read. The generator goes on once half are read."""
        with self._lock:
            self._outstanding -= 1
            waiter = self._waiter if self._outstanding <= self._limit // 2 else None
            if waiter is not None:
                self._waiter = None
        if waiter is not None:
            self._loop.call_soon_threadsafe(_wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class McpHub:
    def __init__(
        self,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        failure_cooldown: float = DEFAULT_FAILURE_COOLDOWN,
        now: Now = time.monotonic,
        clock_tick: float = CLOCK_TICK,
    ) -> None:
        """`now`: the monotonic clock tool calls, turns and the failure cooldown are timed with;
        `clock_tick`: how often a running call reads it at least (tests drive a clock of their own
        with a short tick)."""
        self.pid = os.getpid()
        self.now = now
        self.clock_tick = clock_tick
        self.pool = SessionPool(
            idle_timeout=idle_timeout, max_sessions=max_sessions, failure_cooldown=failure_cooldown, now=now
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="ai_mcp-hub", daemon=True)
        self._thread.start()
        self._reaper = self.submit(self._reap_forever())

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    # -- bridge for synchronous callers -------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if os.getpid() != self.pid:
            coro.close()
            raise RuntimeError("this hub belongs to the parent process; call get_hub() in the child")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the hub's loop and wait for it from a plain thread."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpError(ErrorCode.MCP_TIMEOUT, f"No answer within {timeout} s.") from None

    def iterate(
        self,
        make: Callable[[], AsyncIterator[T]],
        buffer: int = 64,
        close_timeout: float = 10.0,
        idle_every: float | None = None,
    ) -> Iterator[T | None]:
        """Run an async generator on the hub's loop and yield its items in this thread, as they come.

        At most `buffer` items wait for the reader (backpressure: the generator is paused, not the
        loop). When the reader stops early, the generator is closed, which cancels its work, and
        this returns only once it has finished. With `idle_every`, None is yielded whenever nothing
        came for that many seconds, so a streaming response can send a heartbeat."""
        items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        credits = _Credits(self._loop, buffer)
        # a cancelled concurrent future reports "done" at once; this says the generator really ended
        finished = threading.Event()

        async def produce() -> None:
            try:
                async with contextlib.aclosing(make()) as stream:
                    async for item in stream:
                        await credits.take()
                        items.put(("item", item))
            except Exception as exc:  # handed to the reading thread, which raises it
                items.put(("error", exc))
            except asyncio.CancelledError:
                items.put(("error", AiMcpError(ErrorCode.CANCELLED, "The hub stopped this stream.")))
                raise
            else:
                items.put(("end", None))
            finally:
                finished.set()

        task = self.submit(produce())
        try:
            while True:
                try:
                    kind, value = items.get(timeout=idle_every)
                except queue.Empty:
                    yield None
                    continue
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                credits.give()
                yield value
        finally:
            task.cancel()
            if not finished.wait(close_timeout):
                _logger.warning("MCP hub: a stream still closing after %.0f s", close_timeout)

    # -- coroutines, for code already on the hub's loop (the agent loop) ------------------------

    async def atest_connection(self, spec: ServerSpec) -> ConnectionReport:
        """Connect afresh (not through the pool) so the answer reflects the server as it is now;
        a success lets the pool retry a server it had given up on for a while."""
        started = time.monotonic()
        session = McpSession(spec)
        try:
            await session.open()
            self.pool.forget_failure(spec.pool_key)
            listing = await session.list_tools()
            assert session.info is not None
            return ConnectionReport(
                server=session.info,
                tools=listing.tools,
                total_tools=listing.total,
                warnings=listing.warnings,
                latency_ms=int((time.monotonic() - started) * 1000),
                stderr_tail=list(session.stderr),
            )
        finally:
            await session.close()

    async def alist_tools(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> ToolListing:
        """`tokens`: an OAuth server's grant, refreshed before expiry and once on a refusal."""
        return await with_token(spec, tokens, self._list_tools)

    async def _list_tools(self, spec: ServerSpec) -> ToolListing:
        session = await self.pool.acquire(spec)
        try:
            return await session.list_tools()
        except McpError:
            if session.alive:
                raise
            # listing is read-only: a dropped connection is worth one fresh attempt
            return await (await self.pool.acquire(spec)).list_tools()

    async def acall_tool(
        self,
        spec: ServerSpec,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        retry_safe: bool = False,
        observer: CallObserver | None = None,
        tokens: RefreshingTokens | None = None,
        budget: TurnBudget | None = None,
    ) -> ToolResult:
        """Call a tool on the pooled session. A lost connection is retried once, and only where a
        second run cannot do harm: the tool is read-only or idempotent, or the server had dropped
        the session so the request never ran. `timeout` (default: the server's call timeout) is
        how long the call may go without a sign of life (progress starts it again), within the
        server's call time cap and `budget`, the turn's time; none of them runs while a question
        of the server waits for the user. `observer` receives the call's progress, log messages
        and questions; `tokens` is an OAuth server's grant (a refused token is refreshed and the
        call made again: the server refused it before running it)."""
        limits = CallLimits(timeout or spec.call_timeout, spec.call_time_cap, spec.question_timeout)

        async def call(bearing: ServerSpec) -> ToolResult:
            return await self._call_tool(bearing, tool, arguments, limits, retry_safe, observer, budget)

        return await with_token(spec, tokens, call)

    async def _call_tool(
        self,
        spec: ServerSpec,
        tool: str,
        arguments: dict[str, Any],
        limits: CallLimits,
        retry_safe: bool,
        observer: CallObserver | None,
        budget: TurnBudget | None,
    ) -> ToolResult:
        session = await self.pool.acquire(spec)
        try:
            return await session.call_tool(tool, arguments, self._clock(limits, budget), observer, self.clock_tick)
        except McpError as exc:
            if session.alive or exc.code is not ErrorCode.MCP_UNREACHABLE:
                raise
            if not (retry_safe or session.terminated):
                raise
            _logger.info("MCP call retry after reconnect: server=%s tool=%s", spec.label(), tool)
            session = await self.pool.acquire(spec)
            return await session.call_tool(tool, arguments, self._clock(limits, budget), observer, self.clock_tick)

    def _clock(self, limits: CallLimits, budget: TurnBudget | None) -> CallClock:
        """A fresh clock for each attempt: a call retried after a reconnect starts again."""
        return CallClock(limits, self.now, budget)

    async def alist_prompts(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> list[PromptInfo]:
        async def listing(bearing: ServerSpec) -> list[PromptInfo]:
            return await prompts.list_prompts(await self.pool.acquire(bearing))

        return await with_token(spec, tokens, listing)

    async def aget_prompt(
        self, spec: ServerSpec, prompt: PromptInfo, arguments: dict[str, Any], tokens: RefreshingTokens | None = None
    ) -> str:
        async def rendering(bearing: ServerSpec) -> str:
            return await prompts.get_prompt(await self.pool.acquire(bearing), prompt, arguments)

        return await with_token(spec, tokens, rendering)

    async def alist_resources(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> ResourceListing:
        async def listing(bearing: ServerSpec) -> ResourceListing:
            return await resources.list_resources(await self.pool.acquire(bearing))

        return await with_token(spec, tokens, listing)

    async def aread_resource(
        self, spec: ServerSpec, uri: str, tokens: RefreshingTokens | None = None
    ) -> list[ResourcePart]:
        async def reading(bearing: ServerSpec) -> list[ResourcePart]:
            return await resources.read_resource(await self.pool.acquire(bearing), uri)

        return await with_token(spec, tokens, reading)

    async def aclose_server(self, key: str, owner: str | None = None) -> None:
        """Close a server's pooled sessions: every owner's, or (after one user's sign-out) one owner's."""
        await self.pool.close(key, owner)

    async def _reap_forever(self) -> None:
        interval = max(1.0, min(30.0, self.pool.idle_timeout / 2))
        while True:
            await asyncio.sleep(interval)
            closed = await self.pool.reap_idle()
            if closed:
                _logger.debug("MCP hub closed %d idle sessions", closed)

    # -- synchronous API, for Odoo request threads --------------------------------------------

    def test_connection(self, spec: ServerSpec) -> ConnectionReport:
        return self.run(self.atest_connection(spec))

    def list_tools(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> ToolListing:
        return self.run(self.alist_tools(spec, tokens))

    def call_tool(
        self,
        spec: ServerSpec,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        retry_safe: bool = False,
        tokens: RefreshingTokens | None = None,
    ) -> ToolResult:
        return self.run(self.acall_tool(spec, tool, arguments, timeout=timeout, retry_safe=retry_safe, tokens=tokens))

    def list_prompts(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> list[PromptInfo]:
        return self.run(self.alist_prompts(spec, tokens))

    def get_prompt(
        self, spec: ServerSpec, prompt: PromptInfo, arguments: dict[str, Any], tokens: RefreshingTokens | None = None
    ) -> str:
        return self.run(self.aget_prompt(spec, prompt, arguments, tokens))

    def list_resources(self, spec: ServerSpec, tokens: RefreshingTokens | None = None) -> ResourceListing:
        return self.run(self.alist_resources(spec, tokens))

    def read_resource(self, spec: ServerSpec, uri: str, tokens: RefreshingTokens | None = None) -> list[ResourcePart]:
        return self.run(self.aread_resource(spec, uri, tokens))

    def close_server(self, key: str, owner: str | None = None) -> None:
        self.run(self.aclose_server(key, owner))

    def stderr_tail(self, key: str) -> list[str]:
        session = self.pool.get(key)
        return list(session.stderr) if session else []

    def open_sessions(self) -> int:
        return self.pool.open_count()

    def stats(self, timeout: float = 5.0) -> dict[str, Any]:
        """This process's pool, read on the hub's loop: {pid, open_sessions, max_sessions, ...}."""

        async def read() -> dict[str, Any]:
            return {"pid": self.pid, **self.pool.stats()}

        return self.run(read(), timeout=timeout)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Close every session (stdio servers are killed with theirs) and stop the loop."""
        if os.getpid() != self.pid or not self._loop.is_running():
            return
        self._reaper.cancel()
        try:
            self.run(self.pool.close_all(), timeout=timeout)
        except McpError:
            _logger.warning("MCP hub: sessions still closing after %.0f s at shutdown", timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)


_hub: McpHub | None = None
_hub_lock = threading.Lock()


def get_hub() -> McpHub:
    """This process's hub, started on first use."""
    global _hub
    hub = _hub
    if hub is not None and hub.pid == os.getpid():
        return hub
    with _hub_lock:
        if _hub is None or _hub.pid != os.getpid():
            _hub = McpHub()
        return _hub


def _forget_parent_hub() -> None:
    global _hub, _hub_lock
    # the parent's loop thread does not exist in this child; its lock may have been held at fork
    _hub = None
    _hub_lock = threading.Lock()


def _shutdown_at_exit() -> None:
    if _hub is not None and _hub.pid == os.getpid():
        _hub.shutdown()


os.register_at_fork(after_in_child=_forget_parent_hub)
atexit.register(_shutdown_at_exit)
