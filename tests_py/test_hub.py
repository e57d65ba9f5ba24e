"""The hub against real FastMCP servers over stdio, SSE and streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import ast
import asyncio
import base64
import contextlib
import logging
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import FAST_RETRY, ManualClock, http_spec, stdio_spec

from services.errors import ConfigError, ErrorCode, McpError
from services.mcp import HubSettings, McpHub, get_hub, running_hub
from services.mcp import hub as hub_module
from services.mcp.session import CLIENT_INFO
from services.server_spec import build_server_spec
from services.tool_result import ImagePart, ResourcePart, StructuredPart
from testing.mcp_servers import HttpServer, free_port, serve_http, server_argv


def test_test_connection_reports_server_and_tools(hub: McpHub, any_spec) -> None:
    report = hub.run(hub.atest_connection(any_spec))
    assert report.server.name == "test-server"
    assert report.server.version
    assert report.server.protocol_version.startswith("20")
    assert "tools" in report.server.capabilities
    names = {tool.name for tool in report.tools}
    assert {"echo", "add", "slow", "weather"} <= names
    assert report.latency_ms > 0
    add = next(t for t in report.tools if t.name == "add")
    assert add.annotations.read_only is True and add.annotations.idempotent is True
    assert add.input_schema["required"] == ["a", "b"]
    weather = next(t for t in report.tools if t.name == "weather")
    assert weather.output_schema and "celsius" in weather.output_schema["properties"]


def test_call_tool_answers_over_every_transport(hub: McpHub, any_spec) -> None:
    result = hub.run(hub.acall_tool(any_spec, "add", {"a": 2, "b": 40}))
    assert not result.is_error
    assert result.text_for_model().startswith("42")


def test_tool_error_comes_back_as_error_result(hub: McpHub, http_server: HttpServer) -> None:
    result = hub.run(hub.acall_tool(http_spec(http_server), "fail", {"reason": "disk full"}))
    assert result.is_error
    assert "disk full" in result.text_for_model()


def test_image_resource_and_structured_results_are_typed(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server)
    image = hub.run(hub.acall_tool(spec, "image", {})).parts[0]
    assert isinstance(image, ImagePart) and image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    resource = hub.run(hub.acall_tool(spec, "resource", {})).parts[0]
    assert isinstance(resource, ResourcePart) and resource.text == "the notes" and resource.uri == "file:///notes.txt"
    weather = hub.run(hub.acall_tool(spec, "weather", {"city": "Taipei"}))
    structured = [p for p in weather.parts if isinstance(p, StructuredPart)]
    assert structured[0].data == {"city": "Taipei", "celsius": 21.5}


def test_text_for_model_is_capped_with_a_marker(hub: McpHub, http_server: HttpServer) -> None:
    result = hub.run(hub.acall_tool(http_spec(http_server), "big", {"chars": 50_000}))
    text = result.text_for_model(limit=1000)
    assert text.startswith("x" * 1000)
    assert "truncated: 49000 more characters" in text
    assert len(text) < 1100


def test_bearer_token_required(hub: McpHub) -> None:
    with serve_http("streamable-http", "--token", "s3cret") as server:
        with pytest.raises(McpError) as info:
            hub.run(hub.atest_connection(http_spec(server, key="no-token")))
        assert info.value.code is ErrorCode.MCP_AUTH_FAILED
        assert "HTTP 401" in info.value.message and "token" in info.value.message
        wrong = http_spec(server, key="wrong", auth_type="bearer", token="nope")
        with pytest.raises(McpError) as info:
            hub.run(hub.acall_tool(wrong, "echo", {"text": "hi"}))
        assert info.value.code is ErrorCode.MCP_AUTH_FAILED
        good = http_spec(server, key="good", auth_type="bearer", token="s3cret")
        assert hub.run(hub.acall_tool(good, "echo", {"text": "hi"})).text_for_model() == "hi"


def test_slow_tool_times_out_and_server_is_told_to_cancel(hub: McpHub, tmp_path: Path) -> None:
    with serve_http("streamable-http", "--state-dir", str(tmp_path)) as server:
        spec = http_spec(server)
        started = time.monotonic()
        with pytest.raises(McpError) as info:
            hub.run(hub.acall_tool(spec, "slow", {"seconds": 30}, timeout=0.5))
        assert info.value.code is ErrorCode.MCP_TIMEOUT
        assert time.monotonic() - started < 15  # half the slow call's 30 s
        _wait_for(lambda: (tmp_path / "slow-cancelled").exists(), "the server to see the cancellation")
        assert not (tmp_path / "slow-finished").exists()
        # the session survives a timed-out call
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "still here"})).text_for_model() == "still here"


@pytest.mark.parametrize("transport", ["stdio", "streamable_http"])
def test_server_dying_mid_call_then_next_call_reconnects(hub: McpHub, transport: str) -> None:
    server = None
    if transport == "stdio":
        spec = stdio_spec("dying")
    else:
        server = HttpServer("streamable-http").start()
        spec = http_spec(server, key="dying")
    try:
        first_pid = hub.run(hub.acall_tool(spec, "pid", {})).text_for_model()
        with pytest.raises(McpError) as info:
            hub.run(hub.acall_tool(spec, "die", {}))
        assert info.value.code is ErrorCode.MCP_UNREACHABLE
        assert "lost" in info.value.message
        if server is not None:
            server.process.wait(10)  # the old process must have let go of the port
            server.start()  # same port: an operator restarting the server
        second_pid = hub.run(hub.acall_tool(spec, "pid", {})).text_for_model()
        assert second_pid != first_pid
        assert hub.pool.opened == 2
    finally:
        if server is not None:
            server.stop()


def test_restarted_http_server_session_is_reopened_transparently(hub: McpHub) -> None:
    with serve_http("streamable-http") as server:
        spec = http_spec(server)
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "one"})).text_for_model() == "one"
        server.restart()  # the new process does not know our session id: it answers 404
        # echo is not retried by annotation here: the terminated session proves the call never ran
        assert hub.run(hub.acall_tool(spec, "slow", {"seconds": 0})).text_for_model() == "slept 0.0"
        assert hub.pool.opened == 2


def test_pagination_and_cap_at_50_tools(hub: McpHub, caplog: pytest.LogCaptureFixture) -> None:
    built_in = hub.run(hub.alist_tools(stdio_spec("few"))).total
    spec = stdio_spec("many", "--tools", "120", "--page-size", "25")
    with caplog.at_level(logging.WARNING):
        listing = hub.run(hub.alist_tools(spec))
    assert listing.total == built_in + 120  # across ceil(total / 25) pages
    assert len(listing.tools) == 50
    assert listing.warnings == [f"many offers {built_in + 120} tools; only the first 50 are kept."]
    assert "only the first 50 are kept" in caplog.text


def test_twenty_threads_share_one_pooled_session(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server, key="shared")
    results: dict[int, tuple[str, str]] = {}
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            total = hub.run(hub.acall_tool(spec, "add", {"a": i, "b": 1000})).text_for_model()
            session = hub.run(hub.acall_tool(spec, "session_id", {})).text_for_model()
            results[i] = (total, session)
        except BaseException as exc:  # collected to fail the test with the real error
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert {i: float(total.split()[0]) for i, (total, _) in results.items()} == {i: i + 1000.0 for i in range(20)}
    assert len({session for _, session in results.values()}) == 1
    assert hub.pool.opened == 1


class CountingProxy:
    """A TCP proxy on 127.0.0.1 in front of `port` that counts the connections clients open."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.refuse = False  # close new connections at once, before any answer
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            if self.refuse:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.listener.close()


