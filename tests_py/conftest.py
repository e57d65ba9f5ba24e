"""Fixtures: real FastMCP servers on 127.0.0.1 and a hub per test."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.mcp import McpHub  # noqa: E402
from services.server_spec import RetryPolicy, ServerSpec, build_server_spec  # noqa: E402
from testing.mcp_servers import HttpServer, serve_http, server_argv  # noqa: E402
from testing.scripted_llm import ScriptedLLM  # noqa: E402

FAST_RETRY = RetryPolicy(attempts=3, initial_delay=0.05, max_delay=0.2)


@pytest.fixture
def hub() -> Iterator[McpHub]:
    hub = McpHub()
    yield hub
    hub.shutdown()


class ManualClock:
    """A monotonic clock that moves only when a test says: calls and turns timed with it never
    time out by themselves, however slow the machine."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = 1000.0

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def clocked_hub(clock: ManualClock) -> Iterator[McpHub]:
    """A hub timing calls and turns with `clock`, read every 20 ms."""
    hub = McpHub(now=clock, clock_tick=0.02)
    yield hub
    hub.shutdown()


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServer]:
    with serve_http("streamable-http") as server:
        yield server


@pytest.fixture(scope="module")
def tools_server() -> Iterator[HttpServer]:
    """A server of the module's own, for tests that restart or load theirs."""
    with serve_http("streamable-http") as server:
        yield server


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def scripted_llms() -> Iterator[Callable[..., ScriptedLLM]]:
    """Starts scripted LLMs with the options given (a provider's strict mode, a responder...), each
    closed once the test is over."""
    servers: list[ScriptedLLM] = []

    def start(**options: Any) -> ScriptedLLM:
        server = ScriptedLLM(**options)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="module")
def sse_server() -> Iterator[HttpServer]:
    with serve_http("sse") as server:
        yield server


def stdio_spec(key: str = "stdio", *extra: str, **fields: Any) -> ServerSpec:
    argv = server_argv("stdio", *extra)
    fields.setdefault("retry", FAST_RETRY)
    return build_server_spec(
        key=key, name=fields.pop("name", key), transport="stdio", command=argv[0], args=tuple(argv[1:]), **fields
    )


def http_spec(server: HttpServer, key: str | None = None, **fields: Any) -> ServerSpec:
    fields.setdefault("retry", FAST_RETRY)
    transport = "sse" if server.transport == "sse" else "streamable_http"
    key = key or transport
    return build_server_spec(key=key, name=fields.pop("name", key), transport=transport, url=server.url, **fields)


@pytest.fixture(params=["stdio", "sse", "streamable_http"])
def any_spec(request: pytest.FixtureRequest, http_server: HttpServer, sse_server: HttpServer) -> ServerSpec:
    if request.param == "stdio":
        return stdio_spec()
    return http_spec(sse_server if request.param == "sse" else http_server)


# servers that report while a call runs (progress, log messages, questions), shared by the tests of
# call notifications and of elicitation
@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def notifying_http(state_dir: Path) -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--notifying", "--state-dir", str(state_dir)) as server:
        yield server


@pytest.fixture(scope="module")
def notifying_sse() -> Iterator[HttpServer]:
    with serve_http("sse", "--notifying") as server:
        yield server


@pytest.fixture(params=["stdio", "sse", "streamable_http"])
def notifying_spec(request: pytest.FixtureRequest, notifying_http: HttpServer, notifying_sse: HttpServer) -> ServerSpec:
    if request.param == "stdio":
        return stdio_spec("notifying-stdio", "--notifying")
    return http_spec(notifying_sse if request.param == "sse" else notifying_http, key=f"notifying-{request.param}")
