"""The POSTs of a streamable-HTTP session: failures noticed, finished streams reused.

The SDK reads a tools/call answer from the POST's SSE stream; when that stream dies (the server
crashed, a proxy cut it) or the POST cannot be sent at all, the SDK fails the request. This httpx2
transport wrapper sees the break too and tells the session which JSON-RPC request lost its
answer and how, which the SDK's generic error does not say: the session logs it and is rebuilt.

The SDK also closes a call's stream as soon as the answer is read, a moment before the server's
end of stream arrives; httpx2 then drops the connection instead of pooling it, and every call pays
a new TCP (and TLS) handshake. The wrapper reads what is left of a closed stream for a short while
first, which is what lets httpx2 keep the connection.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import anyio
import httpx2

# how long a stream the SDK closes may take to end (the server ends it right after the answer);
# past this the connection is dropped as before
DRAIN_SECONDS = 0.25
DRAIN_BYTES = 64 * 1024

# told which JSON-RPC request lost its answer, and how
OnBreak = Callable[[int | str, httpx2.TransportError], None]


class StreamBreakWatch(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, on_break: OnBreak) -> None:
        self._inner = inner
        self._on_break = on_break

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request_id = _jsonrpc_request_id(request)
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if request_id is not None:
                self._on_break(request_id, exc)
            raise
        if request_id is not None and isinstance(response.stream, httpx2.AsyncByteStream):
            response.stream = _WatchedStream(response.stream, lambda exc: self._on_break(request_id, exc))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, on_break: Callable[[httpx2.TransportError], None]) -> None:
        self._inner = inner
        self._on_break = on_break
        self._chunks: AsyncIterator[bytes] | None = None
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self._chunks = self._inner.__aiter__()
        try:
            async for chunk in self._chunks:
                yield chunk
        except httpx2.TransportError as exc:
            self._on_break(exc)
            raise
        self._ended = True

    async def aclose(self) -> None:
        try:
            if self._chunks is not None and not self._ended:
                await self._drain(self._chunks)
        finally:
            await self._inner.aclose()

    @staticmethod
    async def _drain(chunks: AsyncIterator[bytes]) -> None:
        read = 0
        with anyio.move_on_after(DRAIN_SECONDS):
            try:
                async for chunk in chunks:
                    read += len(chunk)
                    if read > DRAIN_BYTES:
                        return
            except httpx2.TransportError:
                return


def _jsonrpc_request_id(request: httpx2.Request) -> int | str | None:
    if request.method != "POST":
        return None
    try:
        content = request.content
    except httpx2.RequestNotRead:
        return None  # a streamed body: the SDK sends a POST again so after a redirect
    if not content:
        return None
    try:
        message = json.loads(content)
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
    return request_id if isinstance(request_id, (int, str)) else None