def test_calls_reuse_the_sessions_connections(hub: McpHub, http_server: HttpServer) -> None:
    """The SDK closes each call's answer stream a moment before it ends; without draining it,
    httpx drops the connection and every call opens a new one (a TLS handshake on a real server)."""
    proxy = CountingProxy(http_server.port)
    try:
        url = http_server.url.replace(f":{http_server.port}/", f":{proxy.port}/")
        spec = build_server_spec(key="proxied", name="proxied", transport="streamable_http", url=url, retry=FAST_RETRY)
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "first"})).text_for_model() == "first"
        opened = proxy.accepted
        for i in range(10):
            assert hub.run(hub.acall_tool(spec, "echo", {"text": f"call {i}"})).text_for_model() == f"call {i}"
        assert proxy.accepted == opened
    finally:
        proxy.close()


def test_a_call_whose_request_cannot_be_sent_fails_at_once(hub: McpHub, http_server: HttpServer) -> None:
    """The SDK drops a POST that fails before any answer without telling the caller, who would
    wait for the whole call timeout."""
    proxy = CountingProxy(http_server.port)
    try:
        url = http_server.url.replace(f":{http_server.port}/", f":{proxy.port}/")
        spec = build_server_spec(
            key="refusing", name="refusing", transport="streamable_http", url=url, retry=FAST_RETRY
        )
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "first"})).text_for_model() == "first"
        proxy.refuse = True
        time.sleep(1.5)  # the idle connections expire: the next call needs a new one
        started = time.monotonic()
        with pytest.raises(McpError) as info:
            hub.run(hub.acall_tool(spec, "echo", {"text": "lost"}, timeout=30))
        assert time.monotonic() - started < 15  # half the call timeout
        assert "was lost before it answered" in info.value.message
        proxy.refuse = False
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "again"})).text_for_model() == "again"
    finally:
        proxy.close()


