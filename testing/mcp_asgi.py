"""How the test MCP server is served: one protocol era only on a pair of streams or on streamable
HTTP (`--era`), and the ASGI wrappers (a bearer token guard, a broken server's garbled answer).
"""

import json
from typing import Any

from mcp import types

from .mcp_sdk import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, MCPServer, _serve_modern_stream, serve_loop


def bearer_guard(app: Any, token: str, forbidden: str = "") -> Any:
    """401 for a missing or unknown token; 403 for `forbidden`, a token the server knows but
    refuses (revoked, or without the rights to this endpoint)."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            sent = headers.get(b"authorization", b"").decode()
            if sent != f"Bearer {token}":
                status, body = (
                    (403, b"forbidden") if forbidden and sent == f"Bearer {forbidden}" else (401, b"unauthorized")
                )
                await send(
                    {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]}
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI request, for a middleware that looks at it before the app does."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def replay(body: bytes, receive: Any) -> Any:
    """An ASGI `receive` that hands the app the body read beforehand."""
    replayed = False

    async def replaying() -> dict[str, Any]:
        nonlocal replayed
        if replayed:
            return await receive()  # later reads wait for the disconnect, as the app expects
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replaying


def garbler(app: Any) -> Any:
    """Answers a tools/call of `garble` with a body that is not JSON-RPC, as a broken server would."""

    async def garbling(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = await read_body(receive)
        if b'"name":"garble"' in body.replace(b" ", b""):
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": b"{this is not json-rpc"})
            return
        await app(scope, replay(body, receive), send)

    return garbling


def serve_era_on_streams(mcp: MCPServer, era: str) -> None:
    """Make the server's entry for a pair of streams (stdio, and each SSE connection) serve `era`.

    MCPServer hands every such pair to its low-level server's `run`, which serves both eras (the
    client's first request decides); mcp 2.3 has no switch for one era only, so this instance's
    `run` is replaced by one that drives the loop of the era asked for."""
    if era == "dual":
        return
    lowlevel = mcp._lowlevel_server

    async def run(read_stream: Any, write_stream: Any, initialization_options: Any, raise_exceptions: bool = False):
        async with lowlevel.lifespan(lowlevel) as state:
            try:
                if era == "modern":
                    # the 2026-07-28 loop, without the sniffing that would let an `initialize` in
                    # (private API: mcp 2.3 exports no modern-only loop)
                    await _serve_modern_stream(
                        lowlevel, read_stream, write_stream, lifespan_state=state, raise_exceptions=raise_exceptions
                    )
                else:
                    # the handshake loop: `server/discover` is not a method of those revisions, and
                    # is answered "Method not found" as a 2025 server answers it
                    await serve_loop(
                        lowlevel,
                        read_stream,
                        write_stream,
                        lifespan_state=state,
                        init_options=initialization_options,
                        raise_exceptions=raise_exceptions,
                    )
            finally:
                await write_stream.aclose()

    lowlevel.run = run  # type: ignore[method-assign]


async def _json_error(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def header(scope: dict[str, Any], name: bytes) -> str | None:
    """The value of the request header `name` (lower case), or None."""
    return next((value.decode("latin-1") for key, value in scope["headers"] if key.lower() == name), None)


def modern_only_asgi(app: Any) -> Any:
    """Streamable HTTP at 2026-07-28 only. A POST without a 2026 MCP-Protocol-Version header (an
    `initialize`, a client of 2025) gets HTTP 400 and the JSON-RPC error -32022 naming the
    versions served; GET and DELETE (the 2025 standalone stream and session end) get 405. The rest
    reaches the SDK's entry for 2026 requests."""

    async def modern_only(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        requested = header(scope, b"mcp-protocol-version")
        if requested in MODERN_PROTOCOL_VERSIONS:
            await app(scope, receive, send)
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            request_id = json.loads(await read_body(receive)).get("id")
        except (ValueError, AttributeError):
            request_id = None
        await _json_error(
            send,
            400,
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {
                    "code": types.UNSUPPORTED_PROTOCOL_VERSION,
                    "message": "this server speaks MCP 2026-07-28 only",
                    "data": {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested},
                },
            },
        )

    return modern_only


def legacy_only_asgi(app: Any) -> Any:
    """Streamable HTTP of the handshake era only, as a 2025-11-25 server serves it: a request whose
    MCP-Protocol-Version header names a revision it does not know (the `server/discover` probe of
    a 2026 client) gets HTTP 400 and JSON-RPC -32600, in mcp 1.x's words, so the client falls back
    to `initialize`."""

    async def legacy_only(scope: dict[str, Any], receive: Any, send: Any) -> None:
        requested = header(scope, b"mcp-protocol-version") if scope["type"] == "http" else None
        if requested is None or requested in HANDSHAKE_PROTOCOL_VERSIONS:
            await app(scope, receive, send)
            return
        supported = ", ".join(HANDSHAKE_PROTOCOL_VERSIONS)
        message = f"Bad Request: Unsupported protocol version: {requested}. Supported versions: {supported}"
        await _json_error(
            send, 400, {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": message}}
        )

    return legacy_only
