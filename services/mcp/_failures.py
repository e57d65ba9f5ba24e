"""Turns what the MCP SDK, httpx2 and the OS raise into McpError codes a user can act on."""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
from mcp import MCPError as SdkMcpError
from mcp import types as mcp_types
from pydantic import ValidationError

from ..errors import ErrorCode, McpError

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

# the SDK answers pending requests with this when the transport closes
CONNECTION_CLOSED = mcp_types.CONNECTION_CLOSED
# the SDK's streamable HTTP client reports a 404 on a known session id as "Session terminated"
# with this code, and a 404 before any session as METHOD_NOT_FOUND "Not Found"
SESSION_GONE = mcp_types.INVALID_REQUEST
SESSION_TERMINATED_MESSAGE = "session terminated"
REQUEST_TIMEOUT = mcp_types.REQUEST_TIMEOUT
# what the SDK's streamable HTTP client says of any other HTTP error status: the status itself is
# kept by the session (mcp_session.py), which maps it with from_http_status
HTTP_ERROR_MESSAGE = "server returned an error response"
# a 2026-07-28-only server refusing the handshake, or a client needing a capability we lack
UNSUPPORTED_PROTOCOL_VERSION = mcp_types.UNSUPPORTED_PROTOCOL_VERSION
MISSING_REQUIRED_CLIENT_CAPABILITY = mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY


def is_lost_connection(exc: SdkMcpError) -> bool:
    """The session is gone: its transport closed, or the server forgot it."""
    return exc.code == CONNECTION_CLOSED or (
        exc.code == SESSION_GONE and exc.message.lower() == SESSION_TERMINATED_MESSAGE
    )


def is_not_found(exc: SdkMcpError) -> bool:
    """The SDK's spelling of an HTTP 404 before any session."""
    return exc.code == mcp_types.METHOD_NOT_FOUND and exc.message == "Not Found"


def is_http_error(exc: SdkMcpError) -> bool:
    """The SDK's stand-in for an HTTP error status it did not read further."""
    return exc.code == mcp_types.INTERNAL_ERROR and exc.message.lower() == HTTP_ERROR_MESSAGE


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The real causes inside anyio's exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaf_exceptions(sub)]
    return [exc]


def map_exception(exc: BaseException, server: str) -> McpError:
    if isinstance(exc, McpError):
        return exc
    leaves = [leaf for leaf in leaf_exceptions(exc) if not isinstance(leaf, anyio.get_cancelled_exc_class())]
    for leaf in leaves or [exc]:
        mapped = _map_leaf(leaf, server)
        if mapped is not None:
            return mapped
    return McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{server}: unexpected failure: {_describe(exc)}")


def _map_leaf(exc: BaseException, server: str) -> McpError | None:
    if isinstance(exc, McpError):
        return exc
    if isinstance(exc, httpx2.HTTPStatusError):
        return from_http_status(exc.response.status_code, server)
    if isinstance(exc, (httpx2.TimeoutException, TimeoutError)):
        return McpError(ErrorCode.MCP_TIMEOUT, f"{server} did not answer in time.")
    if isinstance(exc, httpx2.ConnectError):
        return McpError(
            ErrorCode.MCP_UNREACHABLE,
            f"Cannot connect to {server}: {_describe(exc)}. Check the URL and that the server runs.",
        )
    if isinstance(
        exc, (httpx2.TransportError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
    ):
        return McpError(ErrorCode.MCP_UNREACHABLE, f"The connection to {server} was lost: {_describe(exc)}.")
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return McpError(ErrorCode.MCP_UNREACHABLE, f"Cannot start {server}: {_describe(exc)}. Check the command.")
    if isinstance(exc, SdkMcpError):
        return map_jsonrpc_error(exc.error, server)
    if isinstance(exc, ValidationError):
        return invalid_answer(exc, server)
    if isinstance(exc, json.JSONDecodeError):
        return McpError(ErrorCode.MCP_PARSE_ERROR, f"{server} sent a message that is not valid MCP: {_describe(exc)}")
    if isinstance(exc, OSError):
        return McpError(ErrorCode.MCP_UNREACHABLE, f"{server}: {_describe(exc)}")
    return None


def invalid_answer(exc: ValidationError, server: str) -> McpError:
    """An answer the SDK refused as breaking the protocol revision agreed: where, and what."""
    first = exc.errors()[0] if exc.errors() else None
    if first is None:
        return McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{server} sent an answer that is not valid MCP.")
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    return McpError(
        ErrorCode.MCP_PROTOCOL_ERROR,
        f"{server} sent an answer that is not valid MCP: {where}: {first['msg']} "
        f"(it is {first.get('input')!r}). The server has to be fixed; ask its maintainers.",
    )


def from_http_status(status: int, server: str) -> McpError:
    if status in (401, 403):
        return McpError(
            ErrorCode.MCP_AUTH_FAILED,
            f"{server} refused the credentials (HTTP {status}). Check the token, API key or headers.",
        )
    if status in (404, 405):
        return McpError(
            ErrorCode.MCP_PROTOCOL_ERROR,
            f"{server} has no MCP endpoint at this URL (HTTP {status}). "
            "Check the path (often /mcp or /sse) and the transport.",
        )
    if status == 408 or status == 504:
        return McpError(ErrorCode.MCP_TIMEOUT, f"{server} timed out (HTTP {status}).")
    return McpError(ErrorCode.MCP_UNREACHABLE, f"{server} answered HTTP {status}. Check the server's health.")


def map_jsonrpc_error(error: mcp_types.ErrorData, server: str) -> McpError:
    code = error.code
    if code == REQUEST_TIMEOUT:
        return McpError(ErrorCode.MCP_TIMEOUT, f"{server} did not answer in time; the request was cancelled.")
    if code == CONNECTION_CLOSED or (code == SESSION_GONE and error.message.lower() == SESSION_TERMINATED_MESSAGE):
        return McpError(ErrorCode.MCP_UNREACHABLE, f"The connection to {server} was lost ({error.message}).")
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        return McpError(
            ErrorCode.MCP_PROTOCOL_ERROR,
            f"{server} speaks no MCP revision this client knows ({error.message}). "
            "Check that it is an MCP server, and the server's documentation for the revisions it supports.",
        )
    if code == MISSING_REQUIRED_CLIENT_CAPABILITY:
        return McpError(
            ErrorCode.MCP_PROTOCOL_ERROR, f"{server} needs a client feature Odoo does not offer: {error.message}"
        )
    if code == mcp_types.METHOD_NOT_FOUND:
        return McpError(ErrorCode.MCP_TOOL_NOT_FOUND, f"{server}: {error.message}")
    if code == mcp_types.INVALID_PARAMS:
        return McpError(ErrorCode.MCP_INVALID_PARAMS, f"{server}: {error.message}")
    if code == mcp_types.PARSE_ERROR:
        reason = (error.message.splitlines() or ["parse error"])[0][:200]
        return McpError(ErrorCode.MCP_PARSE_ERROR, f"{server}'s answer is not valid JSON-RPC ({reason}).")
    if code == mcp_types.INVALID_REQUEST:
        return McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{server}: {error.message}")
    return McpError(ErrorCode.MCP_EXECUTION_ERROR, f"{server}: {error.message}")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
