"""A real MCP server that runs some of its tools as tasks: the Tasks extension
(`io.modelcontextprotocol/tasks`, SEP-2663, https://modelcontextprotocol.io/seps/2663-tasks-extension,
specification: modelcontextprotocol/ext-tasks `specification/2026-07-28/tasks.md`).

mcp 2.3 has no server side of the extension, so this file writes it on the SDK's extension seam
(`mcp.server.extension.Extension`: new request methods and a `tools/call` interceptor), as the
specification says:
- the server advertises the extension under `capabilities.extensions`; a `tools/call` of a task tool
  from a request whose `clientCapabilities` carry the extension is answered with a flat
  `CreateTaskResult` (`resultType: "task"`, `taskId`, `status`, `createdAt`, `lastUpdatedAt`,
  `ttlMs`, `pollIntervalMs`); without it the tool runs synchronously, as a plain tool;
- `tasks/get` answers the task's state (`resultType: "complete"`), with `result` once completed,
  `error` once failed and the outstanding `inputRequests` while `input_required`;
- `tasks/update` takes `inputResponses` keyed as the `inputRequests` were, answered with an empty ack;
- `tasks/cancel` settles a running task as `cancelled`, an empty ack (also for a terminal task);
- the three methods refuse a request without the extension with -32021;
- task status notifications: a `subscriptions/listen` request whose filter names `taskIds` is
  acknowledged with the ids of the tasks the server knows, then each change of those tasks' state is
  pushed on that stream as `notifications/tasks`, the whole task as `tasks/get` would answer it
  (stamped with the subscription id); without the extension, -32021. A listen without `taskIds` is
  the SDK's own (list changes). `--no-task-notifications`: the listen is acknowledged for no task, as
a server that sends none would.

Tools: `greet` {name} (plain), `slow_compute` {seconds, label} (a task that works `seconds`, then
completes: the test injects the duration), `confirm_delete` {filename} (a task that asks the user
through an elicitation in `inputRequests`, then completes with what was answered; given a `label`, it
asks only once `release` {label} is called), `hold` {label}
(a task that works until the plain tool `release` {label} is called: a test decides when it ends).
`--poll-interval-ms` sets the interval the server asks clients to poll at. `--state-dir DIR`: each
task writes `DIR/task-<label or filename>` with its last status, `DIR/task-<label>.gets` with the
number of `tasks/get` it answered, and `DIR/task-<label>.listened` once a stream listens to it, for
tests to read.

    python testing/mcp_tasks_server.py --transport streamable-http --port 8123
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import SUBSCRIPTION_ID_META_KEY, InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field

HERE = Path(__file__).resolve()
PROGRAM = (sys.executable, str(HERE))
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
TTL_MS = 3_600_000
TERMINAL = ("completed", "failed", "cancelled")


class _TaskParams(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class _TaskNotificationParams(types.NotificationParams):
    model_config = ConfigDict(extra="allow")


class _TaskNotification(types.Notification[_TaskNotificationParams, Literal["notifications/tasks"]]):
    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: _TaskNotificationParams


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Task:
    task_id: str
    label: str
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    runner: asyncio.Task[None] | None = None
    gets: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def wire(self, poll_interval_ms: int) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": poll_interval_ms,
        }
        if self.status_message:
            shown["statusMessage"] = self.status_message
        if self.status == "completed" and self.result is not None:
            shown["result"] = self.result
        if self.status == "input_required":
            shown["inputRequests"] = dict(self.input_requests)
        return shown


def _text(text: str) -> dict[str, Any]:
    """A tool's result as the plain tool of the same name returns it (its output schema wraps a string)."""
    return {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}, "isError": False}


