"""One live MCP session, opened and closed by a task of its own.

The SDK's transports and ClientSession are anyio context managers: entering one in a task and
leaving it in another raises "cancel scope in a different task". So each session has an owner
task that enters the contexts, signals readiness and waits to be told to close; callers only send
requests through the session object, which the SDK allows from any task of the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

import anyio
import httpx
from mcp import ClientSession
from mcp import McpError as SdkMcpError
from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict

from .address_pin import AddressPin, checked_pin
from .call_clock import CallClock, CallLimits, Limit, spoken_duration
from .call_observer import CallObserver
from .eliciting_session import ElicitingClientSession
from .errors import AuthRequired, ConfigError, ErrorCode, McpError
from .icons import display_icon
from .manifest import addon_version
from .mcp_failures import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    SESSION_TERMINATED,
    from_http_status,
    map_exception,
    map_jsonrpc_error,
)
from .mcp_transport import McpTransport
from .oauth_discovery import Challenge
from .output_validation import CachedOutputValidation
from .server_spec import AuthType, ServerSpec, Transport
from .tool_info import ToolInfo, normalize_tool
from .tool_result import ToolResult, normalize_result

_logger = logging.getLogger(__name__)
T = TypeVar("T")

STDERR_LINES = 200
MAX_LIST_PAGES = 100
CANCEL_NOTICE_TIMEOUT = 2.0
# A call's limits are read from its CallClock at least this often: the clock is a callable that
# asyncio's timers cannot follow (tests drive it), and a question opened meanwhile may lapse sooner.
CLOCK_TICK = 1.0
# The call's own clock ends it (call_clock.py); the SDK's fixed timer must never fire first.
SDK_TIMER_OFF = timedelta(days=7)
# how the client introduces itself to servers: the addon's name and its manifest version
CLIENT_INFO = mcp_types.Implementation(name="odoo-ai_mcp", version=addon_version())
# MCP's syslog levels (RFC 5424), lowest first, and as Python's
MCP_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
LIST_CHANGES = {
    mcp_types.ToolListChangedNotification: "tools",
    mcp_types.ResourceListChangedNotification: "resources",
    mcp_types.PromptListChangedNotification: "prompts",
}


class PooledClientSession(CachedOutputValidation, ElicitingClientSession):
    """The SDK's ClientSession as a pooled session needs it: elicitation answered off the receive
    loop, output schemas checked with validators built once."""


class ServerInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    protocol_version: str
    capabilities: dict[str, Any]
    instructions: str | None = None
    icon: str | None = None


class ToolListing(BaseModel):
    model_config = ConfigDict(frozen=True)

    tools: list[ToolInfo]
    total: int
    warnings: list[str] = []


class McpSession:
    """A session to one server configuration; see the module docstring for who owns what."""

    def __init__(self, spec: ServerSpec, on_list_changed: Callable[[ServerSpec, str], None] | None = None) -> None:
        self.spec = spec
        self.on_list_changed = on_list_changed
        self.fingerprint = spec.fingerprint()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.info: ServerInfo | None = None
        self.failure: McpError | None = None
        self.last_used = time.monotonic()
        self.in_flight = 0
        self._session: ClientSession | None = None
        self._lost = False
        self.terminated = False
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._pin: AddressPin | None = None
        self._observers: dict[int, CallObserver] = {}
        # the last 401/403 answer's WWW-Authenticate, kept for an OAuth server: it says whether to
        # refresh, sign in again or ask for a wider scope
        self.challenge: Challenge | None = None
        self._refused = False

    @property
    def alive(self) -> bool:
        return self._session is not None and not self._lost and self._task is not None and not self._task.done()

    @property
    def client_session(self) -> ClientSession:
        return self._require_session()

    @property
    def idle_for(self) -> float:
        return 0.0 if self.in_flight else time.monotonic() - self.last_used

    async def open(self) -> None:
        """Connect and initialize; raises McpError. Concurrent waiters share the one attempt."""
        if self._task is None:
            self._ready = asyncio.get_running_loop().create_future()
            # every waiter may have been cancelled by the time it fails: mark its failure as seen
            self._ready.add_done_callback(lambda ready: ready.cancelled() or ready.exception())
            self._task = asyncio.create_task(self._own(), name=f"mcp-session {self.spec.key}")
        assert self._ready is not None
        # shield: a caller that gives up must not cancel the attempt other callers wait on
        await asyncio.shield(self._ready)

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.spec.connect_timeout + 5):
                await asyncio.wait([self._task])
            if not self._task.done():
                self._task.cancel()

    async def _own(self) -> None:
        assert self._ready is not None
        started = time.monotonic()
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    await self._guard_address()
                    transport = McpTransport(
                        self.spec,
                        self.stderr,
                        self._answer_lost,
                        self._keep_challenge if self.spec.auth_type is AuthType.OAUTH else None,
                        self._pin,
                    )
                    streams = await stack.enter_async_context(transport.open(stack))
                    session = await stack.enter_async_context(
                        PooledClientSession(
                            streams[0],
                            streams[1],
                            ask=self._on_elicit,
                            # the SDK's timer of every request but calls (ours time those), the
                            # handshake included: never shorter than the connect timeout, which a
                            # server may take to start
                            read_timeout_seconds=timedelta(
                                seconds=max(self.spec.call_timeout, self.spec.connect_timeout)
                            ),
                            message_handler=self._on_message,
                            logging_callback=self._on_log,
                            client_info=CLIENT_INFO,
                        )
                    )
                    init = await self._initialize(session)
                    await self._set_log_level(session, init)
                except Exception as exc:
                    # tell the waiting callers now: leaving the transport (e.g. its session DELETE
                    # to a server that stalls) may take long
                    self._report(exc)
                    raise
                self.info = _server_info(init)
                self._session = session
                self._ready.set_result(None)
                _logger.info(
                    "MCP session open: server=%s protocol=%s duration_ms=%d",
                    self.spec.label(),
                    init.protocolVersion,
                    (time.monotonic() - started) * 1000,
                )
                await self._stop.wait()
        except Exception as exc:  # the transport's failure is this session's end: report it, never raise
            if self._ready.done() and self.failure is None:
                self.failure = self._with_stderr(map_exception(exc, self.spec.name))
                _logger.warning("MCP session ended: server=%s error=%s", self.spec.label(), self.failure)
            self._report(exc)
        finally:
            # the SDK fails the requests still waiting only until its own closing is cancelled:
            # any left would wait for their whole timeout on a session that is gone
            self._fail_pending(
                list(self._session._response_streams) if self._session is not None else [],
                CONNECTION_CLOSED,
                "the session was closed before the server answered",
            )
            self._session = None
            if not self._ready.done():
                self._ready.set_exception(
                    McpError(ErrorCode.MCP_UNREACHABLE, f"{self.spec.name}: closed before it was ready.")
                )
            _logger.debug("MCP session closed: server=%s", self.spec.label())

    def _report(self, exc: Exception) -> None:
        assert self._ready is not None
        if not self._ready.done():
            self.failure = self._auth_required(self._with_stderr(map_exception(exc, self.spec.name)))
            self._ready.set_exception(self.failure)

    def _auth_required(self, error: McpError) -> McpError:
        """An OAuth server's refusal becomes AuthRequired, which the caller answers by refreshing
        the token once, or by asking the user to sign in (with the wider scope of a step-up)."""
        if self.spec.auth_type is not AuthType.OAUTH or error.code is not ErrorCode.MCP_AUTH_FAILED:
            return error
        challenge = self.challenge
        step_up = challenge is not None and challenge.insufficient_scope
        return AuthRequired(
            self.spec.key,
            self.spec.name,
            f"{self.spec.name} needs a sign-in with more permissions ({challenge.scope})."
            if step_up and challenge
            else None,
            scope=challenge.scope if challenge else None,
            step_up=step_up,
            owner=self.spec.token_owner,
            resource_metadata=challenge.resource_metadata if challenge else None,
        )

    async def _keep_challenge(self, response: httpx.Response) -> None:
        """A refusal of an open session's request ends the SDK's transport without answering the
        pending requests, which would wait for their full timeout: fail them now, as refused."""
        if response.status_code not in (401, 403):
            return
        self.challenge = Challenge.from_response(response)
        session = self._session
        if session is not None:
            self._lost = True
            self._refused = True
            self._fail_pending(
                list(session._response_streams),
                CONNECTION_CLOSED,
                f"the server refused the token (HTTP {response.status_code})",
            )

    async def _guard_address(self) -> None:
        """A user-given URL is checked again right before connecting, and the session's requests
        go to the address checked: its host may resolve elsewhere than when it was saved, or
        between the check and the connection (DNS rebinding)."""
        if not self.spec.public_only:
            return
        try:
            self._pin = await checked_pin(self.spec.url, self.spec.allowed_hosts)
        except ConfigError as exc:
            raise McpError(ErrorCode.MCP_UNREACHABLE, f"{self.spec.name}: {exc.problem}") from None

    async def _initialize(self, session: ClientSession) -> mcp_types.InitializeResult:
        try:
            with anyio.fail_after(self.spec.connect_timeout):
                return await session.initialize()
        except SdkMcpError as exc:
            if exc.error.code == SESSION_TERMINATED:
                # the SDK reports a 404 on the very first POST as a terminated session
                raise from_http_status(404, self.spec.name) from None
            raise

    async def _set_log_level(self, session: ClientSession, init: mcp_types.InitializeResult) -> None:
        """Ask for the server's log messages at the configured level, where it offers logging."""
        if not self.spec.log_level or init.capabilities.logging is None:
            return
        try:
            with anyio.fail_after(self.spec.connect_timeout):
                await session.set_logging_level(self.spec.log_level)
        except (SdkMcpError, TimeoutError) as exc:
            # a server that refuses the level still serves its tools
            _logger.info(
                "MCP logging/setLevel refused: server=%s level=%s error=%s", self.spec.label(), self.spec.log_level, exc
            )

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """A server log message goes to Odoo's log, and to the tool block of the call it belongs to.
        The protocol does not say which request a log message is about, and a pooled session may
        serve several users' calls at once: a message is shown in a call only when that call is
        the only one running on the session."""
        if self.spec.log_level and MCP_LEVELS.index(params.level) < MCP_LEVELS.index(self.spec.log_level):
            return  # servers need not honour logging/setLevel; the setting holds all the same
        observers = list(self._observers.values())
        shown = len(observers) == 1 and observers[0].log(params.level, params.logger, params.data)
        _logger.log(
            LOG_LEVELS.get(params.level, logging.INFO),
            "MCP server log: server=%s level=%s logger=%s call=%s %s",
            self.spec.name,
            params.level,
            params.logger or "",
            observers[0].call_id if shown else "-",
            str(params.data)[:2000],
        )

    async def _on_elicit(self, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        """A server asks the user something during a call. As for log messages, the request does
        not say which call it is about: it is put to the user of the call only when that call is
        the only one running on the session, and cancelled otherwise, so that no user is ever
        shown another user's question."""
        observers = list(self._observers.values())
        if len(observers) != 1:
            _logger.warning(
                "MCP elicitation cancelled: server=%s calls_running=%d (cannot tell whose it is)",
                self.spec.name,
                len(observers),
            )
            return mcp_types.ElicitResult(action="cancel")
        _logger.info("MCP elicitation: server=%s call=%s mode=%s", self.spec.name, observers[0].call_id, params.mode)
        return await observers[0].elicit(self.spec.name, params)

    def _with_stderr(self, error: McpError) -> McpError:
        if self.spec.transport is not Transport.STDIO or not self.stderr:
            return error
        return McpError(error.code, f"{error.message} Last output: {self.stderr[-1]}")

    def _answer_lost(self, request_id: int, error: httpx.TransportError) -> None:
        """The request `request_id` could not be sent or its response stream broke: fail that
        request now, rebuild the session next time."""
        _logger.info(
            "MCP answer lost: server=%s request=%s error=%s: %s",
            self.spec.label(),
            request_id,
            type(error).__name__,
            error,
        )
        self._lost = True
        self._fail_pending([request_id], CONNECTION_CLOSED, "the connection to the server broke before it answered")

    async def _on_message(self, message: Any) -> None:
        """List changes are announced to the hub. The SDK also hands undecodable server output
        here, and leaves the request it answered waiting for its full timeout: fail what is
        pending instead, and rebuild the session next time."""
        if isinstance(message, mcp_types.ServerNotification):
            kind = LIST_CHANGES.get(type(message.root))
            if kind and self.on_list_changed is not None:
                _logger.info("MCP list changed: server=%s list=%s", self.spec.label(), kind)
                self.on_list_changed(self.spec, kind)
            return
        if not isinstance(message, Exception):
            return
        if not isinstance(message, ValueError):  # pydantic's ValidationError and json's errors are ValueErrors
            # e.g. the server's answer to a request we cancelled, whose id the SDK has forgotten
            _logger.debug("MCP message ignored: server=%s %s", self.spec.label(), message)
            return
        _logger.warning("MCP bad message: server=%s error=%s", self.spec.label(), message)
        self._lost = True
        session = self._session
        pending = list(session._response_streams) if session else []
        reason = (str(message).splitlines() or [type(message).__name__])[0][:200]
        self._fail_pending(pending, mcp_types.PARSE_ERROR, f"the server's answer is not valid JSON-RPC ({reason})")

    def _fail_pending(self, request_ids: list[Any], code: int, message: str) -> None:
        session = self._session
        if session is None:
            return
        error = mcp_types.ErrorData(code=code, message=message)
        for request_id in request_ids:
            stream = session._response_streams.get(request_id)
            if stream is None:
                continue
            # the SDK has no public way to fail a pending request; its own receive loop does exactly this
            with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                stream.send_nowait(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    def _require_session(self) -> ClientSession:
        if self._session is None or self._lost:
            raise self.failure or McpError(ErrorCode.MCP_UNREACHABLE, f"The connection to {self.spec.name} is closed.")
        return self._session

    async def list_pages(
        self,
        request: Callable[[ClientSession, mcp_types.PaginatedRequestParams], Awaitable[Any]],
        items: Callable[[Any], list[T]],
        cap: int | None = None,
    ) -> list[T]:
        """Every item of a paginated list request (tools, prompts, resources...), page after page:
        at most MAX_LIST_PAGES pages, and `cap` items when given."""
        session = self._require_session()
        found: list[T] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await self._request(request(session, mcp_types.PaginatedRequestParams(cursor=cursor)))
            found.extend(items(page))
            cursor = page.nextCursor
            if not cursor or (cap is not None and len(found) >= cap):
                break
        return found if cap is None else found[:cap]

    async def list_tools(self) -> ToolListing:
        return self._listing(
            await self.list_pages(lambda s, params: s.list_tools(params=params), lambda page: page.tools)
        )

    def _listing(self, raw: list[mcp_types.Tool]) -> ToolListing:
        warnings: list[str] = []
        unique: dict[str, mcp_types.Tool] = {}
        for tool in raw:
            if tool.name in unique:
                warnings.append(f"{self.spec.name} lists the tool {tool.name!r} twice; the first one is kept.")
                continue
            unique[tool.name] = tool
        tools = list(unique.values())
        if len(tools) > self.spec.max_tools:
            warnings.append(
                f"{self.spec.name} offers {len(tools)} tools; only the first {self.spec.max_tools} are kept."
            )
        for message in warnings:
            _logger.warning("MCP tools/list: server=%s %s", self.spec.label(), message)
        return ToolListing(
            tools=[normalize_tool(t) for t in tools[: self.spec.max_tools]], total=len(tools), warnings=warnings
        )

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        clock: CallClock | None = None,
        observer: CallObserver | None = None,
        tick: float = CLOCK_TICK,
    ) -> ToolResult:
        """Call a tool within `clock`'s limits (by default this server's), which the hub's loop
        enforces: the SDK's fixed timer could neither be reset by progress nor stopped while a
        question waits for the user. `tick`: how often the clock is read at least."""
        session = self._require_session()
        spec = self.spec
        clock = clock or CallClock(CallLimits(spec.call_timeout, spec.call_time_cap, spec.question_timeout))
        # send_request takes this id synchronously before its first await, and nothing awaits in
        # between: it is the id of our request, which the SDK does not expose yet is what a
        # notifications/cancelled must name.
        request_id = session._request_id
        started = time.monotonic()
        if observer is not None:
            observer.watch(clock)
            self._observers[request_id] = observer
        try:
            raw = await self._request(
                self._clocked(
                    session.call_tool(
                        name,
                        arguments,
                        read_timeout_seconds=SDK_TIMER_OFF,
                        # a progress token goes with the call only when someone watches its progress
                        progress_callback=observer.progress if observer is not None else None,
                    ),
                    clock,
                    observer,
                    tick,
                    request_id,
                ),
                cancel_id=request_id,
            )
        finally:
            if observer is not None:
                self._observers.pop(request_id, None)
                observer.finish()
            _logger.debug(
                "MCP tools/call: server=%s tool=%s duration_ms=%d",
                self.spec.name,
                name,
                (time.monotonic() - started) * 1000,
            )
        return normalize_result(raw)

    async def _clocked(
        self, request: Awaitable[T], clock: CallClock, observer: CallObserver | None, tick: float, request_id: int
    ) -> T:
        """`request`'s answer, unless `clock` runs out first: then the server is told to cancel it.
        The request is awaited in this task (its id is read here before it is sent), a watcher
        cancels it, as asyncio.timeout does."""
        caller = asyncio.current_task()
        assert caller is not None
        ran_out: list[Limit] = []
        watcher = asyncio.create_task(self._watch(clock, observer, tick, caller, ran_out))
        try:
            return await request
        except asyncio.CancelledError:
            if not ran_out or caller.uncancel() > 0:
                raise  # cancelled by someone else (the user, the turn), not by the clock
        finally:
            watcher.cancel()
        limit = ran_out[0]
        await self._cancel_on_server(request_id, "timed out")
        _logger.info("MCP tools/call timed out: server=%s limit=%s", self.spec.name, limit.value)
        raise McpError(ErrorCode.MCP_TIMEOUT, _timeout_message(self.spec.name, limit, clock))

    @staticmethod
    async def _watch(
        clock: CallClock, observer: CallObserver | None, tick: float, caller: asyncio.Task[Any], ran_out: list[Limit]
    ) -> None:
        while True:
            await asyncio.sleep(min(clock.due(), tick))
            if observer is not None:
                for question in clock.lapsed():
                    observer.lapse(question)
            limit = clock.expired()
            if limit is not None:
                ran_out.append(limit)
                caller.cancel()
                return

    async def send(self, request: Awaitable[T]) -> T:
        """A request another module builds on `client_session` (prompts.py, resources.py), with this session's
        bookkeeping and error codes."""
        return await self._request(request)

    async def _request(self, request: Any, cancel_id: int | None = None) -> Any:
        """Await one SDK request, keeping the session's bookkeeping and mapping its failures."""
        self.in_flight += 1
        try:
            return await request
        except SdkMcpError as exc:
            code = exc.error.code
            if code == REQUEST_TIMEOUT and cancel_id is not None:
                await self._cancel_on_server(cancel_id, "timed out")
            if code in (CONNECTION_CLOSED, SESSION_TERMINATED):
                self._lost = True
                self.terminated = code == SESSION_TERMINATED
                if self._refused and self.challenge is not None:
                    self.failure = self._auth_required(from_http_status(self.challenge.status, self.spec.name))
                else:
                    self.failure = self._with_stderr(map_jsonrpc_error(exc.error, self.spec.name))
                raise self.failure from None
            raise map_jsonrpc_error(exc.error, self.spec.name) from None
        except asyncio.CancelledError:
            if cancel_id is not None:
                await self._cancel_on_server(cancel_id, "cancelled by the client")
            raise
        except RuntimeError as exc:
            # ClientSession.call_tool raises RuntimeError when structured content breaks the tool's output schema
            raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{self.spec.name}: {exc}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            self._lost = True
            raise map_exception(exc, self.spec.name) from None
        finally:
            self.in_flight -= 1
            self.last_used = time.monotonic()

    async def _cancel_on_server(self, request_id: int, reason: str) -> None:
        """mcp 1.x forgets a timed-out or cancelled request without telling the server: tell it."""
        session = self._session
        if session is None:
            return
        notice = mcp_types.ClientNotification(
            mcp_types.CancelledNotification(
                params=mcp_types.CancelledNotificationParams(requestId=request_id, reason=reason)
            )
        )
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_NOTICE_TIMEOUT):
            try:
                await session.send_notification(notice)
                _logger.info("MCP cancel sent: server=%s request=%s reason=%s", self.spec.name, request_id, reason)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx.HTTPError) as exc:
                _logger.debug("MCP cancel not sent: server=%s error=%s", self.spec.name, exc)


