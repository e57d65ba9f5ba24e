"""Tools a server runs as tasks (MCP Tasks extension): the call waits for the task, shows its state
in the tool block, answers its questions with the question card, cancels it when the user stops
the call, and leaves it running when the wait ends, for it to be polled later."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import http_spec
from test_elicitation import ask_and_answer, result_of

from services.events import ToolProgressEvent
from services.mcp import CallObserver, McpHub
from services.mcp.tasks import DEFAULT_POLL_SECONDS, MAX_POLL_SECONDS, MIN_POLL_SECONDS, poll_seconds
from services.server_spec import ServerSpec
from testing.mcp_launch import HttpServer
from testing.mcp_tasks_server import PROGRAM
from testing.scripted_llm import ScriptedLLM, ToolCall


@pytest.fixture(scope="module")
def task_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tasks")


@pytest.fixture(scope="module")
def tasks_http(task_state: Path) -> Iterator[HttpServer]:
    server = HttpServer("streamable-http", "--state-dir", str(task_state), program=PROGRAM).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def slow_polled_http(task_state: Path) -> Iterator[HttpServer]:
    """A server that asks to be polled once a minute: a change its client sees sooner was notified."""
    server = HttpServer(
        "streamable-http", "--state-dir", str(task_state), "--poll-interval-ms", "60000", program=PROGRAM
    ).start()
    yield server
    server.stop()


@pytest.fixture
def tasks_spec(tasks_http: HttpServer) -> ServerSpec:
    return http_spec(tasks_http, key="tasks", name="Tasks")


def wait_for(path: Path, content: str, seconds: float = 10.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text() == content:
            return content
        time.sleep(0.05)
    return path.read_text() if path.exists() else "<none>"


def test_a_task_is_polled_to_its_result_and_its_state_shown(hub: McpHub, tasks_spec: ServerSpec) -> None:
    events: list[Any] = []
    observer = CallObserver("call-1", events.append, interval=0)
    result = hub.run(
        hub.acall_tool(tasks_spec, "slow_compute", {"seconds": 0.5, "label": "quick"}, observer=observer), timeout=30
    )
    assert result.text_for_model() == "Computed quick in 0.5 s"
    assert result.task is None
    shown = [e.message for e in events if isinstance(e, ToolProgressEvent)]
    assert "Task working: Computing quick" in shown and shown[-1] == "Task completed", shown


def test_a_task_that_outlives_the_wait_is_left_running_and_polled_later(
    hub: McpHub, tasks_http: HttpServer, task_state: Path
) -> None:
    spec = http_spec(tasks_http, key="tasks-short", name="Tasks", call_timeout=0.5)
    result = hub.run(hub.acall_tool(spec, "slow_compute", {"seconds": 3, "label": "long"}), timeout=30)
    assert not result.is_error
    assert result.task is not None and result.task.status == "working"
    assert "still running" in result.text_for_model()
    # not cancelled on the server: the task goes on, and a later poll (a new session) gets its result
    assert (task_state / "task-long").read_text() == "working"
    assert wait_for(task_state / "task-long", "completed") == "completed"
    hub.run(hub.aclose_server(spec.key))
    task = hub.run(hub.aget_task(spec, result.task.task_id), timeout=30)
    assert task.status == "completed"
    assert task.result["content"][0]["text"] == "Computed long in 3 s"


def test_stopping_the_call_cancels_the_task(hub: McpHub, tasks_spec: ServerSpec, task_state: Path) -> None:
    events: list[Any] = []
    observer = CallObserver("call-1", events.append, interval=0)

    async def call_then_stop() -> None:
        arguments = {"seconds": 60, "label": "stopped"}
        call = asyncio.create_task(hub.acall_tool(tasks_spec, "slow_compute", arguments, observer=observer))
        # stopped once the client holds the task (its state shown), not as soon as the server made it
        while not events:
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    hub.run(call_then_stop(), timeout=30)
    assert wait_for(task_state / "task-stopped", "cancelled") == "cancelled"


def test_a_task_asks_through_the_question_card(hub: McpHub, llm: ScriptedLLM, tasks_spec: ServerSpec) -> None:
    events = ask_and_answer(
        hub,
        llm,
        tasks_spec,
        (ToolCall("confirm_delete", {"filename": "old.txt"}, id="call_del"),),
        lambda event: ("accept", {"confirm": True}),
    )
    question = next(e for e in events if e.type == "elicitation_required")
    assert (question.id, question.message) == ("call_del", "Delete old.txt?")
    assert result_of(events, "call_del").model_text == "Deleted old.txt"


async def until(done: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the server never got there"
        await asyncio.sleep(0.05)


def test_a_tasks_status_notification_reaches_the_call_before_the_next_poll(
    clocked_hub: McpHub, slow_polled_http: HttpServer, task_state: Path
) -> None:
    hub = clocked_hub  # its clock never runs out: the call ends with its task, however slow the machine
    spec = http_spec(slow_polled_http, key="tasks-notified", name="Tasks")
    events: list[Any] = []
    observer = CallObserver("call-1", events.append, interval=0)

    async def call_then_release() -> Any:
        call = asyncio.create_task(hub.acall_tool(spec, "hold", {"label": "notified"}, observer=observer))
        # the task ends once the server streams its changes to the client
        await until(lambda: (task_state / "task-notified.listened").exists())
        released = await hub.acall_tool(spec, "release", {"label": "notified"})
        assert released.text_for_model() == "Released notified"
        return await call

    # well within the minute the next poll would take
    result = hub.run(call_then_release(), timeout=30)
    assert result.text_for_model() == "Released notified"
    assert not (task_state / "task-notified.gets").exists(), "the result came without a tasks/get"
    shown = [e.message for e in events if isinstance(e, ToolProgressEvent)]
    assert shown[-1] == "Task completed", shown


def test_without_status_notifications_the_task_is_polled_to_its_result(task_state: Path) -> None:
    server = HttpServer(
        "streamable-http", "--state-dir", str(task_state), "--no-task-notifications", program=PROGRAM
    ).start()
    hub = McpHub()
    try:
        spec = http_spec(server, key="tasks-unnotified", name="Tasks")
        result = hub.run(hub.acall_tool(spec, "slow_compute", {"seconds": 0.5, "label": "polled"}), timeout=30)
    finally:
        hub.shutdown()
        server.stop()
    assert result.text_for_model() == "Computed polled in 0.5 s"
    assert int((task_state / "task-polled.gets").read_text()) >= 1, "the poll saw the task end"


def test_the_server_sets_how_often_a_task_is_polled_within_bounds() -> None:
    assert poll_seconds(1500) == 1.5
    assert poll_seconds(None) == DEFAULT_POLL_SECONDS
    assert poll_seconds(1) == MIN_POLL_SECONDS, "a server cannot have itself asked in a busy loop"
    assert poll_seconds(3_600_000) == MAX_POLL_SECONDS, "nor a task forgotten for an hour"
