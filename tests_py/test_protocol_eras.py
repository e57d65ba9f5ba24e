"""What a user notices of the protocol generation a server speaks: the revision agreed (and whether
the server keeps a session), a server's question reaching exactly its call's user at 2026-07-28,
list changes heard on either generation, and lists not asked again while the server's caching
hints say they are good, never shared across identities unless the server says they may be."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ManualClock, http_spec, stdio_spec
from test_elicitation import ask_and_answer, result_of

from services.mcp import McpHub
from services.server_spec import ServerSpec
from testing.mcp_servers import HttpServer, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"


@pytest.fixture(scope="module")
def legacy_http(state_dir: Path) -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--notifying", "--era", "legacy", "--state-dir", str(state_dir)) as server:
        yield server


@pytest.fixture(scope="module")
def modern_http() -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--notifying", "--era", "modern") as server:
        yield server


@pytest.mark.parametrize(
    ("where", "protocol", "stateless"),
    [
        ("http dual", MODERN, True),
        ("http modern", MODERN, True),
        ("http legacy", HANDSHAKE, False),
        ("stdio modern", MODERN, True),
        ("stdio legacy", HANDSHAKE, False),
    ],
)
def test_test_connection_shows_the_revision_agreed_and_whether_it_is_stateless(
    hub: McpHub,
    notifying_http: HttpServer,
    modern_http: HttpServer,
    legacy_http: HttpServer,
    where: str,
    protocol: str,
    stateless: bool,
) -> None:
    transport, era = where.split()
    if transport == "stdio":
        spec = stdio_spec(f"stdio-{era}", "--era", era)
    else:
        server = {"dual": notifying_http, "modern": modern_http, "legacy": legacy_http}[era]
        spec = http_spec(server, key=f"http-{era}")
    report = hub.run(hub.atest_connection(spec))
    assert (report.server.protocol_version, report.server.stateless) == (protocol, stateless)
    assert report.server.name == "test-server" and "echo" in {t.name for t in report.tools}


def test_at_2026_two_questions_at_once_each_reach_their_own_call(
    hub: McpHub, llm: ScriptedLLM, modern_http: HttpServer
) -> None:
    """At 2026-07-28 a question is the call's own result, so it can be told apart from another
    call's on the same pooled session: both users' questions are shown, each answer goes back to
    the call that asked."""
    spec = http_spec(modern_http, key="asking-twice")
    names = {"call_a": "Ann", "call_b": "Bob"}
    events = ask_and_answer(
        hub,
        llm,
        spec,
        (ToolCall("ask_preferences", {}, id="call_a"), ToolCall("ask_preferences", {}, id="call_b")),
        lambda event: ("accept", {"name": names[event.id], "color": "red"}),
    )
    asked = sorted(e.id for e in events if e.type == "elicitation_required")
    assert asked == ["call_a", "call_b"]
    assert result_of(events, "call_a").model_text == "hello Ann, red"
    assert result_of(events, "call_b").model_text == "hello Bob, red"


@pytest.mark.parametrize(("transport", "shown"), [("streamable_http", True), ("stdio", False)])
def test_before_2026_a_question_goes_to_its_call_only_when_its_stream_says_which(
    hub: McpHub, llm: ScriptedLLM, legacy_http: HttpServer, transport: str, shown: bool
) -> None:
    """A 2025 server's question is a request of its own. Over streamable HTTP it comes on the
    call's own response stream, which names the call; over stdio nothing does, and with another
    call running on the session it is cancelled rather than risk showing it to the wrong user."""
    if transport == "stdio":
        spec = stdio_spec("asking-busy-stdio", "--notifying", "--era", "legacy")
    else:
        spec = http_spec(legacy_http, key="asking-busy-http")
    events = ask_and_answer(
        hub,
        llm,
        spec,
        (
            ToolCall("progress", {"steps": 3, "seconds": 1.5}, id="call_p"),
            ToolCall("ask_preferences", {}, id="call_ask"),
        ),
        lambda event: ("accept", {"name": "Ann", "color": "red"}),
    )
    asked = [e.id for e in events if e.type == "elicitation_required"]
    assert asked == (["call_ask"] if shown else [])
    assert result_of(events, "call_ask").model_text == ("hello Ann, red" if shown else "no answer: cancel")


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_changed_tool_list_is_heard_at_either_generation(
    hub: McpHub, modern_http: HttpServer, legacy_http: HttpServer, era: str
) -> None:
    spec = http_spec(modern_http if era == "modern" else legacy_http, key=f"growing-{era}")
    announced: list[tuple[str, str]] = []
    hub.pool.list_changed_listeners.append(lambda changed, kind: announced.append((changed.key, kind)))
    hub.run(hub.alist_tools(spec))  # the pooled session is open, and listening at 2026
    assert hub.run(hub.acall_tool(spec, "grow", {"name": f"sprout_{era}"})).text_for_model() == f"added sprout_{era}"
    deadline = time.monotonic() + 10
    while not announced and time.monotonic() < deadline:
        time.sleep(0.05)
    assert announced == [(spec.key, "tools")]
    assert f"sprout_{era}" in {t.name for t in hub.run(hub.alist_tools(spec)).tools}


# -- caching hints ------------------------------------------------------------------------------


def listings(caplog: pytest.LogCaptureFixture) -> int:
    """tools/list requests that went to a server, as the transport logged them."""
    return sum(1 for r in caplog.records if r.getMessage().startswith("MCP -> ") and '"tools/list"' in r.getMessage())


def with_user(spec: ServerSpec, user: str) -> ServerSpec:
    """The same server reached with another identity (another credential header)."""
    return http_spec_of(spec, headers={"X-User": user})


def http_spec_of(spec: ServerSpec, **fields: Any) -> ServerSpec:
    from services.server_spec import build_server_spec

    data = spec.model_dump()
    data.update(fields)
    return build_server_spec(**data)


@pytest.fixture
def wire(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG, logger="services.mcp.transport"):
        yield caplog


def test_a_list_is_not_asked_again_while_its_hint_says_it_is_good(
    clocked_hub: McpHub, clock: ManualClock, wire: pytest.LogCaptureFixture
) -> None:
    with serve_http("streamable-http", "--cache-ttl-ms", "60000") as server:
        spec = http_spec(server, key="cached")
        first = clocked_hub.run(clocked_hub.alist_tools(spec))
        second = clocked_hub.run(clocked_hub.alist_tools(spec))
        assert [t.name for t in second.tools] == [t.name for t in first.tools]
        assert listings(wire) == 1
        clock.advance(61)
        clocked_hub.run(clocked_hub.alist_tools(spec))
        assert listings(wire) == 2
        # Test connection always asks: it shows the server as it is now
        clocked_hub.run(clocked_hub.atest_connection(spec))
        assert listings(wire) == 3


@pytest.mark.parametrize(("scope", "asked"), [("private", 2), ("public", 1)])
def test_only_a_public_list_is_shared_between_identities(
    clocked_hub: McpHub, wire: pytest.LogCaptureFixture, scope: str, asked: int
) -> None:
    with serve_http("streamable-http", "--cache-ttl-ms", "60000", "--cache-scope", scope) as server:
        ann = with_user(http_spec(server, key=f"shared-{scope}"), "ann")
        bob = with_user(ann, "bob")
        for spec in (ann, bob, ann, bob):
            assert "echo" in {t.name for t in clocked_hub.run(clocked_hub.alist_tools(spec)).tools}
        assert listings(wire) == asked


def test_a_server_of_the_previous_generation_is_asked_every_time(
    clocked_hub: McpHub, wire: pytest.LogCaptureFixture
) -> None:
    with serve_http("streamable-http", "--cache-ttl-ms", "60000", "--era", "legacy") as server:
        spec = http_spec(server, key="uncached")
        for _ in range(2):
            clocked_hub.run(clocked_hub.alist_tools(spec))
        assert listings(wire) == 2