def _timeout_message(server: str, limit: Limit, clock: CallClock) -> str:
    """Which limit ended the call, and what raises it."""
    if limit is Limit.TURN:
        seconds = clock.budget.seconds if clock.budget is not None else 0.0
        return (
            f"The answer's time limit ({spoken_duration(seconds)}) ran out while {server} ran this call; "
            "the call was cancelled. Raise the assistant's answer timeout if its tools need longer."
        )
    if limit is Limit.CAP:
        return (
            f"{server} was still running this call after {spoken_duration(clock.limits.cap)}, the most a call may "
            "take however often it reports progress; the call was cancelled. Raise the server's call time cap if "
            "the tool needs longer."
        )
    return (
        f"{server} sent neither a result nor progress for {spoken_duration(clock.limits.idle)}; "
        "the call was cancelled. Raise the call timeout (the assistant's or the server's, whichever is lower) "
        "if the tool needs longer, or have the tool report progress."
    )


def _server_info(init: mcp_types.InitializeResult) -> ServerInfo:
    return ServerInfo(
        name=init.serverInfo.name,
        version=init.serverInfo.version,
        protocol_version=str(init.protocolVersion),
        capabilities=init.capabilities.model_dump(mode="json", exclude_none=True),
        instructions=init.instructions,
        icon=display_icon(init.serverInfo.icons),
    )
