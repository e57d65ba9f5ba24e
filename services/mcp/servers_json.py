"""Import of the `mcpServers` JSON that Claude Desktop, Cline and Claude Code share.

Each entry is read on its own: one that cannot be imported gets an error naming the entry and the
field, and the others still come through.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ConfigError
from ..server_spec import AuthType, ServerSpec, Transport, build_server_spec

# Every spelling of the transport seen in those clients' files.
_TRANSPORTS = {
    "stdio": Transport.STDIO,
    "sse": Transport.SSE,
    "http": Transport.STREAMABLE_HTTP,
    "streamablehttp": Transport.STREAMABLE_HTTP,
    "streamable-http": Transport.STREAMABLE_HTTP,
    "streamable_http": Transport.STREAMABLE_HTTP,
}
_KNOWN_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "disabled",
    "timeout",
    "alwaysAllow",
    "autoApprove",
    "url",
    "type",
    "transportType",
    "headers",
}


class ImportedServer(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    spec: ServerSpec | None = None
    disabled: bool = False
    always_allow: tuple[str, ...] = ()
    ignored_keys: tuple[str, ...] = ()
    error: str | None = None


def import_mcp_servers(text: str) -> list[ImportedServer]:
    """Parse a pasted config; raises ConfigError only when the whole text is unusable."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "mcpServers", f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(
            "mcpServers", 'must be an object of servers, e.g. {"mcpServers": {"files": {"command": "npx"}}}'
        )
    return [_import_entry(name, entry) for name, entry in servers.items()]


def _import_entry(name: str, entry: Any) -> ImportedServer:
    if not isinstance(entry, dict):
        return ImportedServer(name=name, error=f"{name}: must be an object with a command or a url")
    try:
        spec = build_server_spec(**_spec_fields(name, entry))
    except ConfigError as exc:
        return ImportedServer(name=name, error=f"{name}: {exc.message}")
    allowed = entry.get("alwaysAllow", entry.get("autoApprove", []))
    return ImportedServer(
        name=name,
        spec=spec,
        disabled=bool(entry.get("disabled", False)),
        always_allow=tuple(str(tool) for tool in allowed) if isinstance(allowed, list) else (),
        ignored_keys=tuple(sorted(set(entry) - _KNOWN_KEYS)),
    )


def _spec_fields(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    transport = _transport(entry)
    fields: dict[str, Any] = {"key": name, "name": name, "transport": transport}
    if "timeout" in entry:
        fields["call_timeout"] = _number(entry["timeout"], "timeout")
    if transport is Transport.STDIO:
        fields["command"] = entry.get("command")
        fields["args"] = tuple(_strings(entry.get("args", []), "args"))
        fields["env"] = _string_map(entry.get("env", {}), "env")
        fields["cwd"] = entry.get("cwd")
        return fields
    fields["url"] = entry.get("url")
    headers = _string_map(entry.get("headers", {}), "headers")
    auth = next((k for k in headers if k.lower() == "authorization"), None)
    if auth and headers[auth].lower().startswith("bearer "):
        fields["auth_type"] = AuthType.BEARER
        fields["token"] = headers.pop(auth)[len("bearer ") :].strip()
    elif headers:
        fields["auth_type"] = AuthType.HEADERS
    fields["headers"] = headers
    return fields


def _transport(entry: dict[str, Any]) -> Transport:
    declared = entry.get("type", entry.get("transportType"))
    if declared is not None:
        transport = _TRANSPORTS.get(str(declared).lower())
        if transport is None:
            raise ConfigError("type", f"{declared!r} is not a transport; use stdio, sse or streamableHttp")
        return transport
    if "command" in entry:
        return Transport.STDIO
    if "url" in entry:
        # Clients that predate streamable HTTP wrote SSE servers as a bare url ending in /sse.
        return Transport.SSE if str(entry["url"]).rstrip("/").endswith("/sse") else Transport.STREAMABLE_HTTP
    raise ConfigError("command", "is required (or a url): give the command that starts the server, or the server's URL")


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(field, f"must be a number of seconds (got {value!r})")
    return float(value)


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(field, 'must be a list of strings, e.g. ["-y", "server"]')
    return value


def _string_map(value: Any, field: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(field, 'must be an object of strings, e.g. {"KEY": "value"}')
    return dict(value)
