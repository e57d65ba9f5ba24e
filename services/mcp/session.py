"""One live MCP session, opened and closed by a task of its own.

The SDK's transports and Client are anyio context managers: entering one in a task and leaving it
in another raises "cancel scope in a different task". So each session has an owner task that
enters the contexts, signals readiness and waits to be told to close; callers only send requests
through the session object, which the SDK allows from any task of the loop.

The SDK's Client agrees on the revision: it asks `server/discover` and, from a server of an
earlier generation, falls back to the `initialize` handshake. At 2026-07-28 the connection is
stateless (every request carries the protocol version and the client's capabilities), a server's
question is a result the Client answers by retrying the call, and list changes come on a
`subscriptions/listen` stream (list_changes.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import warnings
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, MCPError
from mcp import types as mcp_types
from mcp.client.caching import CacheConfig, CacheMode
from mcp.client.extension import ClientExtension, advertise
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..address_pin import AddressPin, checked_pin
from ..call_clock import CallClock, CallLimits
from ..errors import AuthRequired, ConfigError, ErrorCode, McpError
from ..manifest import CLIENT_INFO
from ..oauth import Challenge, dpop
from ..server_spec import AuthType, ServerSpec, Transport
from ..tool_info import APP_MIME_TYPE, UI_EXTENSION, normalize_tool
from ..tool_result import ToolResult, normalize_result, still_running
from ._call_timeout import CLOCK_TICK, clocked
from ._failures import (
    SESSION_GONE,
    from_http_status,
    invalid_answer,
    is_http_error,
    is_lost_connection,
    is_not_found,
    leaf_exceptions,
    map_exception,
    map_jsonrpc_error,
)
from ._list_changes import listen_for_changes
from ._server_messages import MCP_LEVELS, ServerMessages
from ._stdio_failure import stdio_failure
from .call_observer import CallObserver
from .server_info import ServerInfo, ToolListing, server_info
from .tasks import (
    TERMINAL_STATUSES,
    DetailedTask,
    TasksExtension,
    TaskWatch,
    cancel_task_on,
    get_task,
    update_task_on,
    watching,
)
from .transport import McpTransport

_logger = logging.getLogger(__name__)
T = TypeVar("T")

STDERR_LINES = 200
# how long a failed start waits for the rest of the stdio server's standard error
STDERR_DRAIN_SECONDS = 1.0
MAX_LIST_PAGES = 100
# The call's own clock ends it (_call_timeout.py); the SDK's fixed timer must never fire first.
SDK_TIMER_OFF = 7 * 86400.0
# the failures of a call that leave its server's task running: the wait ran out, the connection broke
TASK_OUTLIVES = frozenset({ErrorCode.MCP_TIMEOUT, ErrorCode.MCP_UNREACHABLE})


class McpSession:
    """A session to one server configuration; see the module docstring for who owns what.
    `cache`: where list results are kept as long as the server's caching hints allow;
    `handshake_only`: the configurations known to need the initialize handshake without a probe,
    which this session adds to when it learns it."""

    def __init__(
        self,
        spec: ServerSpec,
        on_list_changed: Callable[[ServerSpec, str], None] | None = None,
        cache: CacheConfig | None = None,
        handshake_only: set[str] | None = None,
    ) -> None:
        self.spec = spec
        self.on_list_changed = on_list_changed
        self.cache = cache
        self.handshake_only = handshake_only
        self.fingerprint = spec.fingerprint()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_closed = asyncio.Event()
        self.info: ServerInfo | None = None
        self.failure: McpError | None = None
        self.last_used = time.monotonic()
        self.in_flight = 0
        self._client: Client | None = None
        self._lost = False
        self.terminated = False
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._pin: AddressPin | None = None
        # what the server sends besides answers, routed to the call it is about
        self.messages = ServerMessages(spec, on_list_changed)
        # the last 401/403 answer's WWW-Authenticate, kept for an OAuth server: it says whether to
        # refresh, sign in again or ask for a wider scope
        self.challenge: Challenge | None = None
        self._refused = False
        # the last HTTP error status a request met: the SDK reports most as a generic error
        self._http_status: int | None = None
        # a 401/403 met while connecting: the credentials were refused, whatever failed after it
        self._refused_at_connect: int | None = None
        # how the connection broke, when a request's HTTP exchange did: the SDK only says it closed
        self._broken: httpx2.TransportError | None = None
        # the check that a handshake-era session survived a cancelled call
        self._after_cancel: asyncio.Task[None] | None = None
        # the tools this session listed or looked for (_learn_tool), and one listing at a time
        self._tools_seen: set[str] = set()
        self._tools_listing = asyncio.Lock()

    @property
    def alive(self) -> bool:
        return self._client is not None and not self._lost and self._task is not None and not self._task.done()

    @property
    def client(self) -> Client:
        """The SDK's Client, for requests another module builds (prompts.py, resources.py): send
        them through `send`."""
        return self._require_client()

    @property
    def idle_for(self) -> float:
        return 0.0 if self.in_flight else time.monotonic() - self.last_used

    async def open(self) -> None:
        """Connect and agree on a revision; raises McpError. Concurrent waiters share the one attempt."""
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
        self._lost = True
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
                    client = await self._negotiate(stack)
                    await self._set_log_level(client)
                except Exception as exc:
                    # tell the waiting callers now: leaving the transport (e.g. its session DELETE
                    # to a server that stalls) may take long; a stdio server's last words first
                    await self._stderr_read()
                    self._report(exc)
                    raise
                self.info = server_info(client, self.spec.name)
                self.messages.stateless = self.info.stateless
                async with self._listening(client):
                    self._client = client
                    self._ready.set_result(None)
                    _logger.info(
                        "MCP session open: server=%s protocol=%s stateless=%s duration_ms=%d",
                        self.spec.label(),
                        self.info.protocol_version,
                        self.info.stateless,
                        (time.monotonic() - started) * 1000,
                    )
                    await self._stop.wait()
        except Exception as exc:  # the transport's failure is this session's end: report it, never raise
            if self._ready.done() and self.failure is None:
                self.failure = self._with_stderr(self._mapped(exc))
                _logger.warning(
                    "MCP session ended: server=%s error=%s%s",
                    self.spec.label(),
                    self.failure,
                    output_lines(self.failure),
                )
            self._report(exc)
        finally:
            self._client = None
            if not self._ready.done():
                self._ready.set_exception(
                    McpError(ErrorCode.MCP_UNREACHABLE, f"{self.spec.name}: closed before it was ready.")
                )
            _logger.debug("MCP session closed: server=%s", self.spec.label())

    async def _negotiate(self, stack: contextlib.AsyncExitStack) -> Client:
        """A connection at the newest revision both sides know. The SDK probes `server/discover`
        first; a server of an older SDK (Python mcp up to 1.8) ends its session on that unknown
        method instead of refusing it, and answers nothing more: when the probe met silence or a
        closed connection, a new connection goes straight to the handshake, and this
        configuration's later sessions too."""
        if self.handshake_only is not None and self.fingerprint in self.handshake_only:
            return await self._connect(stack, "legacy")
        probing = contextlib.AsyncExitStack()
        try:
            client = await self._connect(probing, "auto")
        except Exception as exc:
            await probing.aclose()
            if not _probe_may_have_ended_it(exc):
                raise
            _logger.info(
                "MCP server/discover probe unanswered: server=%s error=%s; trying the initialize handshake",
                self.spec.label(),
                self._mapped(exc),
            )
            self.stderr.clear()
            client = await self._connect(stack, "legacy")
            if self.handshake_only is not None:
                self.handshake_only.add(self.fingerprint)
            return client
        stack.push_async_exit(probing.__aexit__)
        return client

    async def _connect(self, stack: contextlib.AsyncExitStack, mode: str) -> Client:
        """The transport opened and the revision agreed, within the connect timeout. The timer
        cancels this task rather than a scope around the Client: the transport's task groups
        stay open after the handshake, and a scope must not end before what it holds."""
        await self._guard_address()
        self._stderr_closed = asyncio.Event()
        transport = McpTransport(
            self.spec,
            self.stderr,
            self._stderr_closed,
            self._answer_lost,
            self._on_response,
            self._pin,
        )
        client = Client(
            transport.open(stack),
            mode=mode,
            # the SDK's timer of every request but calls (ours time those), the handshake
            # included: never shorter than the connect timeout, which a server may take to start
            read_timeout_seconds=max(self.spec.call_timeout, self.spec.connect_timeout),
            elicitation_callback=self.messages.on_elicit,
            # the sampling capability is declared only for a server the admin allows it
            sampling_callback=self.messages.on_sample if self.spec.sampling else None,
            logging_callback=self.messages.on_log,
            # at 2026-07-28 a server logs only for requests that ask, at the level they ask: with
            # no level configured, everything, as a server of the handshake era sends by default
            log_level=self.spec.log_level or MCP_LEVELS[0],
            message_handler=self.messages.on_message,
            client_info=CLIENT_INFO,
            cache=self.cache,
            extensions=self._extensions(),
        )
        owner = asyncio.current_task()
        assert owner is not None
        timer = asyncio.get_running_loop().call_later(self.spec.connect_timeout, owner.cancel)
        try:
            await stack.enter_async_context(client)
        except asyncio.CancelledError:
            if timer.cancelled() or owner.uncancel() > 0:
                raise
            raise TimeoutError(f"no answer to the handshake within {self.spec.connect_timeout} s") from None
        finally:
            timer.cancel()
        self._http_status = None  # a refusal of the discovery probe is not the session's
        return client

    def _extensions(self) -> list[ClientExtension]:
        """A server may run a call as a task (tasks.py), at 2026-07-28; it registers its tools'
        apps only for a client that says it renders them."""
        extensions: list[ClientExtension] = [TasksExtension()]
        if self.spec.apps:
            extensions.append(advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]}))
        return extensions

    def _http_failure(self, exc: MCPError) -> McpError | None:
        """What an HTTP error status the SDK reported only generically means to the user."""
        status, self._http_status = self._http_status, None
        if status is None or not (is_http_error(exc) or is_not_found(exc)):
            return None
        return from_http_status(status, self.spec.name)

    def _report(self, exc: Exception) -> None:
        assert self._ready is not None
        if not self._ready.done():
            self.failure = self._auth_required(self._with_stderr(self._connect_failure(exc)))
            self._ready.set_exception(self.failure)

    def _connect_failure(self, exc: Exception) -> McpError:
        """Why the connection could not be made. A refusal of the credentials met on the way wins
        over what failed after it: the SDK's auto mode answers any error of its `server/discover`
        probe, a 401 included, with the `initialize` handshake, which a server of 2026-07-28 only
        refuses for a reason of its own (no protocol-version header, an unknown method). The user
        is then asked to sign in, or the token refreshed, as a handshake-era server's 401 does."""
        if self._refused_at_connect is not None:
            _logger.info(
                "MCP connect refused the credentials: server=%s status=%d then=%s",
                self.spec.label(),
                self._refused_at_connect,
                self._mapped(exc),
            )
            return from_http_status(self._refused_at_connect, self.spec.name)
        return self._mapped(exc)

    def _mapped(self, exc: BaseException) -> McpError:
        """`exc` as a user reads it, with the HTTP status the SDK reported only generically."""
        for leaf in leaf_exceptions(exc):
            if isinstance(leaf, MCPError):
                refused = self._http_failure(leaf)
                if refused is not None:
                    return refused
        return map_exception(exc, self.spec.name)

    def _auth_required(self, error: McpError) -> McpError:
        """An OAuth server's refusal becomes AuthRequired, which the caller answers by refreshing
        the token once, or by asking the user to sign in (with the wider scope of a step-up)."""
        if self.spec.auth_type is not AuthType.OAUTH or error.code is not ErrorCode.MCP_AUTH_FAILED:
            return error
        challenge = self.challenge
        if challenge is not None and challenge.error in (dpop.USE_NONCE, dpop.INVALID_PROOF):
            # a new token would meet the same refusal: a sentence for the administrator, no sign-in
            _logger.warning("MCP server refused the DPoP proof: server=%s error=%s", self.spec.label(), challenge.error)
            return McpError(
                ErrorCode.MCP_AUTH_FAILED, dpop.refusal_message(self.spec.name, "MCP server", challenge.error)
            )
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

    async def _on_response(self, response: httpx2.Response) -> None:
        """An HTTP error status is kept for the error it causes. An OAuth server's refusal of an
        open session's request also ends the session: its WWW-Authenticate says whether to
        refresh, sign in again or ask for a wider scope."""
        if response.status_code < 400:
            return
        self._http_status = response.status_code
        if response.status_code not in (401, 403):
            return
        if self._client is None:
            self._refused_at_connect = response.status_code
        if self.spec.auth_type is not AuthType.OAUTH:
            return
        self.challenge = Challenge.from_response(response)
        if self._client is not None:
            self._lost = True
            self._refused = True

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

    async def _set_log_level(self, client: Client) -> None:
        """Ask for the server's log messages at the configured level, where it offers logging. At
        2026-07-28 the level goes with every request instead (the Client's `log_level`)."""
        if not self.spec.log_level or client.server_capabilities.logging is None:
            return
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            with anyio.fail_after(self.spec.connect_timeout), warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level(self.spec.log_level)
        except (MCPError, TimeoutError) as exc:
            # a server that refuses the level still serves its tools
            _logger.info(
                "MCP logging/setLevel refused: server=%s level=%s error=%s", self.spec.label(), self.spec.log_level, exc
            )

    def _listening(self, client: Client) -> contextlib.AbstractAsyncContextManager[None]:
        """At 2026-07-28, a pooled session whose owner wants list changes listens for them."""
        if self.on_list_changed is None or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return contextlib.nullcontext()
        return listen_for_changes(client, self.spec, self.on_list_changed, self.spec.connect_timeout)

    async def _stderr_read(self) -> None:
        """Wait a moment for a stdio server's standard error to be read to its end: a server that
        crashed closes it about when its stdout, which failed the connection."""
        if self.spec.transport is Transport.STDIO:
            with anyio.move_on_after(STDERR_DRAIN_SECONDS):
                await self._stderr_closed.wait()

    def _with_stderr(self, error: McpError) -> McpError:
        """A stdio server's error with the tail of its standard error and the line of it that says
        why, for the admin and the log (a crash's reason is seldom on its last line: Node's is its
        version). The message stays without them: it reaches users and the model, and a server may
        print its secrets there (they are masked as read, but what else it prints is its own)."""
        if self.spec.transport is not Transport.STDIO:
            return error
        return stdio_failure(error, self.spec.name, list(self.stderr), self.spec.memory_limit_mb)

    def _answer_lost(self, request_id: int | str, error: httpx2.TransportError) -> None:
        """The request `request_id` could not be sent or its response stream broke: the SDK fails
        it; the session is rebuilt next time."""
        _logger.info(
            "MCP answer lost: server=%s request=%s error=%s: %s",
            self.spec.label(),
            request_id,
            type(error).__name__,
            error,
        )
        self._lost = True
        self._broken = error

    def _require_client(self) -> Client:
        if self._client is None or self._lost:
            raise self.failure or McpError(ErrorCode.MCP_UNREACHABLE, f"The connection to {self.spec.name} is closed.")
        return self._client

    async def list_pages(
        self,
        request: Callable[[Client, str | None], Awaitable[Any]],
        items: Callable[[Any], list[T]],
        cap: int | None = None,
    ) -> list[T]:
        """Every item of a paginated list request (tools, prompts, resources...), page after page:
        at most MAX_LIST_PAGES pages, and `cap` items when given. `request(client, cursor)`."""
        client = self._require_client()
        found: list[T] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await self._request(request(client, cursor))
            found.extend(items(page))
            cursor = page.next_cursor
            if not cursor or (cap is not None and len(found) >= cap):
                break
        return found if cap is None else found[:cap]

    async def list_tools(self, cache_mode: CacheMode = "use") -> ToolListing:
        """The server's tools; a listing whose caching hint has not run out is not asked again
        unless `cache_mode` is "refresh"."""
        return self._listing(
            await self.list_pages(
                lambda c, cursor: c.list_tools(cursor=cursor, cache_mode=cache_mode), lambda page: page.tools
            )
        )

    def _listing(self, raw: list[mcp_types.Tool]) -> ToolListing:
        warnings_: list[str] = []
        unique: dict[str, mcp_types.Tool] = {}
        for tool in raw:
            if tool.name in unique:
                warnings_.append(f"{self.spec.name} lists the tool {tool.name!r} twice; the first one is kept.")
                continue
            unique[tool.name] = tool
        tools = list(unique.values())
        if len(tools) > self.spec.max_tools:
            warnings_.append(
                f"{self.spec.name} offers {len(tools)} tools; only the first {self.spec.max_tools} are kept."
            )
        kept = [normalize_tool(t) for t in tools[: self.spec.max_tools]]
        for info in kept:
            problem = info.schema_problem()
            if problem:
                warnings_.append(
                    f"{self.spec.name}: the tool {info.name!r} is left out of every answer because {problem}."
                )
        for message in warnings_:
            _logger.warning("MCP tools/list: server=%s %s", self.spec.label(), message)
        return ToolListing(tools=kept, total=len(tools), warnings=warnings_)

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
        client = self._require_client()
        await self._learn_tool(client, name)
        spec = self.spec
        clock = clock or CallClock(CallLimits(spec.call_timeout, spec.call_time_cap, spec.question_timeout))
        started = time.monotonic()
        if observer is not None:
            observer.watch(clock)
        ended = True
        # a task the server runs the call as outlives a clock that ran out: it is left running
        watch = TaskWatch(
            detach=lambda: clock.expired() is not None,
            on_status=observer.task_status if observer is not None else None,
        )
        try:
            with self.messages.observing(observer), watching(watch):
                raw = await self._request(
                    clocked(
                        spec.name,
                        client.call_tool(
                            name,
                            arguments,
                            read_timeout_seconds=SDK_TIMER_OFF,
                            # a progress token goes with the call only when someone watches its progress
                            progress_callback=observer.progress if observer is not None else None,
                        ),
                        clock,
                        observer,
                        tick,
                    )
                )
            ended = False
        except McpError as exc:
            running = watch.task
            if running is None or running.status in TERMINAL_STATUSES or exc.code not in TASK_OUTLIVES:
                raise
            _logger.info(
                "MCP task still running: server=%s tool=%s task=%s status=%s after=%s",
                spec.label(),
                name,
                running.task_id,
                running.status,
                exc.code.value,
            )
            return still_running(spec.name, running.model_copy(update={"server_key": spec.key}))
        finally:
            if ended:
                self._check_after_cancel()
            if observer is not None:
                observer.finish()
            _logger.debug(
                "MCP tools/call: server=%s tool=%s duration_ms=%d",
                spec.name,
                name,
                (time.monotonic() - started) * 1000,
            )
        return normalize_result(raw)

    async def get_task(self, task_id: str) -> DetailedTask:
        """The state of the server's task `task_id` (tasks.py), within the connect timeout."""
        client = self._require_client()
        with anyio.fail_after(self.spec.connect_timeout):
            return await self._request(get_task(client, task_id))

    async def update_task(self, task_id: str, responses: dict[str, Any]) -> None:
        """The answers to a task's questions (tasks.py), within the connect timeout."""
        client = self._require_client()
        with anyio.fail_after(self.spec.connect_timeout):
            await self._request(update_task_on(client.session, task_id, responses))

    async def cancel_task(self, task_id: str) -> None:
        client = self._require_client()
        with anyio.fail_after(self.spec.connect_timeout):
            await self._request(cancel_task_on(client.session, task_id))

    async def _learn_tool(self, client: Client, name: str) -> None:
        """At 2026-07-28 the SDK mirrors a tool's header parameters (`x-mcp-header`) into the
        `Mcp-Param-*` headers of its call only when the tool was listed on the same session, and
        Odoo lists at sync on a session of its own: a session lists the tools before its first call
        of one it has not seen. A call that succeeds costs no request more: the SDK lists after it
        otherwise, to check its structured content. A listing that fails for another reason than
        the credentials leaves the call to go without the headers."""
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or name in self._tools_seen:
            return
        async with self._tools_listing:
            if name in self._tools_seen:
                return
            try:
                tools = await self.list_pages(lambda c, cursor: c.list_tools(cursor=cursor), lambda page: page.tools)
            except McpError as exc:
                if exc.code in (ErrorCode.MCP_AUTH_REQUIRED, ErrorCode.MCP_AUTH_FAILED):
                    raise
                _logger.info(
                    "MCP tools/list before a call failed: server=%s tool=%s error=%s", self.spec.label(), name, exc
                )
                return
            finally:
                # looked for once: a tool the server does not list is not listed for again at each call
                self._tools_seen.add(name)
            self._tools_seen.update(tool.name for tool in tools)

    def _check_after_cancel(self) -> None:
        """A call that ended without its answer (timed out, cancelled, failed) was cancelled on
        the server; servers of some older SDKs end their session on that (mcp 1.2 refuses the
        notice, 1.9 and 1.10 crash on it). A ping tells: the next caller of the pool waits for it
        (`settled`), and gets a new session if this one is gone. At 2026-07-28 there is no session
        to lose."""
        if self._client is None or self._lost or (self.info is not None and self.info.stateless):
            return
        if self._after_cancel is None or self._after_cancel.done():
            self._after_cancel = asyncio.create_task(self._ping(), name=f"mcp-ping {self.spec.key}")

    async def _ping(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            with anyio.fail_after(self.spec.connect_timeout), warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.send_ping()
        except (MCPError, TimeoutError, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            _logger.info("MCP session lost after a cancelled call: server=%s error=%s", self.spec.label(), exc)
            self._lost = True

    async def settled(self) -> None:
        """Wait for the check after a cancelled call, if one runs."""
        checking = self._after_cancel
        if checking is not None and not checking.done():
            await asyncio.shield(checking)

    async def send(self, request: Awaitable[T]) -> T:
        """A request another module builds on `client` (prompts.py, resources.py), with this
        session's bookkeeping and error codes."""
        return await self._request(request)

    async def _request(self, request: Awaitable[T]) -> T:
        """Await one SDK request, keeping the session's bookkeeping and mapping its failures."""
        self.in_flight += 1
        try:
            return await request
        except MCPError as exc:
            refused = self._http_failure(exc)
            if refused is not None:
                self._lost = True
                self.failure = self._auth_required(refused)
                raise self.failure from None
            if is_lost_connection(exc):
                self._lost = True
                self.terminated = exc.code == SESSION_GONE
                self.failure = self._lost_failure(exc)
                raise self.failure from None
            raise map_jsonrpc_error(exc.error, self.spec.name) from None
        except ValidationError as exc:
            # the SDK checks every answer against the revision agreed, a whole list at once
            raise invalid_answer(exc, self.spec.name) from None
        except RuntimeError as exc:
            # the SDK raises RuntimeError when structured content breaks the tool's output schema
            raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{self.spec.name}: {exc}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            self._lost = True
            raise map_exception(exc, self.spec.name) from None
        finally:
            self.in_flight -= 1
            self.last_used = time.monotonic()

    def _lost_failure(self, exc: MCPError) -> McpError:
        """Why a request's connection is gone, in the words that tell the user what happened."""
        name = self.spec.name
        if self._refused and self.challenge is not None:
            return self._auth_required(from_http_status(self.challenge.status, name))
        if self._stop.is_set():
            return McpError(ErrorCode.MCP_UNREACHABLE, f"The session to {name} was closed before the server answered.")
        if self._broken is not None:
            broken = self._broken
            return McpError(
                ErrorCode.MCP_UNREACHABLE,
                f"The connection to {name} was lost before it answered ({type(broken).__name__}: {broken}).",
            )
        return self._with_stderr(map_jsonrpc_error(exc.error, name))


def output_lines(error: McpError) -> str:
    """A stdio server's output as the log shows it: on lines of its own after the error."""
    return f"; its output:\n{error.output}" if error.output else ""


def log_start_failure(spec: ServerSpec, error: McpError) -> None:
    """A stdio server that could not start, with what it wrote: logged once it was given up on."""
    if error.output:
        _logger.warning(
            "MCP stdio server did not start: server=%s error=%s%s", spec.label(), error, output_lines(error)
        )


def _probe_may_have_ended_it(exc: BaseException) -> bool:
    """The probe met silence or a closed connection, not a refusal nor an unreachable server."""
    for leaf in leaf_exceptions(exc):
        if isinstance(leaf, TimeoutError | anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
            return True
        if isinstance(leaf, MCPError) and is_lost_connection(leaf):
            return True
    return False
