"""The MCP hub: one per process, owning every MCP session on its own event loop.

What can be asked of an MCP server (test a connection, list and call tools, prompts, resources) is
a coroutine here, run on the pooled session of the server. The loop and its thread, and the way
Odoo's threads reach them, are services/mcp/_loop_thread.py's. A forked worker never uses the hub it
inherited from its parent; `get_hub()` makes its own.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..apps import AppResource
from ..call_clock import CallClock, CallLimits, Now, TurnBudget
from ..errors import AuthRequired, ConfigError, ErrorCode, McpError
from ..oauth import RefreshingTokens, TokenSet, step_up_refusal, with_token
from ..server_spec import ServerSpec
from ..tool_info import ToolInfo
from ..tool_result import ResourcePart, ToolResult
from . import completion, prompts, resources, skills
from ._loop_thread import LoopThread
from ._pool import SessionPool
from .call_observer import CallObserver
from .completion import CompletionRequest, Completions
from .prompts import PromptInfo
from .resources import ResourceListing
from .server_info import ServerInfo, ToolListing
from .session import CLOCK_TICK, McpSession, log_start_failure
from .skills import SkillEntry
from .tasks import DetailedTask

_logger = logging.getLogger(__name__)

T = TypeVar("T")

# a server's refusal of the credentials: asking again with them would be refused again, so only
# new ones (a refreshed token, a new sign-in: with_token's part) are worth another request
REFUSALS = frozenset({ErrorCode.MCP_AUTH_REQUIRED, ErrorCode.MCP_AUTH_FAILED})


class HubSettings(BaseModel):
    """A process's pool of MCP sessions: how many at most, how long an idle one is kept, how long a
    server that failed to connect is not tried again. Odoo reads them from the `[ai_mcp]` section
    of its configuration file (`mcp_max_sessions`, `mcp_idle_timeout`, `mcp_failure_cooldown`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_sessions: int = Field(32, ge=1, le=10000)
    idle_timeout: float = Field(300.0, gt=0, le=86400)
    failure_cooldown: float = Field(30.0, ge=0, le=3600)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> HubSettings:
        """The settings from an ini section's options (strings); those it does not name keep their
        default. Raises ConfigError naming the option and what it takes."""
        values = {}
        for name, field in cls.model_fields.items():
            option = OPTION_PREFIX + name
            if option not in options or str(options[option]).strip() == "":
                continue
            values[name] = str(options[option]).strip()
            try:
                cls.model_validate({name: values[name]})
            except ValidationError as exc:
                raise ConfigError(
                    option,
                    f"must be a number {_bounds(field.metadata)}, not {values[name]!r}: "
                    "fix it in the [ai_mcp] section of Odoo's configuration file",
                ) from exc
        return cls.model_validate(values)


# the options of Odoo's [ai_mcp] section are named after the settings, with this prefix
OPTION_PREFIX = "mcp_"


def _bounds(metadata: list[Any]) -> str:
    """'more than 0 and at most 86400', from a pydantic field's constraints."""
    words = {"gt": "more than", "ge": "at least", "lt": "less than", "le": "at most"}
    parts = [f"{word} {getattr(m, key)}" for m in metadata for key, word in words.items() if hasattr(m, key)]
    return " and ".join(parts)


class ConnectionReport(BaseModel):
    """What "Test connection" shows an admin."""

    model_config = ConfigDict(frozen=True)

    server: ServerInfo
    tools: list[ToolInfo]
    total_tools: int
    # the skills it publishes (extension io.modelcontextprotocol/skills), their files not read
    skills: list[SkillEntry] = []
    warnings: list[str]
    latency_ms: int
    stderr_tail: list[str]


class McpHub(LoopThread):
    """This process's MCP sessions and what can be asked of a server, as coroutines run on the
    hub's own loop: the agent loop is already there; Odoo's threads go through `run` and `iterate`."""

    def __init__(
        self,
        settings: HubSettings | None = None,
        now: Now = time.monotonic,
        clock_tick: float = CLOCK_TICK,
    ) -> None:
        """`settings`: the pool's size and timings; `now`: the monotonic clock tool calls, turns and
        the failure cooldown are timed with; `clock_tick`: how often a running call reads it at
        least (tests drive a clock of their own with a short tick)."""
        super().__init__(name="ai_mcp-hub")
        settings = settings or HubSettings()
        self.settings = settings
        self.now = now
        self.clock_tick = clock_tick
        self.pool = SessionPool(
            idle_timeout=settings.idle_timeout,
            max_sessions=settings.max_sessions,
            failure_cooldown=settings.failure_cooldown,
            now=now,
        )
        self._reaper = self.submit(self._reap_forever())

    # -- coroutines, for code already on the hub's loop (the agent loop) ------------------------

    async def atest_connection(self, spec: ServerSpec, granted: TokenSet | None = None) -> ConnectionReport:
        """Connect afresh (not through the pool) so the answer reflects the server as it is now;
        a success lets the pool retry a server it had given up on for a while. `granted`: the
        OAuth grant whose token `spec` bears; a step-up for scopes it already holds is refused as
        such, as a turn's call is, instead of asking for a sign-in that would change nothing."""
        try:
            return await self._test_connection(spec)
        except AuthRequired as exc:
            raise (step_up_refusal(spec, granted, exc) if granted is not None else exc) from None

    async def _test_connection(self, spec: ServerSpec) -> ConnectionReport:
        started = time.monotonic()
        session = McpSession(spec)
        try:
            try:
                await session.open()
            except McpError as exc:
                log_start_failure(spec, exc)
                raise
            self.pool.forget_failure(spec.pool_key)
            listing = await session.list_tools()
            published = await skills.list_skills(session)
            assert session.info is not None
            return ConnectionReport(
                server=session.info,
                tools=listing.tools,
                total_tools=listing.total,
                skills=published.skills,
                warnings=[*listing.warnings, *published.warnings],
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
        except McpError as exc:
            if session.alive or exc.code in REFUSALS:
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

    async def aget_task(self, spec: ServerSpec, task_id: str, tokens: RefreshingTokens | None = None) -> DetailedTask:
        """The state of a task the server runs a call as (tasks.py), asked on the pooled session:
        a task outlives the connection that made it. A lost connection is asked again once."""

        async def asking(bearing: ServerSpec) -> DetailedTask:
            session = await self.pool.acquire(bearing)
            try:
                return await session.get_task(task_id)
            except McpError as exc:
                if session.alive or exc.code is not ErrorCode.MCP_UNREACHABLE:
                    raise
                return await (await self.pool.acquire(bearing)).get_task(task_id)

        return await with_token(spec, tokens, asking)

    async def aupdate_task(
        self, spec: ServerSpec, task_id: str, responses: dict[str, Any], tokens: RefreshingTokens | None = None
    ) -> None:
        """The user's answers to the questions of a task that outlived its call, on the pooled session."""

        async def answering(bearing: ServerSpec) -> None:
            await (await self.pool.acquire(bearing)).update_task(task_id, responses)

        await with_token(spec, tokens, answering)

    async def acancel_task(self, spec: ServerSpec, task_id: str, tokens: RefreshingTokens | None = None) -> None:
        async def cancelling(bearing: ServerSpec) -> None:
            await (await self.pool.acquire(bearing)).cancel_task(task_id)

        await with_token(spec, tokens, cancelling)

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

    async def acomplete(
        self, spec: ServerSpec, request: CompletionRequest, tokens: RefreshingTokens | None = None
    ) -> Completions:
        """The server's suggestions for one argument (completion.py): quick, or none."""

        async def completing(bearing: ServerSpec) -> Completions:
            return await completion.complete(await self.pool.acquire(bearing), request)

        return await completion.quietly(spec, lambda: with_token(spec, tokens, completing))

    async def aread_resource(
        self, spec: ServerSpec, uri: str, tokens: RefreshingTokens | None = None
    ) -> list[ResourcePart]:
        async def reading(bearing: ServerSpec) -> list[ResourcePart]:
            return await resources.read_resource(await self.pool.acquire(bearing), uri)

        return await with_token(spec, tokens, reading)

    async def aread_app(self, spec: ServerSpec, uri: str, tokens: RefreshingTokens | None = None) -> AppResource:
        """The MCP App `uri` of the server (services/apps/sandbox.py)."""

        async def reading(bearing: ServerSpec) -> AppResource:
            return await resources.read_app(await self.pool.acquire(bearing), uri)

        return await with_token(spec, tokens, reading)

    async def aread_skill_file(
        self, spec: ServerSpec, entry: SkillEntry, uri: str, tokens: RefreshingTokens | None = None
    ) -> str:
        """The text of the file `uri` of the skill `entry`, read now and checked against the entry
        (raises SkillRefused naming the failed check)."""

        async def reading(bearing: ServerSpec) -> str:
            return await skills.read_skill_file(await self.pool.acquire(bearing), entry, uri)

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

    # -- what Odoo's threads read directly ----------------------------------------------------

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
        if not self.running:
            return
        self._reaper.cancel()
        try:
            self.run(self.pool.close_all(), timeout=timeout)
        except McpError:
            _logger.warning("MCP hub: sessions still closing after %.0f s at shutdown", timeout)
        self.stop(timeout)


_hub: McpHub | None = None
_hub_lock = threading.Lock()


def get_hub(settings: HubSettings | None = None) -> McpHub:
    """This process's hub, started on first use with `settings` (the defaults without): the first
    caller's settings are the process's, later ones are not looked at."""
    global _hub  # noqa: PLW0603 - one hub per process
    hub = _hub
    if hub is not None and hub.pid == os.getpid():
        return hub
    with _hub_lock:
        if _hub is None or _hub.pid != os.getpid():
            _hub = McpHub(settings)
        return _hub


def running_hub() -> McpHub | None:
    """This process's hub if one was started, else None: never starts one (a form that shows a
    server's output, the pool's stats)."""
    hub = _hub
    return hub if hub is not None and hub.pid == os.getpid() else None


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
