"""The mcpServers JSON of Claude Desktop and Cline: import and per-entry errors."""

from __future__ import annotations

import json

import pytest

from services.errors import ConfigError
from services.mcp import import_mcp_servers
from services.server_spec import AuthType, Transport

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"DEBUG": "1"},
            "alwaysAllow": ["read_file"],
            "timeout": 60,
        },
        "github": {
            "type": "streamableHttp",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ghp_x", "X-Org": "acme"},
        },
        "legacy": {"url": "https://old.example.com/sse", "autoApprove": ["list"], "disabled": True},
        "no-target": {"args": ["x"]},
        "bad-url": {"url": "ftp://example.com/mcp"},
        "bad-timeout": {"command": "x", "timeout": "soon"},
        "bad-type": {"type": "pigeon", "url": "https://a/mcp"},
        "not-an-object": "npx server",
    }
}


def _by_name(text: str) -> dict:
    return {entry.name: entry for entry in import_mcp_servers(text)}


def test_import_reads_every_supported_field() -> None:
    entries = _by_name(json.dumps(CLAUDE_DESKTOP))
    fs = entries["filesystem"]
    assert fs.error is None and fs.spec is not None
    assert fs.spec.transport is Transport.STDIO
    assert fs.spec.command == "npx" and fs.spec.args[-1] == "/tmp"
    assert fs.spec.process_env() == {"DEBUG": "1"}
    assert fs.spec.call_timeout == 60
    assert fs.always_allow == ("read_file",)
    gh = entries["github"].spec
    assert gh.transport is Transport.STREAMABLE_HTTP and gh.auth_type is AuthType.BEARER
    assert gh.http_headers() == {"X-Org": "acme", "Authorization": "Bearer ghp_x"}
    legacy = entries["legacy"]
    assert legacy.spec.transport is Transport.SSE and legacy.disabled and legacy.always_allow == ("list",)


def test_each_bad_entry_gets_its_own_error_and_the_rest_import() -> None:
    entries = _by_name(json.dumps(CLAUDE_DESKTOP))
    assert "command: is required (or a url)" in entries["no-target"].error
    assert entries["bad-url"].error.startswith("bad-url: url: The address must start with http:// or https://")
    assert "timeout: must be a number of seconds" in entries["bad-timeout"].error
    assert "'pigeon' is not a transport" in entries["bad-type"].error
    assert "must be an object" in entries["not-an-object"].error
    assert sum(1 for e in entries.values() if e.error is None) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{oops", "is not valid JSON"),
        ('{"servers": []}', "must be an object of servers"),
        ("[]", "must be an object of servers"),
    ],
)
def test_unusable_text_is_refused_whole(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        import_mcp_servers(text)
    assert expected in info.value.message
