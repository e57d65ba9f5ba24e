"""Compatibility across SDKs and protocol eras: our hub against real servers of each generation.

- servers of the early revisions (testing/mcp_old_server.py on the mcp release that first served
  each, from testing/mcp_old_venv.py's venvs): mcp 1.2 for 2024-11-05 over stdio and SSE (it has
  no streamable HTTP), mcp 1.9 for 2025-03-26 and mcp 1.10 for 2025-06-18 over stdio and
  streamable HTTP; the hub must agree on exactly that revision. What the client cannot do with
  them took fixing: mcp <= 1.8 ends its session on the `server/discover` probe (the hub connects
  again with the handshake), mcp 1.8-1.11 redirects POST /mcp to /mcp/, and a cancel ends the
  session of mcp 1.2 and 1.9-1.10 (the hub pings after a cancelled call and reconnects);
- mcp 1.30 servers (testing/mcp_servers.py run from testing/mcp1_venv.py's venv), which know only
  the `initialize` handshake: the hub must fall back to it and agree on 2025-11-25, over stdio, SSE
  and streamable HTTP;
- mcp 2.3 servers (the same script in the test venv) in each `--era`: dual (the SDK's default, a
  client that probes gets 2026-07-28), modern (2026-07-28 only, the handshake refused) and legacy
  (answers the probe as a 2025 server does, so 2025-11-25), over stdio and streamable HTTP, and dual
  over SSE, which mcp 2.3 still serves;
- a FastMCP 4 server (testing/fastmcp4_server.py, its own venv), over stdio and streamable HTTP.

Each must agree on the expected revision, answer calls with text and (but the early servers)
structured results, report progress, and survive a timed-out call. The venvs are built once from
PyPI; without it, the tests that need them skip.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version as installed_version

import httpx2
import pytest
from conftest import FAST_RETRY, http_spec

from services.errors import ErrorCode, McpError
from services.events import ToolProgressEvent
from services.mcp import CallObserver, McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_result import StructuredPart
from testing import fastmcp4_venv, mcp1_venv, mcp_old_venv
from testing.mcp_servers import HERE, HttpServer

HANDSHAKE = "2025-11-25"
# the servers whose SDK ends the session when a call is cancelled (case ids start so)
ENDS_SESSION_ON_CANCEL = ("mcp1.2.", "mcp1.9.", "mcp1.10.")
MODERN = "2026-07-28"


@dataclass(frozen=True)
class Case:
    sdk: str  # mcp1 | mcp2 | fastmcp4 | old (the early release of `revision`, OLD_SDKS)
    transport: str  # stdio | sse | streamable-http
    revision: str  # what the hub and the server must agree on
    era: str = ""  # testing/mcp_servers.py's --era, on mcp 2.x


CASES = {
    "mcp1.2.1-stdio": Case("old", "stdio", "2024-11-05"),
    "mcp1.2.1-sse": Case("old", "sse", "2024-11-05"),
    "mcp1.9.4-stdio": Case("old", "stdio", "2025-03-26"),
    "mcp1.9.4-http": Case("old", "streamable-http", "2025-03-26"),
    "mcp1.10.1-stdio": Case("old", "stdio", "2025-06-18"),
    "mcp1.10.1-http": Case("old", "streamable-http", "2025-06-18"),
    "mcp1.30-stdio": Case("mcp1", "stdio", HANDSHAKE),
    "mcp1.30-sse": Case("mcp1", "sse", HANDSHAKE),
    "mcp1.30-http": Case("mcp1", "streamable-http", HANDSHAKE),
    "mcp2.3-dual-stdio": Case("mcp2", "stdio", MODERN, "dual"),
    "mcp2.3-dual-sse": Case("mcp2", "sse", MODERN, "dual"),
    "mcp2.3-dual-http": Case("mcp2", "streamable-http", MODERN, "dual"),
    "mcp2.3-modern-stdio": Case("mcp2", "stdio", MODERN, "modern"),
    "mcp2.3-modern-http": Case("mcp2", "streamable-http", MODERN, "modern"),
    "mcp2.3-legacy-stdio": Case("mcp2", "stdio", HANDSHAKE, "legacy"),
    "mcp2.3-legacy-http": Case("mcp2", "streamable-http", HANDSHAKE, "legacy"),
    "fastmcp4-stdio": Case("fastmcp4", "stdio", MODERN),
    "fastmcp4-http": Case("fastmcp4", "streamable-http", MODERN),
}


def program(case: Case) -> tuple[str, ...]:
    """The command that runs the server of `case`, without its arguments; skips when its venv cannot be built."""
    try:
        if case.sdk == "mcp1":
            return mcp1_venv.mcp1_program()
        if case.sdk == "fastmcp4":
            return fastmcp4_venv.fastmcp4_program()
        if case.sdk == "old":
            return mcp_old_venv.old_program(case.revision)
    except mcp1_venv.Unavailable as exc:
        pytest.skip(f"no {sdk_name(case)} venv: {exc}")
    return (sys.executable, str(HERE))


def sdk_name(case: Case) -> str:
    return f"mcp {mcp_old_venv.OLD_SDKS[case.revision].version}" if case.sdk == "old" else case.sdk


def server_args(case: Case) -> tuple[str, ...]:
    if case.sdk in ("fastmcp4", "old"):
        return ()
    return ("--notifying", *(("--era", case.era) if case.era else ()))


def expected_server(case: Case) -> tuple[str, str]:
    if case.sdk == "fastmcp4":
        return ("fastmcp4-server", "4.0.0-test")
    if case.sdk == "old":
        return ("old-server", mcp_old_venv.OLD_SDKS[case.revision].version)
    return ("test-server", mcp1_venv.MCP1_VERSION if case.sdk == "mcp1" else installed_version("mcp"))


@pytest.fixture(scope="module")
def http_servers() -> Iterator[dict[str, HttpServer]]:
    """The module's HTTP servers, started on first use by `served` and stopped at the end."""
    servers: dict[str, HttpServer] = {}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def served(http_servers: dict[str, HttpServer], case_id: str) -> HttpServer:
    case = CASES[case_id]
    if case_id not in http_servers:
        http_servers[case_id] = HttpServer(case.transport, *server_args(case), program=program(case)).start()
    return http_servers[case_id]


