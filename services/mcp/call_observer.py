"""What a server says about one running tools/call besides its result: progress, log messages,
and questions for the user (elicitation).

Progress is coalesced before it becomes an event: a server may send hundreds of notifications a
second, and each event is a stored row and a message to the browser. The first one goes out at
once, later ones at most every PROGRESS_INTERVAL seconds, and the latest one always goes out
before the result. Log messages are capped per call for the same reason; the rest reach only the
Odoo log. A question becomes an `elicitation_required` event; the call waits for the answer,
which `questions` (owned by the tool runner) routes here, until the call ends or the question's
own limit lapses. The call's clock (call_clock.py) hears of both: progress starts its idle timeout
again, and an open question stops it.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from mcp import types as mcp_types

from .. import json_schema
from ..call_clock import CallClock, spoken_duration
from ..events import (
    ElicitationDoneEvent,
    ElicitationRequiredEvent,
    SamplingDoneEvent,
    SamplingRequiredEvent,
    ToolLogEvent,
    ToolProgressEvent,
    UsageEvent,
)
from ..json_schema import SchemaProblem
from .sampling import CallSampling, SamplingDesk

PROGRESS_INTERVAL = 0.5
MAX_LOG_EVENTS = 20
LOG_TEXT_LIMIT = 2000

CallEvent = (
    ToolProgressEvent
    | ToolLogEvent
    | ElicitationRequiredEvent
    | ElicitationDoneEvent
    | SamplingRequiredEvent
    | SamplingDoneEvent
    | UsageEvent
)
Emit = Callable[[CallEvent], None]
Questions = dict[str, "asyncio.Future[mcp_types.ElicitResult]"]


class CallObserver:
    """Turns one call's notifications into events handed to `emit`, on the hub's loop."""

    def __init__(
        self,
        call_id: str,
        emit: Emit,
        interval: float = PROGRESS_INTERVAL,
        questions: Questions | None = None,
        sampling: SamplingDesk | None = None,
    ) -> None:
        self.call_id = call_id
        # the server's requests for a completion (sampling.py); refused when `sampling` is None
        self.sampling = CallSampling(call_id, emit, sampling)
        self._emit = emit
        self._questions = questions
        self._open: set[str] = set()
        self._interval = interval
        self._started = time.monotonic()
        self._last_sent = float("-inf")
        self._pending: ToolProgressEvent | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._logs = 0
        self._clock: CallClock | None = None
        self._lapsed: set[str] = set()
        self.received = 0
        # the questions declined because nobody could be asked: the caller may tell whoever reads
        # the result why the tool went without an answer
        self.declined: list[str] = []

    def watch(self, clock: CallClock) -> None:
        """The clock of the call being observed: told of its progress and questions."""
        self._clock = clock
        self.sampling.clock = clock

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback: awaited in the session's receive loop, so it never waits."""
        self.received += 1
        if self._clock is not None:
            self._clock.activity()
        self._queue(progress, total, message)

    def task_status(self, status: str, message: str | None) -> None:
        """The state of the server's task this call runs as (tasks.py), shown as progress without a
        measure. It is no sign of life for the clock: how long the turn waits for a task is the
        call's timeout, after which the task is left running and polled later."""
        self._queue(0, None, f"Task {status.replace('_', ' ')}" + (f": {message}" if message else ""))

    def _queue(self, progress: float, total: float | None, message: str | None) -> None:
        self._pending = ToolProgressEvent(
            id=self.call_id,
            progress=progress,
            total=total,
            message=message,
            elapsed_ms=int((time.monotonic() - self._started) * 1000),
        )
        wait = self._last_sent + self._interval - time.monotonic()
        if wait <= 0:
            self._send_pending()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._send_pending)

    def log(self, level: str, logger: str | None, data: Any) -> bool:
        """Emit a log message of this call; False once the call's cap is reached."""
        if self._logs >= MAX_LOG_EVENTS:
            return False
        self._logs += 1
        self._emit(ToolLogEvent(id=self.call_id, level=level, logger=logger, message=log_text(data)))
        return True

    async def elicit(self, server: str, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        """Ask the user and wait for the answer. A call nobody can ask for (no turn behind it, as an
        app's), or a page that is not http(s), is declined at once and kept in `declined`."""
        event = question_event(self.call_id, server, params)
        if self._questions is None or event is None:
            self.declined.append(params.message)
            return mcp_types.ElicitResult(action="decline")
        answer: asyncio.Future[mcp_types.ElicitResult] = asyncio.get_running_loop().create_future()
        self._questions[event.elicitation] = answer
        self._open.add(event.elicitation)
        self._emit(event)
        if self._clock is not None:
            self._clock.ask(event.elicitation)
        try:
            result = await answer
        finally:
            self._questions.pop(event.elicitation, None)
            if self._clock is not None:
                self._clock.answered(event.elicitation)
        self._close_question(event.elicitation, result.action, self._lapse_note(event.elicitation))
        return result

    def lapse(self, elicitation: str) -> None:
        """The question waited longer than its limit: the server is answered `cancel`, and the
        tool block says why."""
        if self.sampling.lapse(elicitation):
            return
        answer = self._questions.get(elicitation) if self._questions is not None else None
        if answer is not None and not answer.done():
            self._lapsed.add(elicitation)
            answer.set_result(mcp_types.ElicitResult(action="cancel"))

    def _lapse_note(self, elicitation: str) -> str | None:
        if elicitation not in self._lapsed or self._clock is None:
            return None
        return f"No answer within {spoken_duration(self._clock.limits.question)}: the question was cancelled."

    def finish(self) -> None:
        """The call ended: its latest progress goes out now, before its result, and questions
        still open are closed (the server stopped waiting for them)."""
        self._send_pending()
        self.sampling.finish()
        for elicitation in list(self._open):
            self._close_question(elicitation, "cancel")
            if self._questions is not None and (answer := self._questions.get(elicitation)) is not None:
                answer.cancel()

    def _close_question(self, elicitation: str, action: str, note: str | None = None) -> None:
        if elicitation in self._open:
            self._open.discard(elicitation)
            self._emit(ElicitationDoneEvent(id=self.call_id, elicitation=elicitation, action=action, note=note))

    def _send_pending(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending is None:
            return
        event, self._pending = self._pending, None
        self._last_sent = time.monotonic()
        self._emit(event)


def log_text(data: Any) -> str:
    """A log message's `data` (any JSON value) as the text shown in the tool block."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= LOG_TEXT_LIMIT else f"{text[:LOG_TEXT_LIMIT]}…"


def question_event(
    call_id: str, server: str, params: mcp_types.ElicitRequestParams, elicitation: str | None = None
) -> ElicitationRequiredEvent | None:
    """The question card of a server's elicitation, named `elicitation` (a new name by default);
    None for a page to visit whose address is not a web page's."""
    elicitation = elicitation or uuid.uuid4().hex
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        parts = urlsplit(params.url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return None
        return ElicitationRequiredEvent(
            id=call_id,
            elicitation=elicitation,
            server=server,
            mode="url",
            message=params.message,
            url=params.url,
            host=parts.hostname,
        )
    return ElicitationRequiredEvent(
        id=call_id,
        elicitation=elicitation,
        server=server,
        mode="form",
        message=params.message,
        requested_schema=params.requested_schema,
    )


def elicitation_errors(schema: dict[str, Any], content: Any) -> list[str]:
    """What is wrong with a form answer, checked against the schema the server asked with, before
    it is sent: the server would refuse it, and the user can still correct it."""
    if not isinstance(content, dict):
        return ["The answer must be an object of the form's fields."]
    try:
        errors = json_schema.errors(json_schema.validator(schema), content)
    except SchemaProblem as exc:
        return [f"The server's form cannot be checked: its schema {exc.reason}."]
    return [f"{'.'.join(str(p) for p in error.absolute_path) or 'answer'}: {error.message}" for error in errors[:10]]