def test_changed_config_gets_a_new_session_and_old_one_closes(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server, key="srv")
    hub.run(hub.acall_tool(spec, "echo", {"text": "first"}))
    first = hub.pool.get(spec.pool_key)
    changed = http_spec(http_server, key="srv", call_timeout=12)
    hub.run(hub.acall_tool(changed, "echo", {"text": "second"}))
    second = hub.pool.get(changed.pool_key)
    assert first is not None and second is not None and first is not second
    assert first.fingerprint != second.fingerprint and not first.alive
    assert hub.open_sessions() == 1


def test_idle_sessions_are_closed(http_server: HttpServer) -> None:
    hub = McpHub(HubSettings(idle_timeout=0.5))
    try:
        hub.run(hub.acall_tool(http_spec(http_server), "echo", {"text": "x"}))
        assert hub.open_sessions() == 1
        _wait_for(lambda: hub.open_sessions() == 0, "the idle session to close", timeout=10)
    finally:
        hub.shutdown()


def test_open_sessions_are_bounded(http_server: HttpServer) -> None:
    hub = McpHub(HubSettings(max_sessions=2))
    try:
        for key in ("a", "b", "c"):
            hub.run(hub.acall_tool(http_spec(http_server, key=key), "echo", {"text": key}))
        assert len(hub.pool._sessions) == 2
        assert hub.pool.get("a") is None  # least recently used went first
    finally:
        hub.shutdown()


def test_connection_refused_is_retried_then_reported(hub: McpHub, caplog: pytest.LogCaptureFixture) -> None:
    spec = build_server_spec(key="down", name="down", url=f"http://127.0.0.1:{free_port()}/mcp", retry=FAST_RETRY)
    with caplog.at_level(logging.INFO, logger="services.mcp._pool"):
        with pytest.raises(McpError) as info:
            hub.run(hub.acall_tool(spec, "echo", {"text": "x"}))
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    assert "Cannot connect to down" in info.value.message
    assert caplog.text.count("MCP connect retry") == 2
    assert hub.pool.opened == 3


def test_a_dead_server_fails_at_once_until_its_cooldown_ends(clock: ManualClock) -> None:
    server = HttpServer("streamable-http")  # its port is chosen; nothing listens there yet
    hub = McpHub(HubSettings(failure_cooldown=30), now=clock)
    try:
        spec = build_server_spec(key="late", name="late", url=server.url, retry=FAST_RETRY)
        with pytest.raises(McpError):
            hub.run(hub.alist_tools(spec))
        assert hub.pool.opened == 3, "the first caller went through the whole backoff"
        server.start()
        clock.advance(29)
        with pytest.raises(McpError) as info:
            hub.run(hub.alist_tools(spec))
        assert info.value.code is ErrorCode.MCP_UNREACHABLE
        assert "Cannot connect to late" in info.value.message
        assert "tried again in 1 s" in info.value.message and "Test connection" in info.value.message
        assert hub.pool.opened == 3, "within the cooldown nobody waits for another attempt"
        assert hub.stats()["servers_down"] == 1
        clock.advance(1)
        assert "echo" in {tool.name for tool in hub.run(hub.alist_tools(spec)).tools}
        assert hub.stats()["servers_down"] == 0
    finally:
        hub.shutdown()
        server.stop()


