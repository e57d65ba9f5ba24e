"""The chat in a real prefork Odoo 18 (--workers=2), its stream served by Odoo's gevent worker.

Odoo's own test runner is threaded: it never serves a request from the gevent worker, where Odoo
runs the whole WSGI app with gevent's monkey-patching (threads become greenlets, sockets and
psycopg2 cooperative). The README has the reverse proxy send the chat stream there, next to
/websocket, so a turn does not hold one of the few HTTP workers for its whole length. These tests
start that Odoo on a new database and speak HTTP to it as the chat widget does; the MCP servers are
real (streamable HTTP, and stdio started by the gevent worker), the model is the scripted one.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.sse import SseDecoder  # noqa: E402
from testing.mcp_servers import serve_http, server_argv  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "prefork-key"
WORKERS = 2
# more turns at once than the HTTP workers plus their listen backlog (8 x workers) could take
SIMULTANEOUS = WORKERS + 8 * WORKERS + 12


def responder(body: dict) -> Turn:
    """By the user's message: "both" calls echo on both servers, then answers with their results;
    "approve" calls add on the HTTP server; "slow" calls slow on the stdio server; anything else is
    answered in half a second."""
    messages = body.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    asked = messages[last_user]["content"]
    results = [m["content"] for m in messages[last_user:] if m.get("role") == "tool"]
    names = sorted(t["function"]["name"] for t in body.get("tools") or [])
    if asked == "both" and not results:
        echoes = [n for n in names if "echo" in n]
        return Turn(text="Asking both.", tool_calls=tuple(ToolCall(n, {"text": f"via {n}"}) for n in echoes))
    if asked == "approve" and not results:
        add = next(n for n in names if n.lower().startswith("web") and n.endswith("add"))
        return Turn(tool_calls=(ToolCall(add, {"a": 2, "b": 3}, id="call_add"),))
    if asked == "slow" and not results:
        slow = next(n for n in names if "slow" in n and "local" in n.lower())
        return Turn(tool_calls=(ToolCall(slow, {"seconds": 30}),))
    if results:
        return Turn(text="Results: " + " | ".join(results))
    return Turn(text=f"You said {asked}.", latency=0.5)


@pytest.fixture(scope="module")
def odoo(state_dir: Path) -> Iterator[dict]:
    try:
        server = OdooServer("prefork-tests")
    except OdooNotFound as exc:
        missing(str(exc))
    with (
        ScriptedLLM(responder=responder, api_key=API_KEY) as llm,
        serve_http("streamable-http", "--name", "web") as web,
    ):
        try:
            server.install()
            server.start("prefork", workers=WORKERS)
            admin = WebClient(server.url, server.db, "admin", "admin")
            assistant = _configure(admin, llm.base_url, web.url, state_dir)
            yield {
                "server": server,
                "admin": admin,
                "assistant": assistant,
                "user": WebClient(server.url, server.db, "prefork_user", "prefork_user"),
            }
        finally:
            errors = server.log_errors()
            server.close()
    assert not errors, f"ERROR lines in the Odoo log: {errors[:3]}"


def _configure(admin: WebClient, llm_url: str, web_url: str, state_dir: Path) -> int:
    admin.call("ir.config_parameter", "set_param", "ai_mcp.allow_stdio", "True")
    provider = admin.call(
        "ai.provider",
        "create",
        {"name": "scripted", "base_url": llm_url, "api_key": API_KEY, "default_model": "scripted"},
    )
    argv = server_argv("stdio", "--name", "local", "--state-dir", str(state_dir))
    servers = [
        admin.call("mcp.server", "create", {"name": "Web", "scope": "system", "url": web_url}),
        admin.call(
            "mcp.server",
            "create",
            {"name": "Local", "scope": "system", "transport": "stdio", "command": argv[0], "args": "\n".join(argv[1:])},
        ),
    ]
    for server_id in servers:
        admin.call("mcp.server", "action_sync_tools", [server_id])
    tools = admin.call("mcp.tool", "search", [("server_id", "in", servers)])
    admin.call("mcp.tool", "write", tools, {"requires_approval": False})
    create_ai_user(admin, "prefork_user", "Prefork user")
    return admin.call(
        "ai.assistant", "create", {"name": "Prefork", "provider_id": provider, "mcp_server_ids": [(6, 0, servers)]}
    )


def _send(odoo: dict, message: str, **kwargs) -> dict:
    """A turn sent as the reverse proxy routes it: to the gevent worker."""
    body = {"assistant_id": odoo["assistant"], "message": message}
    return odoo["user"].stream(body, port=odoo["server"].gevent_port, timeout=60, **kwargs)


def _kinds(run: dict) -> list[str]:
    """Event types in order, a run of text deltas as one "text", without the `usage` of each model
    call (the usage rows are tested on their own)."""
    kinds: list[str] = []
    for _t, event in run["events"]:
        if event.event != "usage" and not (event.event == "text" and kinds[-1:] == ["text"]):
            kinds.append(event.event)
    return kinds


def _history(odoo: dict, conversation_id: int) -> dict:
    return odoo["user"].jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history", {})


def _assert_stored_as_streamed(odoo: dict, run: dict) -> None:
    streamed = [(event.id, event.event, event.data) for _t, event in run["events"]]
    history = _history(odoo, streamed[0][2]["conversation_id"])
    stored = [(e.pop("seq"), e["type"], e) for e in history["events"]]
    assert stored == streamed
    assert history["conversation"]["state"] == "idle"


def test_a_turn_served_by_the_gevent_worker_calls_http_and_stdio_servers(odoo: dict) -> None:
    run = _send(odoo, "both")
    assert run["status"] == 200, run["error"]
    assert _kinds(run) == [
        "start",
        "round",
        "text",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "round",
        "text",
        "done",
    ]
    calls = {e.data["id"]: e.data for _t, e in run["events"] if e.event == "tool_call"}
    results = {e.data["id"]: e.data for _t, e in run["events"] if e.event == "tool_result"}
    assert sorted(call["server"] for call in calls.values()) == ["Local", "Web"]
    for call_id, call in calls.items():
        assert (results[call_id]["ok"], results[call_id]["model_text"]) == (True, f"via {call['name']}")
    answer = "".join(e.data["delta"] for _t, e in run["events"] if e.event == "text")
    assert answer.endswith("Results: " + " | ".join(results[call_id]["model_text"] for call_id in calls))
    _assert_stored_as_streamed(odoo, run)

    # the turn ran in the gevent worker: its pool holds the two sessions, the HTTP workers' none
    status, body = odoo["admin"].get("/ai_mcp/hub/stats", port=odoo["server"].gevent_port)
    assert status == 200
    assert json.loads(body)["hub"]["open_sessions"] == 2


def test_more_simultaneous_turns_than_http_workers_and_backlog_all_complete(odoo: dict) -> None:
    runs: list[dict] = [{} for _ in range(SIMULTANEOUS)]
    barrier = threading.Barrier(SIMULTANEOUS)

    def one(index: int) -> None:
        barrier.wait()
        runs[index] = _send(odoo, f"hello {index}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(SIMULTANEOUS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    failed = [
        (r.get("status"), r.get("error"), _kinds(r)[-2:])
        for r in runs
        if r.get("status") != 200 or _kinds(r)[-1:] != ["done"]
    ]
    assert not failed, f"{len(failed)} of {SIMULTANEOUS} turns failed: {failed[:3]}"
    for index, run in enumerate(runs):
        assert "".join(e.data["delta"] for _t, e in run["events"] if e.event == "text") == f"You said hello {index}."
        _assert_stored_as_streamed(odoo, run)
    # they ran side by side, not one after another (each answer takes the model half a second)
    assert max(run["total"] for run in runs) < SIMULTANEOUS * 0.5


def test_closing_the_tab_cancels_the_turn_and_the_stdio_call(odoo: dict, state_dir: Path) -> None:
    run = _send(odoo, "slow", until=lambda event: event.event == "tool_call")
    assert _kinds(run)[-1] == "tool_call", run["error"]
    conversation_id = run["events"][0][1].data["conversation_id"]
    closed = time.monotonic()
    deadline = closed + 20
    while _history(odoo, conversation_id)["conversation"]["state"] != "idle" and time.monotonic() < deadline:
        time.sleep(0.2)
    history = _history(odoo, conversation_id)
    assert history["conversation"]["state"] == "idle"
    assert time.monotonic() - closed < 10, "the turn was cancelled, not waited for"
    last = history["events"][-1]
    assert (last["type"], last["code"]) == ("error", "CANCELLED")
    while not (state_dir / "slow-cancelled").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (state_dir / "slow-cancelled").exists(), "the stdio server was told to cancel"
    assert not (state_dir / "slow-finished").exists()

    follow_up = odoo["user"].stream(
        {"assistant_id": odoo["assistant"], "conversation_id": conversation_id, "message": "still there?"},
        port=odoo["server"].gevent_port,
        timeout=60,
    )
    assert _kinds(follow_up)[-1] == "done", follow_up["error"]


def test_an_approval_answered_through_the_gevent_worker_resumes_the_turn(odoo: dict) -> None:
    admin = odoo["admin"]
    add = admin.call("mcp.tool", "search", [("name", "=", "add"), ("server_id.name", "=", "Web")])
    admin.call("mcp.tool", "write", add, {"requires_approval": True})
    try:
        asked = _send(odoo, "approve")
        assert _kinds(asked)[-3:] == ["round", "tool_call", "approval_required"], asked["error"]
        conversation_id = asked["events"][0][1].data["conversation_id"]
        assert _history(odoo, conversation_id)["conversation"]["state"] == "awaiting_approval"

        resumed = odoo["user"].stream(
            {"conversation_id": conversation_id, "approvals": {"call_add": True}},
            path="/ai_mcp/chat/resume",
            port=odoo["server"].gevent_port,
            timeout=60,
        )
        assert _kinds(resumed)[-1] == "done", resumed["error"]
        result = next(e.data for _t, e in resumed["events"] if e.event == "tool_result")
        assert (result["id"], result["ok"], result["model_text"]) == ("call_add", True, "5.0")
        assert resumed["events"][0][1].id == asked["events"][-1][1].id + 1, "one sequence across both streams"

        # any process replays them: here an HTTP worker
        status, replay = odoo["user"].get(f"/ai_mcp/chat/{conversation_id}/events?after=0")
        assert status == 200
        replayed = [(e.id, e.event, e.data) for e in SseDecoder().feed(replay.encode())]
        assert replayed == [(e.id, e.event, e.data) for _t, e in asked["events"] + resumed["events"]]
    finally:
        admin.call("mcp.tool", "write", add, {"requires_approval": False})
