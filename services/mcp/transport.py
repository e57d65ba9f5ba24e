"""The transport under one MCP session: a stdio server's process, or an SSE or streamable HTTP
connection, built the way the SDK's clients expect, with our HTTP limits, address pin, log hooks
and stderr capture."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx2
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from ..address_pin import AddressPin
from ..oauth.dpop import DpopKey, DpopTransport
from ..server_spec import ServerSpec, Transport
from . import _stdio_launcher as stdio_launcher
from ._http_stream_watch import OnBreak, StreamBreakWatch
from ._redaction import mask_secrets, redact_env, redact_headers, secret_values

_logger = logging.getLogger(__name__)

# One pooled session carries the calls of every turn of the process: httpx's default of 20 idle
# connections would close (and later reopen) the rest whenever more calls than that overlap. An
# idle connection is dropped after 1 s, well before servers close theirs (uvicorn and node 5 s,
# gunicorn 2 s): with httpx's default of 5 s, a call could go out on a connection the server was
# closing at that moment, and fail.
HTTP_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=100, keepalive_expiry=1.0)
MIB = 1024 * 1024
# What of a stdio server's standard error is shown with its failure: enough lines for a stack
# trace (Node's or Python's), and no more than a form and a log line should carry.
STDERR_TAIL_LINES = 40
STDERR_TAIL_BYTES = 6000


def stderr_tail(lines: Iterable[str]) -> str:
    """The last lines of `lines`, at most STDERR_TAIL_LINES and STDERR_TAIL_BYTES (UTF-8) joined;
    a last line longer than that keeps its end."""
    kept: list[str] = []
    size = 0
    for line in reversed(list(lines)[-STDERR_TAIL_LINES:]):
        encoded = line.encode()
        if size + len(encoded) + 1 > STDERR_TAIL_BYTES:
            if not kept:
                kept.append("…" + encoded[-(STDERR_TAIL_BYTES - 4) :].decode(errors="ignore"))
            break
        kept.append(line)
        size += len(encoded) + 1
    return "\n".join(reversed(kept))


class McpTransport:
    """How one session reaches its server. `stderr` receives a stdio server's output lines, and
    `stderr_closed` is set once they are all read;
    `on_answer_lost(request_id, error)` is told when a streamed HTTP answer broke; `on_response`
    sees every HTTP response (an error status, an OAuth server's 401/403); `pin` sends a
    user-given URL's requests to the address that was checked."""

    def __init__(
        self,
        spec: ServerSpec,
        stderr: deque[str],
        stderr_closed: asyncio.Event,
        on_answer_lost: OnBreak,
        on_response: Callable[[httpx2.Response], Awaitable[None]] | None = None,
        pin: AddressPin | None = None,
    ) -> None:
        self.spec = spec
        self.stderr = stderr
        self.stderr_closed = stderr_closed
        self.on_answer_lost = on_answer_lost
        self.on_response = on_response
        self.pin = pin

    def open(self, stack: contextlib.AsyncExitStack) -> AbstractAsyncContextManager[tuple[Any, ...]]:
        """The SDK transport's context, its cleanups pushed on `stack`; entered by the session's task."""
        if self.spec.transport is Transport.STDIO:
            return self._stdio(stack)
        headers = self.spec.http_headers()
        if _logger.isEnabledFor(logging.DEBUG):
            _logger.debug("MCP connect: server=%s headers=%s", self.spec.label(), redact_headers(headers, self.spec))
        if self.spec.transport is Transport.SSE:
            return sse_client(
                self.spec.url or "",
                headers=headers,
                timeout=self.spec.connect_timeout,
                httpx_client_factory=self._http_client_factory,
            )
        watched = StreamBreakWatch(httpx2.AsyncHTTPTransport(limits=HTTP_LIMITS), self.on_answer_lost)
        client = self._http_client_factory(headers=headers, transport=watched)
        stack.push_async_callback(client.aclose)
        return streamable_http_client(self.spec.url or "", http_client=client)

    def _http_client_factory(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> httpx2.AsyncClient:
        # the same client mcp's create_mcp_http_client makes, plus our transport and log hooks
        if self.spec.dpop_key is not None:
            # under the hooks: they see the answer to the request as proven, a nonce retry done
            transport = DpopTransport(
                DpopKey(self.spec.dpop_key.get_secret_value()), transport or httpx2.AsyncHTTPTransport()
            )
        client = httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(self.spec.connect_timeout, read=300),
            auth=auth,
            transport=transport,
        )
        if self.pin is not None:
            client.event_hooks["request"].append(self.pin)
        if self.on_response is not None:
            client.event_hooks["response"].append(self.on_response)
        if _logger.isEnabledFor(logging.DEBUG):
            client.event_hooks["request"].append(self._log_request)
            client.event_hooks["response"].append(self._log_response)
        return client

    async def _log_request(self, request: httpx2.Request) -> None:
        body = request.content[:2000].decode(errors="replace") if request.content else ""
        _logger.debug(
            "MCP -> server=%s %s %s headers=%s body=%s",
            self.spec.name,
            request.method,
            request.url,
            redact_headers(dict(request.headers), self.spec),
            body,
        )

    async def _log_response(self, response: httpx2.Response) -> None:
        _logger.debug(
            "MCP <- server=%s status=%s content-type=%s",
            self.spec.name,
            response.status_code,
            response.headers.get("content-type"),
        )

    @contextlib.asynccontextmanager
    async def _stdio(self, stack: contextlib.AsyncExitStack):  # type: ignore[no-untyped-def]
        env = self.spec.process_env()
        env.setdefault("PATH", os.environ.get("PATH", os.defpath))
        env[stdio_launcher.KEEP_VAR] = json.dumps(sorted(env))
        env.pop(stdio_launcher.MEMORY_VAR, None)
        if self.spec.memory_limit_mb:
            env[stdio_launcher.MEMORY_VAR] = str(self.spec.memory_limit_mb * MIB)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", stdio_launcher.__file__, self.spec.command or "", *self.spec.args],
            env=env,
            cwd=self.spec.cwd or None,
        )
        _logger.debug(
            "MCP spawn: server=%s command=%s args=%s env=%s",
            self.spec.name,
            self.spec.command,
            list(self.spec.args),
            redact_env(self.spec.process_env()),
        )
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w")
        reader = asyncio.create_task(self._collect_stderr(read_fd))
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                errlog.close()  # the child holds its own copy; ours would keep the pipe from ending
                yield streams
        finally:
            if not errlog.closed:
                errlog.close()
            with anyio.move_on_after(1, shield=True):
                await asyncio.wait([reader])
            reader.cancel()

    async def _collect_stderr(self, read_fd: int) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb")
        )
        # masked as it is read: the lines reach the admin's form, the log and the errors raised
        secrets = secret_values(self.spec)
        try:
            while line := await reader.readline():
                text = mask_secrets(line.decode(errors="replace").rstrip(), secrets)
                self.stderr.append(text)
                _logger.debug("MCP stderr: server=%s %s", self.spec.name, text)
        finally:
            transport.close()
            self.stderr_closed.set()