def test_test_connection_retries_a_cooling_server_at_once_and_lifts_the_cooldown() -> None:
    server = HttpServer("streamable-http")
    hub = McpHub(HubSettings(failure_cooldown=300))
    try:
        spec = build_server_spec(key="back", name="back", url=server.url, retry=FAST_RETRY)
        with pytest.raises(McpError):
            hub.run(hub.alist_tools(spec))
        server.start()
        assert hub.run(hub.atest_connection(spec)).server.name == "test-server"
        assert hub.run(hub.acall_tool(spec, "echo", {"text": "back"})).text_for_model() == "back"
    finally:
        hub.shutdown()
        server.stop()


def test_a_server_saved_after_it_failed_is_tried_again_at_once_whoever_saved_it() -> None:
    # Odoo: a "Test connection" in another worker or node saves the record; this process only sees
    # the later `saved_at` of the same configuration
    server = HttpServer("streamable-http")
    hub = McpHub(HubSettings(failure_cooldown=300))
    try:
        spec = build_server_spec(key="saved", name="saved", url=server.url, retry=FAST_RETRY, saved_at=time.time() - 60)
        with pytest.raises(McpError):
            hub.run(hub.alist_tools(spec))
        server.start()
        with pytest.raises(McpError) as info:
            hub.run(hub.alist_tools(spec))
        assert "tried again in" in info.value.message, "saved before it failed: still down"
        saved = spec.model_copy(update={"saved_at": float(int(time.time()))})
        assert saved.fingerprint() == spec.fingerprint(), "a save alone keeps the pooled sessions"
        assert hub.run(hub.acall_tool(saved, "echo", {"text": "back"})).text_for_model() == "back"
        assert hub.stats()["servers_down"] == 0
    finally:
        hub.shutdown()
        server.stop()


def test_a_changed_configuration_is_tried_at_once(http_server: HttpServer) -> None:
    hub = McpHub(HubSettings(failure_cooldown=300))
    try:
        dead = build_server_spec(key="moved", name="moved", url=f"http://127.0.0.1:{free_port()}/mcp", retry=FAST_RETRY)
        with pytest.raises(McpError):
            hub.run(hub.alist_tools(dead))
        moved = build_server_spec(key="moved", name="moved", url=http_server.url, retry=FAST_RETRY)
        assert hub.run(hub.acall_tool(moved, "echo", {"text": "here"})).text_for_model() == "here"
    finally:
        hub.shutdown()


def test_a_refused_credential_is_not_cooled_down(hub: McpHub) -> None:
    with serve_http("streamable-http", "--token", "right") as guarded:
        spec = http_spec(guarded, key="auth", auth_type="bearer", token="wrong")
        for _ in range(2):
            with pytest.raises(McpError) as info:
                hub.run(hub.alist_tools(spec))
            assert info.value.code is ErrorCode.MCP_AUTH_FAILED
            assert "tried again in" not in info.value.message
    assert hub.pool.opened == 2, "each caller tried: the admin may have fixed the token"


def test_wrong_path_is_a_protocol_error(hub: McpHub, http_server: HttpServer) -> None:
    spec = build_server_spec(key="bad", name="bad", url=http_server.url.replace("/mcp", "/nope"), retry=FAST_RETRY)
    with pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(spec))
    assert info.value.code is ErrorCode.MCP_PROTOCOL_ERROR
    assert "HTTP 404" in info.value.message and "/mcp" in info.value.message


def test_stdio_child_gets_only_its_env_and_path(hub: McpHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "odoo-db-secret")
    spec = stdio_spec("env", env={"GREETING": "hello", "TOKEN": "${PGPASSWORD}"})
    names = set(hub.run(hub.acall_tool(spec, "environment", {})).parts[-1].data["result"])  # type: ignore[union-attr]
    # LC_CTYPE is set by the child Python itself (PEP 538), not inherited
    assert names - {"LC_CTYPE"} == {"GREETING", "TOKEN", "PATH"}
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "ok"})).text_for_model() == "ok"


def test_stdio_stderr_is_kept(hub: McpHub) -> None:
    spec = stdio_spec("noisy")
    hub.run(hub.acall_tool(spec, "echo", {"text": "x"}))
    assert hub.stderr_tail("noisy") == ["test-server starting on stdio"]


