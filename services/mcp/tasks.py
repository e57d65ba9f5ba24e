"""The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), client side: a server may answer
a `tools/call` with a task (`resultType: "task"`) instead of its result; the client polls `tasks/get`
at the interval the server asks until the task ends, answers the questions a task asks
(`inputRequests`, through the client's own elicitation callback, which shows the question card)
with `tasks/update`, and sends `tasks/cancel` when the user stops the call (a call stopped before the
task's handle came back cannot: the client never learnt its id, the server only that the request ended).

While the call waits, the client also listens for the task's status notifications (at 2026-07-28: a
`subscriptions/listen` stream naming the task's id, on which a server that offers them pushes
`notifications/tasks`, each the whole task as `tasks/get` would answer it): a change reaches the
tool block when it happens rather than at the next poll. Polling goes on all the same, at the
server's interval, for a server that sends none, refuses the stream or drops it (no replay: a
change made before the stream was acknowledged is seen at the next poll).

Built on the SDK's client extension seam: the extension is advertised with the client's
capabilities, and its result claim resolves the task inside the SDK's `Client.call_tool`. A call
whose clock runs out while its task still runs is not cancelled on the server: the task is left to
run and its handle (`RunningTask`) goes with the call's answer, "still running"; whoever stores it
polls it later with `get_task` (Odoo's cron does, from any process, after a restart too: at
2026-07-28 a task outlives the connection that made it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import anyio
from mcp import Client, MCPError
from mcp import types as mcp_types
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..tool_result import RunningTask

_logger = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
# the poll interval when the server suggests none, and the bounds of one it suggests
DEFAULT_POLL_SECONDS = 1.0
MIN_POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 60.0
# how long a tasks/cancel of a call the user stopped may take
CANCEL_SECONDS = 10.0
# the SDK's timer of a listen stream, which lasts as long as its call waits: the call's clock ends it
LISTEN_TIMER_OFF = 7 * 86400.0
TASK_NOTIFICATION = "notifications/tasks"


class CreateTaskResult(mcp_types.Result):
    """A task handle answered in lieu of a tool's result (flat: `Result & Task`)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(default=None, alias="statusMessage")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class DetailedTask(BaseModel):
    """A `tasks/get` answer: the task's state, with its result, error or open questions."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(default=None, alias="statusMessage")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL_STATUSES


class _TaskParams(mcp_types.RequestParams):
    task_id: str = Field(alias="taskId")


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class _GetTask(mcp_types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    # the specification routes tasks/* by the task id in Mcp-Name
    name_param = "taskId"


class _UpdateTask(mcp_types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class _CancelTask(mcp_types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class _Ack(BaseModel):
    model_config = ConfigDict(extra="allow")


_INPUT_REQUEST: TypeAdapter[Any] = TypeAdapter(mcp_types.InputRequest)


@dataclass
class TaskWatch:
    """What the caller of one tools/call learns of its task while the call runs: the task, as last
    seen, and whether the call should leave it running when it ends (its clock ran out) rather
    than cancel it (the user stopped it). `on_status(status, message)` is told each new state."""

    detach: Callable[[], bool]
    on_status: Callable[[str, str | None], None] | None = None
    task: RunningTask | None = None


_WATCH: contextvars.ContextVar[TaskWatch | None] = contextvars.ContextVar("ai_mcp_task_watch", default=None)


@contextlib.contextmanager
def watching(watch: TaskWatch):
    """`watch` is told of the task of the tools/call made within (the claim resolves in the caller's task)."""
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


class TasksExtension(ClientExtension):
    """Advertises the extension, resolves a task answer to the tool's result, and hands each
    status notification to the call that waits for its task. One per session (the SDK's Client)."""

    identifier: ClassVar[str] = TASKS_EXTENSION

    def __init__(self) -> None:
        # the tasks waited for on this session, by id: where their notifications go
        self._followed: dict[str, asyncio.Queue[DetailedTask]] = {}

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [NotificationBinding(method=TASK_NOTIFICATION, params_type=DetailedTask, handler=self._notified)]

    async def _notified(self, task: DetailedTask) -> None:
        """A notification of a task no call here waits for is dropped: the cron polls those."""
        heard = self._followed.get(task.task_id)
        if heard is not None:
            heard.put_nowait(task)

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> mcp_types.CallToolResult:
        watch = _WATCH.get()
        task = DetailedTask(
            taskId=created.task_id,
            status=created.status,
            statusMessage=created.status_message,
            pollIntervalMs=created.poll_interval_ms,
        )
        _seen(watch, task)
        heard: asyncio.Queue[DetailedTask] = asyncio.Queue()
        self._followed[task.task_id] = heard
        listening = _listen_to(ctx.session, task.task_id)
        try:
            answered: set[str] = set()
            while not task.ended:
                if (
                    task.status == "input_required"
                    and task.input_requests
                    and await _answer(ctx.session, task, answered)
                ):
                    task = await _get(ctx.session, task.task_id)
                else:
                    task = await _next_state(ctx.session, task, heard)
                _seen(watch, task)
        except asyncio.CancelledError:
            if watch is None or not watch.detach():
                await _cancel_quietly(ctx.session, task.task_id)
            raise
        finally:
            self._followed.pop(task.task_id, None)
            if listening is not None:
                listening.cancel()
        return task_result(task)


async def _next_state(session: ClientSession, task: DetailedTask, heard: asyncio.Queue[DetailedTask]) -> DetailedTask:
    """The task's next state: the first notification within the poll interval, else a tasks/get."""
    try:
        return await asyncio.wait_for(heard.get(), poll_seconds(task.poll_interval_ms))
    except TimeoutError:
        return await _get(session, task.task_id)


def _listen_to(session: ClientSession, task_id: str) -> asyncio.Task[None] | None:
    """A listen stream for the task's status notifications, for as long as its call waits; none
    before 2026-07-28, where the stream does not exist."""
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    return asyncio.create_task(_listen(session, task_id), name=f"mcp-task-listen {task_id}")


async def _listen(session: ClientSession, task_id: str) -> None:
    request = mcp_types.SubscriptionsListenRequest(
        params=mcp_types.SubscriptionsListenRequestParams(notifications=mcp_types.SubscriptionFilter(taskIds=[task_id]))
    )
    try:
        await session.send_request(request, _Ack, request_read_timeout_seconds=LISTEN_TIMER_OFF)
    except (
        MCPError,
        OSError,
        TimeoutError,
        ValidationError,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
    ) as exc:
        # the server sends no notifications for the task, or the connection closed: the poll sees its changes
        _logger.info("MCP task notifications unavailable: task=%s error=%s", task_id, exc)


def _seen(watch: TaskWatch | None, task: DetailedTask) -> None:
    if watch is None:
        return
    changed = watch.task is None or (watch.task.status, watch.task.status_message) != (
        task.status,
        task.status_message,
    )
    watch.task = RunningTask(
        task_id=task.task_id,
        status=task.status,
        status_message=task.status_message,
        poll_interval_ms=task.poll_interval_ms,
    )
    if changed and watch.on_status is not None:
        watch.on_status(task.status, task.status_message)


async def _answer(session: ClientSession, task: DetailedTask, answered: set[str]) -> bool:
    """Each question not answered yet, asked as a server's elicitation is (the question card), then
    the answers sent with tasks/update: False when every question was answered already. A key is
    asked once over the task's life."""
    responses: dict[str, Any] = {}
    for key, raw in (task.input_requests or {}).items():
        if key in answered:
            continue
        answered.add(key)
        request = _INPUT_REQUEST.validate_python(raw)
        context = ClientRequestContext(session=session, request_id=key)
        response = await session.dispatch_input_request(context, request)
        responses[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
    if not responses:
        return False
    await update_task_on(session, task.task_id, responses)
    return True


async def _get(session: ClientSession, task_id: str) -> DetailedTask:
    return await session.send_request(_GetTask(params=_TaskParams(taskId=task_id)), DetailedTask)


async def _cancel_quietly(session: ClientSession, task_id: str) -> None:
    """tasks/cancel for a call the user stopped, shielded from the cancellation that stops it."""
    try:
        await asyncio.shield(asyncio.wait_for(cancel_task_on(session, task_id), CANCEL_SECONDS))
    except Exception as exc:  # noqa: BLE001 - the call is stopped whatever the server answers
        _logger.info("MCP tasks/cancel failed: task=%s error=%s", task_id, exc)


async def cancel_task_on(session: ClientSession, task_id: str) -> None:
    await session.send_request(_CancelTask(params=_TaskParams(taskId=task_id)), _Ack)


async def update_task_on(session: ClientSession, task_id: str, responses: dict[str, Any]) -> None:
    """tasks/update: the answers to the task's questions, keyed as the server asked them."""
    await session.send_request(_UpdateTask(params=_UpdateParams(taskId=task_id, inputResponses=responses)), _Ack)


def task_questions(task: DetailedTask) -> dict[str, mcp_types.ElicitRequestParams]:
    """The questions for the user among the task's open input requests, by the server's key. A
    request of another kind (sampling, roots) waits for a client that answers it within a call."""
    questions: dict[str, mcp_types.ElicitRequestParams] = {}
    for key, raw in (task.input_requests or {}).items():
        try:
            request = _INPUT_REQUEST.validate_python(raw)
        except ValidationError as exc:
            _logger.info("MCP task input request ignored: task=%s key=%s error=%s", task.task_id, key, exc)
            continue
        if isinstance(request, mcp_types.ElicitRequest):
            questions[key] = request.params
    return questions


async def get_task(client: Client, task_id: str) -> DetailedTask:
    """The task's state, asked on `client` (any session to its server)."""
    return await _get(client.session, task_id)


def poll_seconds(poll_interval_ms: int | None) -> float:
    """How long to wait before the next tasks/get: the server's interval, within sane bounds."""
    if not poll_interval_ms:
        return DEFAULT_POLL_SECONDS
    return min(MAX_POLL_SECONDS, max(MIN_POLL_SECONDS, poll_interval_ms / 1000))


def task_result(task: DetailedTask) -> mcp_types.CallToolResult:
    """The tool's result a task ended with: its result once completed; an error result that says
    why when it failed or was cancelled (a tool error is a completed task whose result says so)."""
    if task.status == "completed" and task.result is not None:
        return mcp_types.CallToolResult.model_validate(task.result)
    if task.status == "failed":
        message = str((task.error or {}).get("message") or task.status_message or "the task failed")
        return _error_result(f"The task failed: {message}")
    if task.status == "cancelled":
        return _error_result(f"The task was cancelled{': ' + task.status_message if task.status_message else '.'}")
    return _error_result(f"The task ended as {task.status} without a result.")


def _error_result(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)], is_error=True)
