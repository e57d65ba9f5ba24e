"""A server's task that outlives its turn, and Odoo stopped while it runs: a real Odoo (threaded,
with one cron thread, as Odoo's default settings) answers a message whose tool call its server runs
as a task; the call's wait ends, the turn answers "still running", Odoo is stopped, the task ends
meanwhile, and the Odoo started again polls it from the stored row and adds its result to the
conversation, where the user reads it.

The task ends when the test releases it on its server (testing/mcp_tasks_server.py `hold`), never
on a timer. Conditions are waited for with generous deadlines; no duration is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.mcp import McpHub  # noqa: E402
from services.server_spec import build_server_spec  # noqa: E402
from testing.mcp_launch import HttpServer  # noqa: E402
from testing.mcp_tasks_server import PROGRAM  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "tasks-restart-key"
WAIT = 600
CRON = ("--max-cron-threads=1",)


def responder(body: dict) -> Turn:
    """The model calls the task tool, then answers once it read the call's result."""
    if any(message.get("role") == "tool" for message in body.get("messages") or []):
        return Turn(text="The report is still being computed; it will show in the call when done.")
    return Turn(tool_calls=(ToolCall("hold", {"label": "restart"}, id="call_report"),))


@pytest.fixture(scope="module")
def ctx(state_dir: Path) -> Iterator[dict]:
    try:
        server = OdooServer("tasks-restart", ready_timeout=600)  # a busy machine starts Odoo slowly
    except OdooNotFound as exc:
        missing(str(exc))
    tasks = HttpServer("streamable-http", "--state-dir", str(state_dir), program=PROGRAM)
    with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
        try:
            tasks.start(wait=WAIT)
            server.install()
            server.start("first", extra=CRON)
            yield {"server": server, "tasks": tasks, **_configure(server, llm, tasks.url)}
        finally:
            tasks.stop()
            server.close()


def _configure(server: OdooServer, llm: ScriptedLLM, url: str) -> dict:
    admin = WebClient(server.url, server.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    # the turn waits one second for a call: the held task outlives it
    mcp = admin.call("mcp.server", "create", {"name": "Reports", "scope": "system", "url": url, "call_timeout": 1})
    admin.call("mcp.server", "action_sync_tools", [mcp])
    admin.call(
        "mcp.tool", "write", admin.call("mcp.tool", "search", [("server_id", "=", mcp)]), {"requires_approval": False}
    )
    assistant = admin.call(
        "ai.assistant", "create", {"name": "Reports", "provider_id": provider, "mcp_server_ids": [(6, 0, [mcp])]}
    )
    create_ai_user(admin, "tasks_user", "Tasks user")
    return {"assistant": assistant}


def sql(server: OdooServer, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", server.db, "-c", query]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def wait_for(server: OdooServer, query: str, expected: str, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if sql(server, query) == expected:
            return
        time.sleep(0.2)
    pytest.fail(f"{what}: not reached within {WAIT} s; log {server.log}")


def release(url: str, label: str) -> str:
    """The test's hand on the tasks server: its `release` tool ends the held task."""
    hub = McpHub()
    try:
        spec = build_server_spec(key="tasks-release", name="Reports", transport="streamable_http", url=url)
        return hub.run(hub.acall_tool(spec, "release", {"label": label}), timeout=60).text_for_model()
    finally:
        hub.shutdown()


@pytest.mark.timeout(1800)
def test_a_task_left_running_when_odoo_stops_lands_in_its_conversation_once_odoo_is_back(
    ctx: dict, state_dir: Path
) -> None:
    server: OdooServer = ctx["server"]
    user = WebClient(server.url, server.db, "tasks_user", "tasks_user")
    run = user.stream({"assistant_id": ctx["assistant"], "message": "Compute the report."}, timeout=WAIT)
    events = [event for _at, event in run["events"]]
    assert run["error"] is None and events[-1].event == "done", run
    conversation = events[0].data["conversation_id"]
    result = next(event for event in events if event.event == "tool_result")
    assert "still running" in result.data["model_text"]
    assert (state_dir / "task-restart").read_text() == "working", "the task is not cancelled on its server"
    tasks_of = f"SELECT status FROM ai_mcp_task WHERE conversation_id = {conversation}"
    assert sql(server, tasks_of) == "working"

    server.stop()
    # the task ends while no Odoo runs
    assert release(ctx["tasks"].url, "restart") == "Released restart"
    assert (state_dir / "task-restart").read_text() == "completed"

    server.start("again", extra=CRON)
    landed = (
        "SELECT payload->>'id' || ' ' || (payload->'content'->0->>'text') FROM ai_conversation_event"
        f" WHERE conversation_id = {conversation} AND type = 'task_result'"
    )
    wait_for(server, landed, "call_report Released restart", "the task's result in the conversation")
    assert sql(server, tasks_of) == "completed"
    # the user reads it where the widget reads a conversation's events
    status, body = user.get(f"/ai_mcp/chat/{conversation}/events?after=0")
    assert status == 200 and "Released restart" in body, body[:500]
    assert not server.log_errors(), server.log_errors()[:3]