def test_stdio_command_not_found_is_explained(hub: McpHub) -> None:
    spec = build_server_spec(
        key="ghost", name="ghost", transport="stdio", command="no-such-mcp-server", retry=FAST_RETRY
    )
    with pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(spec))
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    # what the launcher wrote is the admin's to read (Test connection shows it), not the message's
    assert "cannot start 'no-such-mcp-server'" in (info.value.output or "")


def test_stdio_server_is_killed_with_its_session(hub: McpHub) -> None:
    spec = stdio_spec("killed")
    pid = int(hub.run(hub.acall_tool(spec, "pid", {})).text_for_model())
    hub.run(hub.aclose_server("killed"))
    _wait_for(lambda: not _alive(pid), "the stdio server to exit")


def test_debug_log_redacts_secrets(hub: McpHub, caplog: pytest.LogCaptureFixture) -> None:
    with serve_http("streamable-http", "--token", "s3cret-token") as server:
        spec = http_spec(
            server, key="logged", auth_type="bearer", token="s3cret-token", headers={"X-Tenant": "tenant-secret"}
        )
        with caplog.at_level(logging.DEBUG):
            hub.run(hub.acall_tool(spec, "echo", {"text": "visible"}))
    assert "MCP -> server=logged POST" in caplog.text
    assert "visible" in caplog.text
    assert "s3cret-token" not in caplog.text and "tenant-secret" not in caplog.text
    assert "'authorization': '***'" in caplog.text.lower()


def test_forked_child_uses_its_own_hub(http_server: HttpServer) -> None:
    parent_hub = get_hub()
    spec = http_spec(http_server, key="fork")
    assert parent_hub.run(parent_hub.acall_tool(spec, "echo", {"text": "parent"})).text_for_model() == "parent"
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: must not touch the parent's loop thread, which does not exist here
        try:
            child_hub = get_hub()
            answer = child_hub.run(child_hub.acall_tool(spec, "echo", {"text": "child"})).text_for_model()
            ok = child_hub is not parent_hub and child_hub.pid == os.getpid()
            os.write(write_fd, f"{answer}:{ok}".encode())
            child_hub.shutdown()
        finally:
            os._exit(0)
    os.close(write_fd)
    _, status = os.waitpid(pid, 0)
    assert os.read(read_fd, 100).decode() == "child:True"
    assert status == 0
    assert parent_hub.run(parent_hub.acall_tool(spec, "echo", {"text": "again"})).text_for_model() == "again"


def test_hub_refuses_use_from_a_forked_child(http_server: HttpServer) -> None:
    parent_hub = get_hub()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            parent_hub.run(parent_hub.acall_tool(http_spec(http_server), "echo", {"text": "x"}))
            os.write(write_fd, b"used")
        except RuntimeError as exc:
            os.write(write_fd, str(exc).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    os.waitpid(pid, 0)
    assert "belongs to the parent process" in os.read(read_fd, 200).decode()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().split()[2] != "Z"


def _wait_for(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_iterate_applies_backpressure_and_closes_the_generator(hub: McpHub) -> None:
    produced: list[int] = []
    closed: list[bool] = []

    async def numbers():
        try:
            for i in range(1000):
                produced.append(i)
                yield i
        finally:
            closed.append(True)

    stream = hub.iterate(numbers, buffer=8)
    assert next(stream) == 0
    time.sleep(0.3)  # a slow reader: the generator must wait, not run ahead
    assert len(produced) <= 10
    stream.close()
    assert closed == [True]
    assert list(hub.iterate(numbers, buffer=8))[-1] == 999


def test_iterate_raises_the_generator_error_in_the_reader(hub: McpHub) -> None:
    async def broken():
        yield 1
        raise McpError(ErrorCode.MCP_PARSE_ERROR, "bad frame")

    stream = hub.iterate(broken)
    assert next(stream) == 1
    with pytest.raises(McpError, match="bad frame"):
        next(stream)


def test_iterate_reports_idle_gaps_for_heartbeats(hub: McpHub) -> None:
    two_gaps = threading.Event()

    async def slow_pair():
        yield "first"
        for _ in range(3000):  # until the reader has seen two idle gaps, at most 30 s
            if two_gaps.is_set():
                break
            await asyncio.sleep(0.01)
        yield "second"

    seen = []
    for item in hub.iterate(slow_pair, idle_every=0.1):
        seen.append(item)
        if seen.count(None) == 2:
            two_gaps.set()
    assert seen[0] == "first" and seen[-1] == "second"
    assert seen.count(None) >= 2 and two_gaps.is_set()


def test_a_malformed_answer_fails_fast_with_parse_error(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server, key="garbled")
    started = time.monotonic()
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(spec, "garble", {}))
    assert info.value.code is ErrorCode.MCP_PARSE_ERROR
    assert info.value.message.startswith("garbled's answer is not valid JSON-RPC (")
    assert time.monotonic() - started < 15  # not the 30 s call timeout
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "after"})).text_for_model() == "after"