@pytest.fixture(params=list(CASES))
def case_id(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def spec(case_id: str, http_servers: dict[str, HttpServer]) -> ServerSpec:
    case = CASES[case_id]
    if case.transport != "stdio":
        return http_spec(served(http_servers, case_id), key=case_id)
    command, *args = program(case)
    return build_server_spec(
        key=case_id,
        name=case_id,
        transport="stdio",
        command=command,
        args=(*args, "--transport", "stdio", *server_args(case)),
        retry=FAST_RETRY,
    )


def test_the_revision_agreed(hub: McpHub, case_id: str, spec: ServerSpec) -> None:
    case = CASES[case_id]
    report = hub.run(hub.atest_connection(spec))
    assert report.server.protocol_version == case.revision
    assert report.server.stateless is (case.revision == MODERN)
    assert (report.server.name, report.server.version) == expected_server(case)
    assert "tools" in report.server.capabilities
    assert {"echo", "add", "fail", "progress", "slow"} <= {tool.name for tool in report.tools}


def test_tools_answer(hub: McpHub, spec: ServerSpec) -> None:
    echo = hub.run(hub.acall_tool(spec, "echo", {"text": "héllo, every era"}))
    assert not echo.is_error and echo.text_for_model() == "héllo, every era"
    add = hub.run(hub.acall_tool(spec, "add", {"a": 2, "b": 40}))
    assert not add.is_error and add.text_for_model() == "42.0"
    failed = hub.run(hub.acall_tool(spec, "fail", {"reason": "disk full"}))
    assert failed.is_error and "the tool failed: disk full" in failed.text_for_model()


@pytest.mark.parametrize("case_id", [case_id for case_id, case in CASES.items() if case.sdk != "old"])
def test_structured_results(hub: McpHub, spec: ServerSpec) -> None:
    tools = {tool.name: tool for tool in hub.run(hub.alist_tools(spec)).tools}
    schema = tools["weather"].output_schema
    assert schema and set(schema["properties"]) == {"city", "celsius"}
    result = hub.run(hub.acall_tool(spec, "weather", {"city": "Oslo"}))
    assert not result.is_error
    structured = [part.data for part in result.parts if isinstance(part, StructuredPart)]
    assert structured == [{"city": "Oslo", "celsius": 21.5}]


def test_progress_reaches_the_call(hub: McpHub, case_id: str, spec: ServerSpec) -> None:
    events: list[ToolProgressEvent] = []
    observer = CallObserver("c", events.append)
    result = hub.run(hub.acall_tool(spec, "progress", {"steps": 3, "seconds": 0.3}, observer=observer), timeout=30)
    assert result.text_for_model() == "3 steps done"
    assert observer.received == 3
    last = max(events, key=lambda event: event.progress)
    # a progress message came with 2025-03-26; the early servers keep to what mcp 1.2 offers
    message = None if CASES[case_id].sdk == "old" else "step 3 of 3"
    assert (last.progress, last.total, last.message) == (3, 3, message)


def test_a_timed_out_call_then_a_working_one(hub: McpHub, spec: ServerSpec) -> None:
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(spec, "slow", {"seconds": 5}, timeout=0.5))
    assert info.value.code is ErrorCode.MCP_TIMEOUT
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "still here"})).text_for_model() == "still here"
    # servers of mcp 1.2, 1.9 and 1.10 end their session on a cancel: the hub's ping after the
    # cancelled call finds out, and the working call goes on a new session
    assert hub.pool.opened == (2 if spec.key.startswith(ENDS_SESSION_ON_CANCEL) else 1)


# -- the eras are real: what each server answers a client of the other era -------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
# what a 2026-07-28 client sends with its probe
PROBE_HEADERS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}


def post(url: str, body: dict, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=body, headers={**ACCEPT, **headers}, timeout=10)


def test_a_modern_only_server_refuses_the_handshake(http_servers: dict[str, HttpServer]) -> None:
    server = served(http_servers, "mcp2.3-modern-http")
    answer = post(server.url, INITIALIZE)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": [MODERN], "requested": None}
    assert httpx2.get(server.url, headers=ACCEPT, timeout=10).status_code == 405
    assert post(server.url, DISCOVER, **PROBE_HEADERS).json()["result"]["supportedVersions"] == [MODERN]


@pytest.mark.parametrize("case_id", ["mcp2.3-legacy-http", "mcp1.30-http"])
def test_a_legacy_server_turns_the_probe_down(http_servers: dict[str, HttpServer], case_id: str) -> None:
    """A 2026 probe gets a 400 from the handshake-only 2.3 server, as from a genuine 1.30 one."""
    server = served(http_servers, case_id)
    answer = post(server.url, DISCOVER, **PROBE_HEADERS)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == -32600
    with contextlib.closing(httpx2.Client(timeout=10)) as http:
        assert http.post(server.url, json=INITIALIZE, headers=ACCEPT).status_code == 200