class TasksExtension(Extension):
    """The server side of the Tasks extension over an in-memory table of tasks."""

    identifier = TASKS_EXTENSION

    def __init__(self, poll_interval_ms: int, state_dir: Path | None, notify: bool = True) -> None:
        self.poll_interval_ms = poll_interval_ms
        self.state_dir = state_dir
        # False: a server that offers no status notifications acknowledges a listen for no task
        self.notify = notify
        self.tasks: dict[str, _Task] = {}
        # the listen streams told of each task's changes
        self.listeners: dict[str, set[Callable[[_Task], None]]] = {}

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", _TaskParams, self._get),
            MethodBinding("tasks/update", _UpdateParams, self._update),
            MethodBinding("tasks/cancel", _TaskParams, self._cancel),
        ]

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> Any:
        work = {"slow_compute": self._slow_compute, "confirm_delete": self._confirm_delete, "hold": self._hold}.get(
            params.name
        )
        if work is None or not _negotiated(ctx):
            return await call_next(ctx)
        arguments = params.arguments or {}
        task = _Task(task_id=str(uuid.uuid4()), label=str(arguments.get("label") or arguments.get("filename") or ""))
        self.tasks[task.task_id] = task
        self._write(task)
        task.runner = asyncio.get_running_loop().create_task(self._run(task, work(task, arguments)))
        return {"resultType": "task", **task.wire(self.poll_interval_ms)}

    # -- the tasks' work -----------------------------------------------------------------------

    async def _run(self, task: _Task, work: Any) -> None:
        try:
            task.result = await work
            self._settle(task, "completed")
        except asyncio.CancelledError:
            self._settle(task, "cancelled", "Cancelled by the client.")

    async def _slow_compute(self, task: _Task, arguments: dict[str, Any]) -> dict[str, Any]:
        seconds = float(arguments.get("seconds", 0))
        self._move(task, "working", f"Computing {task.label}")
        await asyncio.sleep(seconds)
        return _text(f"Computed {task.label} in {seconds:g} s")

    async def _hold(self, task: _Task, arguments: dict[str, Any]) -> dict[str, Any]:
        self._move(task, "working", f"Holding {task.label}")
        await task.released.wait()
        return _text(f"Released {task.label}")

    def release(self, label: str) -> bool:
        held = [task for task in self.tasks.values() if task.label == label and task.status not in TERMINAL]
        for task in held:
            task.released.set()
        return bool(held)

    async def _confirm_delete(self, task: _Task, arguments: dict[str, Any]) -> dict[str, Any]:
        filename = str(arguments.get("filename", ""))
        if arguments.get("label"):
            self._move(task, "working", f"Preparing to delete {filename}")
            await task.released.wait()
        key = f"confirm-{uuid.uuid4().hex[:8]}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        task.answers[key] = answer
        task.input_requests[key] = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": f"Delete {filename}?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean", "title": "Delete it"}},
                    "required": ["confirm"],
                },
            },
        }
        self._move(task, "input_required", f"Waiting for a confirmation to delete {filename}")
        response = await answer
        self._move(task, "working", f"Deleting {filename}")
        confirmed = response.get("action") == "accept" and (response.get("content") or {}).get("confirm")
        return _text(f"Deleted {filename}" if confirmed else f"Kept {filename}")

    # -- the extension's methods -----------------------------------------------------------------

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: _TaskParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        task.gets += 1
        if self.state_dir is not None and task.label:
            (self.state_dir / f"task-{task.label}.gets").write_text(str(task.gets), encoding="utf-8")
        return {"resultType": "complete", **task.wire(self.poll_interval_ms)}

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: _UpdateParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        for key, response in params.input_responses.items():
            answer = task.answers.pop(key, None)
            task.input_requests.pop(key, None)
            if answer is not None and not answer.done():
                answer.set_result(response if isinstance(response, dict) else {})
        return {"resultType": "complete"}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: _TaskParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        if task.status not in TERMINAL and task.runner is not None:
            task.runner.cancel()
            self._settle(task, "cancelled", "Cancelled by the client.")
        return {"resultType": "complete"}

    async def listen_tasks(
        self, ctx: ServerRequestContext[Any, Any], wanted: list[str]
    ) -> types.SubscriptionsListenResult:
        """One `subscriptions/listen` stream of task status notifications: acknowledged with the
        tasks known here, then each of their changes until the client ends the stream."""
        _require_extension(ctx)
        honored = [task_id for task_id in wanted if task_id in self.tasks] if self.notify else []
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
        send, receive = anyio.create_memory_object_stream[_Task](100)

        def deliver(task: _Task) -> None:
            # a client that stops reading polls tasks/get, as every client may
            with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
                send.send_nowait(task)

        for task_id in honored:
            self.listeners.setdefault(task_id, set()).add(deliver)
        try:
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(
                    params=types.SubscriptionsAcknowledgedNotificationParams(
                        notifications=types.SubscriptionFilter(taskIds=honored), _meta=meta
                    )
                ),
                related_request_id=ctx.request_id,
            )
            for task_id in honored:
                self._mark(self.tasks[task_id], "listened", "1")
            async for task in receive:
                notification = _TaskNotification(
                    params=_TaskNotificationParams(**task.wire(self.poll_interval_ms), _meta=meta)
                )
                await ctx.session.send_notification(notification, related_request_id=ctx.request_id)  # type: ignore[arg-type]
        finally:
            for task_id in honored:
                self.listeners.get(task_id, set()).discard(deliver)
            send.close()
            receive.close()
        return types.SubscriptionsListenResult(_meta=meta)

    def _task(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> _Task:
        _require_extension(ctx)
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task {task_id}")
        return task

    def _move(self, task: _Task, status: str, message: str | None = None) -> None:
        task.status, task.status_message, task.updated_at = status, message, _now()
        self._write(task)
        for deliver in list(self.listeners.get(task.task_id, ())):
            deliver(task)

    def _settle(self, task: _Task, status: str, message: str | None = None) -> None:
        if task.status in TERMINAL:
            return
        self._move(task, status, message)

    def _write(self, task: _Task) -> None:
        if self.state_dir is not None and task.label:
            (self.state_dir / f"task-{task.label}").write_text(task.status, encoding="utf-8")

    def _mark(self, task: _Task, suffix: str, content: str) -> None:
        if self.state_dir is not None and task.label:
            (self.state_dir / f"task-{task.label}.{suffix}").write_text(content, encoding="utf-8")


def _require_extension(ctx: ServerRequestContext[Any, Any]) -> None:
    if not _negotiated(ctx):
        raise MCPError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )


def _negotiated(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client capabilities carry the extension: at 2026-07-28 they come
    with every request, and a server must not infer them from earlier ones."""
    capabilities = ctx.session.client_capabilities
    extensions = getattr(capabilities, "extensions", None) or {}
    return TASKS_EXTENSION in extensions


def build_server(poll_interval_ms: int = 200, state_dir: Path | None = None, notify: bool = True) -> MCPServer:
    tasks = TasksExtension(poll_interval_ms, state_dir, notify)
    bus = InMemorySubscriptionBus()
    mcp = MCPServer("tasks-server", extensions=[tasks], subscriptions=bus)
    harmless = types.ToolAnnotations(destructiveHint=False, idempotentHint=True)
    list_changes = ListenHandler(bus)

    async def listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """A stream for tasks' status (taskIds), or the SDK's for list changes."""
        wanted = (params.notifications.model_extra or {}).get("taskIds")
        if wanted is None:
            return await list_changes(ctx, params)
        return await tasks.listen_tasks(ctx, [str(task_id) for task_id in wanted])

    mcp._lowlevel_server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, listen)

    @mcp.tool(annotations=harmless)
    def greet(name: str) -> str:
        """Say hello to `name`."""
        return f"Hello, {name}!"

    @mcp.tool(annotations=harmless)
    async def slow_compute(seconds: float, label: str = "") -> str:
        """Compute for `seconds` seconds (a task for a client of the Tasks extension)."""
        await asyncio.sleep(seconds)
        return f"Computed {label} in {seconds:g} s"

    @mcp.tool(annotations=harmless)
    async def hold(label: str) -> str:
        """Work until `release` is called with the same label (a task for a client of the Tasks extension)."""
        return f"Released {label}"

    @mcp.tool(annotations=harmless)
    def release(label: str) -> str:
        """End the held tasks of `label`."""
        return f"Released {label}" if tasks.release(label) else f"No task held as {label}"

    @mcp.tool(annotations=harmless)
    def confirm_delete(filename: str, label: str = "") -> str:
        """Delete `filename` once the user confirms (a task for a client of the Tasks extension);
        with a `label`, the question is asked only once `release` is called with it."""
        return f"Kept {filename}"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--poll-interval-ms", type=int, default=200)
    parser.add_argument("--state-dir", type=Path)
    parser.add_argument("--no-task-notifications", action="store_true")
    opts = parser.parse_args()
    mcp = build_server(opts.poll_interval_ms, opts.state_dir, notify=not opts.no_task_notifications)
    if opts.transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