def test_a_stray_line_of_a_stdio_server_does_not_cost_the_call_or_the_session(hub: McpHub) -> None:
    spec = stdio_spec("garbled")
    assert hub.run(hub.acall_tool(spec, "garble", {})).text_for_model() == "garbled"
    session = hub.pool.get(spec.pool_key)
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "after"})).text_for_model() == "after"
    assert hub.pool.get(spec.pool_key) is session and session is not None and session.alive


def test_forbidden_is_an_auth_failure(hub: McpHub) -> None:
    from services.mcp._failures import from_http_status

    assert from_http_status(403, "srv").code is ErrorCode.MCP_AUTH_FAILED


def test_unknown_host_is_unreachable(hub: McpHub) -> None:
    spec = build_server_spec(key="nxdomain", name="nowhere", url="http://no-such-host.invalid/mcp", retry=FAST_RETRY)
    with pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(spec))
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    assert "Cannot connect to nowhere" in info.value.message


def test_user_urls_are_checked_again_at_every_connect(hub: McpHub, http_server: HttpServer) -> None:
    guarded = http_spec(http_server, key="user-server", public_only=True)
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(guarded, "echo", {"text": "x"}))
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    assert "loopback" in info.value.message and "ai_mcp.allowed_hosts" in info.value.message
    allowed = http_spec(http_server, key="user-server", public_only=True, allowed_hosts=("127.0.0.1",))
    assert hub.run(hub.acall_tool(allowed, "echo", {"text": "ok"})).text_for_model() == "ok"


@pytest.mark.parametrize("server_fixture", ["http_server", "sse_server"])
def test_a_user_url_connects_to_the_address_that_was_checked(
    hub: McpHub, server_fixture: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name resolves to an allowed address for the check, then elsewhere."""
    server: HttpServer = request.getfixturevalue(server_fixture)

    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["127.0.0.1"])  # the first lookup only; any later one gets a private address
    asked: list[str] = []

    def rebinding(host, port, *args, **kwargs):
        if _name(host) != "localhost":
            return real_getaddrinfo(host, port, *args, **kwargs)
        asked.append(_name(host))
        return real_getaddrinfo(next(answers, "10.255.255.1"), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = server.url.replace("127.0.0.1", "localhost")
    transport = "sse" if server_fixture == "sse_server" else "streamable_http"
    spec = build_server_spec(
        key="rebind",
        name="rebind",
        url=url,
        transport=transport,
        public_only=True,
        allowed_hosts=("127.0.0.1",),
        connect_timeout=2,
        retry=FAST_RETRY,
    )
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "pinned"})).text_for_model() == "pinned"
    assert hub.run(hub.acall_tool(spec, "add", {"a": 1, "b": 2})).text_for_model() == "3.0"
    assert asked == ["localhost"], "one lookup, checked; the connections did not look the name up again"


def test_a_user_url_whose_name_now_points_inside_is_refused(
    hub: McpHub, http_server: HttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_getaddrinfo = socket.getaddrinfo

    def inside(host, port, *args, **kwargs):
        return real_getaddrinfo("10.0.0.7" if _name(host) == "localhost" else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", inside)
    spec = build_server_spec(
        key="inside",
        name="inside",
        url=http_server.url.replace("127.0.0.1", "localhost"),
        public_only=True,
        allowed_hosts=("127.0.0.1",),
        retry=FAST_RETRY,
    )
    with pytest.raises(McpError) as info:
        hub.run(hub.acall_tool(spec, "echo", {"text": "x"}))
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    assert "localhost resolves to 10.0.0.7, a private address" in info.value.message


def _name(host: str | bytes) -> str:
    """A host as getaddrinfo gets it: anyio passes it IDNA-encoded."""
    return host.decode() if isinstance(host, bytes) else host


def test_a_server_that_stalls_after_answering_is_reported_within_the_connect_timeout(hub: McpHub) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections and never answers
    try:
        port = listener.getsockname()[1]
        spec = build_server_spec(
            key="stall", name="stall", url=f"http://127.0.0.1:{port}/mcp", connect_timeout=1, retry=FAST_RETRY
        )
        started = time.monotonic()
        with pytest.raises(McpError) as info:
            hub.run(hub.atest_connection(spec))
        assert info.value.code is ErrorCode.MCP_TIMEOUT
        assert time.monotonic() - started < 15  # not the 30 s call timeout
    finally:
        listener.close()


def test_a_cancelled_call_does_not_disturb_other_calls_on_the_session(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server, key="busy")
    slow = hub.submit(hub.acall_tool(spec, "slow", {"seconds": 1.0}))
    time.sleep(0.2)
    with pytest.raises(McpError):
        hub.run(
            hub.acall_tool(spec, "slow", {"seconds": 5}, timeout=0.3)
        )  # cancelled on the server, which then answers
    assert slow.result(10).text_for_model() == "slept 1.0"
    assert hub.pool.opened == 1  # the session was not thrown away


def test_the_ai_mcp_section_sizes_the_pool_and_a_bad_option_names_itself() -> None:
    settings = HubSettings.from_options({"mcp_max_sessions": "2", "mcp_idle_timeout": "60", "other": "x"})
    hub = McpHub(settings)
    try:
        assert (hub.pool.max_sessions, hub.pool.idle_timeout, hub.pool.failure_cooldown) == (2, 60.0, 30.0)
    finally:
        hub.shutdown()
    with pytest.raises(ConfigError) as refused:
        HubSettings.from_options({"mcp_idle_timeout": "soon"})
    assert refused.value.field == "mcp_idle_timeout"
    assert "more than 0 and at most 86400, not 'soon'" in refused.value.message
    assert "[ai_mcp] section" in refused.value.message
    with pytest.raises(ConfigError, match="mcp_max_sessions: must be a number at least 1"):
        HubSettings.from_options({"mcp_max_sessions": "0"})


def test_running_hub_never_starts_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "_hub", None)
    assert running_hub() is None
    assert hub_module._hub is None
    started = get_hub(HubSettings(max_sessions=3))
    try:
        assert running_hub() is started
        assert get_hub(HubSettings(max_sessions=9)) is started  # the first caller's settings stay
        assert started.pool.max_sessions == 3
    finally:
        started.shutdown()


def test_the_client_introduces_itself_with_the_manifest_version() -> None:
    # servers log and show the client's version: it follows the manifest, bumped with every data change
    manifest = ast.literal_eval((Path(__file__).resolve().parent.parent / "__manifest__.py").read_text())
    assert (CLIENT_INFO.name, CLIENT_INFO.version) == ("odoo-ai_mcp", manifest["version"])


def test_a_call_on_a_session_that_closes_fails_at_once_not_at_its_timeout(hub: McpHub, http_server: HttpServer) -> None:
    spec = http_spec(http_server, key="closing")
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "open"})).text_for_model() == "open"
    running = hub.submit(hub.acall_tool(spec, "slow", {"seconds": 20}, timeout=60))
    time.sleep(0.5)
    started = time.monotonic()
    hub.run(hub.aclose_server(spec.key))
    with pytest.raises(McpError) as info:
        running.result(30)
    assert info.value.code is ErrorCode.MCP_UNREACHABLE
    assert "closed before the server answered" in info.value.message
    assert time.monotonic() - started < 15, "not the slow tool's 20 s, nor the call's 60 s"


def test_a_server_slower_to_start_than_its_call_timeout_still_connects(hub: McpHub) -> None:
    # the handshake is bounded by the connect timeout, not by the (shorter) call timeout
    argv = server_argv("stdio")
    spec = build_server_spec(
        key="slow-start",
        name="slow-start",
        transport="stdio",
        command="sh",
        args=("-c", 'sleep 1.5; exec "$0" "$@"', *argv),
        call_timeout=0.5,
        connect_timeout=20,
        retry=FAST_RETRY,
    )
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "late"})).text_for_model() == "late"
