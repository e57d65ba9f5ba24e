"""Running one turn of a conversation outside the request's transaction.

A streamed response outlives the request's cursor (Odoo closes it once the response object is
returned, DESIGN.md section 7), and the Discuss path runs after its message is committed. So a
turn is prepared (access checked, conversation claimed, TurnRequest built) with the request's
environment, and run by a ChatTurn holding only plain data: it writes every event in short
transactions on new cursors from the registry, and is consumed as an iterator by the SSE
controller or by the Discuss bot alike.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import odoo
from odoo import api, fields
from odoo.tools import config

from ..services.errors import AiMcpError, ErrorCode
from ..services.events import (
    FINAL_TYPES,
    ErrorEvent,
    Event,
    StartEvent,
    WarningEvent,
)
from ..services.hub import get_hub
from ..services.turn_control import TurnControl
from .call_requests import CallRequests
from .sql_rows import insert_row, update_row

_logger = logging.getLogger(__name__)

# Events nobody acts on (text deltas, round markers, progress and log lines) are written in
# batches: with the next other event, or once the oldest unwritten one is this old, or when this
# many wait. Every other event is written before it is sent: the user may act on it (stop a call,
# answer a question, approve), which another worker reads from the database. The `start` of a new
# turn is batched too: the request already claimed the conversation and stored the message, so
# its row is all there is to write, and the user sees the turn begin without waiting for it.
DEFERRED_TYPES = frozenset({"text", "round", "tool_progress", "tool_log"})
TEXT_FLUSH_SECONDS = 0.25
TEXT_FLUSH_COUNT = 64
# A tool call is held back, unsent, until its result comes, for at most an idle tick: most calls
# end by then, and the call and its result are written in one transaction instead of two.
# What comes after a held event waits with it, so the stream keeps its order.
HELD_TYPES = frozenset({"tool_call"})
# A call that reports (progress, a log line) is one the user waits for: its first report releases
# it at once, and the call and that report share the transaction.
RELEASING_TYPES = frozenset({"tool_progress", "tool_log"})
# How often the reader wakes up when nothing comes (disconnect checks, text flushes, heartbeats):
# a held call of a slow tool that reports nothing is sent about this late.
IDLE_TICK_SECONDS = 0.5
# A running turn proves it is alive by writing this often; one silent for STALE_AFTER_SECONDS died
# with its process and may be taken over.
HEARTBEAT_SECONDS = 15.0
# How often the turns with calls running look for the user's requests about them (stop a call,
# answer its server's question): one query for all the turns of the process (call_requests.py).
REQUEST_POLL_SECONDS = 0.5
STALE_AFTER_SECONDS = 90.0

PROVIDER_MENU = "AI > Configuration > Providers"
# a failed call's message status, by error code
RESULT_STATUSES = {ErrorCode.TOOL_DENIED.value: "denied", ErrorCode.CANCELLED.value: "cancelled"}
# Share of the process's database pool the turns' writers may hold at once. Every request of the
# process (the stream's own, before its route runs) borrows from the same pool, and Odoo's pool
# refuses a borrow when full instead of waiting: writers queue here so requests always find room.
WRITER_SHARE_OF_POOL = 0.5
INTERNAL_ERROR = "INTERNAL_ERROR"
TOOLS_LEFT_OUT = "TOOLS_LEFT_OUT"


class ChatRefused(Exception):
    """A chat request that is not served. `status` is the HTTP status the controller answers with;
    404 is the same for a record that does not exist and one the user may not use."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def not_found() -> ChatRefused:
    return ChatRefused(404, "NOT_FOUND", "No such assistant, cloud service or conversation, or you may not use it.")


@dataclass
class ChatTurn:
    """A claimed turn, ready to run. Plain data only: no recordset, no cursor."""

    registry: Any
    uid: int
    context: dict
    conversation_id: int
    last_seq: int
    assistant_name: str
    max_rounds: int
    make: Callable[[], AsyncIterator[Event]]
    provider_hint: str = ""
    control: TurnControl | None = None
    # ai.tool.call's lookups for the audit rows, done where the turn is prepared
    audit_known: dict[Any, Any] = field(default_factory=dict)
    # carries on after the user's answer: its `start` marks the approved calls running, at once
    resuming: bool = False
    stopped_message: str = "Stopped: the connection to the browser was closed before the answer was finished."
    final: Event | None = field(default=None, init=False)

    def events(self, idle_every: float | None = None) -> Iterator[tuple[int, Event] | None]:
        """(seq, event) for every event, each written before it is yielded (DEFERRED_TYPES at most
        TEXT_FLUSH_SECONDS later, and always before the turn ends; HELD_TYPES are yielded once
        written, at the next event that is not deferred, the call's first report, or the idle tick,
        with what came meanwhile); None when nothing came for `idle_every` seconds (default
        IDLE_TICK_SECONDS). Closing this iterator early cancels the turn: an `error` CANCELLED
        event is stored and the conversation is idle again."""
        writer = _Writer(self)
        stream = get_hub().iterate(self.make, idle_every=idle_every or IDLE_TICK_SECONDS)
        try:
            for item in stream:
                if self.control is not None:
                    writer.pass_requests(self.control)
                if item is None:
                    yield from writer.tick()
                    yield None
                    continue
                for seq, event in writer.add(self._adjust(item)):
                    if event.type in FINAL_TYPES:
                        self.final = event
                    yield seq, event
                if self.final is not None:
                    return
            # the loop always ends on a final event; should it not, the conversation must not stay running
            self.final = writer.add(ErrorEvent(code=INTERNAL_ERROR, message="The answer ended unexpectedly."))[-1][1]
        except GeneratorExit:
            stream.close()  # cancels the turn on the hub and waits for it to stop
            if self.final is None:
                self.final = writer.add(ErrorEvent(code=ErrorCode.CANCELLED.value, message=self.stopped_message))[-1][1]
            raise
        except Exception as exc:  # noqa: BLE001 - whatever broke, the user is told and the state is released
            stream.close()
            if isinstance(exc, AiMcpError):
                error = ErrorEvent(code=exc.code.value, message=exc.message)
            else:
                _logger.exception("AI turn failed: conversation=%s", self.conversation_id)
                error = ErrorEvent(
                    code=INTERNAL_ERROR, message="The assistant failed unexpectedly; the details are in the server log."
                )
            self.final = error
            yield from writer.add(self._adjust(error))
        finally:
            stream.close()
            writer.close()

    def _adjust(self, event: Event) -> Event:
        if (
            isinstance(event, ErrorEvent)
            and event.code
            in (
                ErrorCode.LLM_UNREACHABLE.value,
                ErrorCode.LLM_AUTH_FAILED.value,
            )
            and self.provider_hint
            and PROVIDER_MENU not in event.message
        ):
            return event.model_copy(update={"message": f"{event.message} {self.provider_hint}"})
        return event


_write_slots: threading.BoundedSemaphore | None = None
_write_slots_lock = threading.Lock()


def write_slots() -> threading.BoundedSemaphore:
    """The process's slots for writer cursors, sized from its pool: `db_maxconn_gevent` in the
    gevent worker (default `db_maxconn`), `db_maxconn` elsewhere, as odoo.sql_db sizes it."""
    global _write_slots  # noqa: PLW0603 - one per process, created where the pool size is known
    with _write_slots_lock:
        if _write_slots is None:
            maxconn = int((odoo.evented and config["db_maxconn_gevent"]) or config["db_maxconn"])
            slots = max(1, int(maxconn * WRITER_SHARE_OF_POOL))
            _logger.info("AI turn writers: at most %d database connections at once (pool of %d)", slots, maxconn)
            _write_slots = threading.BoundedSemaphore(slots)
        return _write_slots


@contextlib.contextmanager
def _turn_cursor(registry):
    """A cursor of its own for a turn's writes and looks, within the writers' share of the pool."""
    with write_slots(), registry.cursor() as cr:
        yield cr


call_requests = CallRequests(_turn_cursor, REQUEST_POLL_SECONDS)


class _Writer:
    """Persists a turn's events and what they mean for the conversation and its messages."""

    def __init__(self, turn: ChatTurn) -> None:
        self.turn = turn
        self.seq = turn.last_seq
        self.pending: list[tuple[int, Event]] = []  # not written yet
        self.pending_since = 0.0
        self.held: list[tuple[int, Event]] = []  # not sent yet: HELD_TYPES and what came after
        self.held_since = 0.0
        self.last_write = time.monotonic()
        # the model reply being streamed: its text, calls and first sequence number
        self.reply_text: list[str] = []
        self.reply_calls: list[dict[str, Any]] = []
        self.reply_seq: int | None = None
        self.reply_message_id: int | None = None
        self.reply_logged: dict[str, Any] | None = None  # what the reply's message holds
        self.tool_messages: dict[str, int] = {}
        self.running: set[str] = set()
        self.cancels_sent: set[str] = set()
        # what each call of this run was stored with: (server, tool, arguments), for its audit row
        self.tool_calls: dict[str, tuple[str, str, Any]] = {}
        self.audit_known: dict[Any, Any] = dict(turn.audit_known)
        # every write opens a new environment: without a company in its context, each looks the
        # user's company up again (ir.default's cache key needs it when a record is created)
        self.context = dict(turn.context)
        self.closed = False

    # -- events in ---------------------------------------------------------------------------

    def add(self, event: Event) -> list[tuple[int, Event]]:
        """Takes the turn's next event; returns the (seq, event) that may be sent now, in order."""
        now = time.monotonic()
        self.seq += 1
        row = (self.seq, event)
        ready: list[tuple[int, Event]] = [row]
        if event.type in HELD_TYPES or (self.held and event.type in DEFERRED_TYPES):
            if not self.held:
                self.held_since = now
            self.held.append(row)
            ready = []
        elif not (event.type in DEFERRED_TYPES or (event.type == "start" and not self.turn.resuming)):
            row = (self.seq, self._write([row]))
            return [*self._release(), row]
        if not self.pending:
            self.pending_since = now
        self.pending.append(row)
        if self.held:  # the text waiting to be written waits with the held call
            waited, limit = now - self.held_since, IDLE_TICK_SECONDS
        else:
            waited, limit = now - self.pending_since, TEXT_FLUSH_SECONDS
        reported = bool(self.held) and event.type in RELEASING_TYPES
        if reported or waited >= limit or len(self.pending) >= TEXT_FLUSH_COUNT:
            self._write([])
            return [*ready, *self._release()]
        return ready

    def _release(self) -> list[tuple[int, Event]]:
        """The held events, once written."""
        released, self.held = self.held, []
        return released

    def pass_requests(self, control: TurnControl) -> None:
        """Hands `control` what the user asked of this turn's running calls (a stop, an answer to
        a server's question), whichever worker received it."""
        if not self.running:
            return
        for request in call_requests.take(self.turn.registry, self.turn.conversation_id, self.running):
            if request.answer is not None:
                control.answer_elicitation(
                    request.answer["elicitation"], request.answer["action"], request.answer.get("content")
                )
            if request.cancel and request.call_id not in self.cancels_sent:
                self.cancels_sent.add(request.call_id)
                control.cancel_call(request.call_id)

    def tick(self) -> list[tuple[int, Event]]:
        """Nothing came for a while: writes what waited long enough; returns what may be sent now."""
        now = time.monotonic()
        if self.held or (self.pending and now - self.pending_since >= TEXT_FLUSH_SECONDS):
            self._write([])
            return self._release()
        if now - self.last_write >= HEARTBEAT_SECONDS:
            self._write([])
        return []

    def close(self) -> None:
        if not self.closed and self.pending:
            self._write([])
        call_requests.forget(self.turn.registry, self.turn.conversation_id)
        self.closed = True

    # -- one transaction ---------------------------------------------------------------------

    def _write(self, rows: list[tuple[int, Event]]) -> Event | None:
        """Writes the waiting text deltas and `rows` in one transaction; returns the last row's
        event as stored (a `done` gets its message id)."""
        rows = self.pending + rows
        self.pending = []
        stored: Event | None = None
        turn = self.turn
        with _turn_cursor(turn.registry) as cr:
            env = api.Environment(cr, turn.uid, dict(self.context), su=True)
            if "allowed_company_ids" not in self.context:
                self.context["allowed_company_ids"] = [env.company.id]
            now = fields.Datetime.now()
            state = rounds = None
            values, params = [], []
            for seq, event in rows:
                event, change = self._apply(env, seq, event)
                if change is not None:
                    state = change[0] or state
                    rounds = change[1] if change[1] is not None else rounds
                values.append("(%s, %s, %s, %s::jsonb, %s, %s, %s, %s)")
                params += [
                    turn.conversation_id,
                    seq,
                    event.type,
                    json.dumps(event.data()),
                    turn.uid,
                    now,
                    turn.uid,
                    now,
                ]
                stored = event
            env.flush_all()
            # a turn that ends clears its heartbeat; a running one renews it with every write
            sets = {"write_date": now, "turn_heartbeat": None if state not in (None, "running") else now}
            if rows:
                sets["last_seq"] = rows[-1][0]
            if rounds is not None:
                sets["rounds_used"] = rounds
            if state is not None:
                sets["state"] = state
            update = f"UPDATE ai_conversation SET {', '.join(f'{name} = %s' for name in sets)} WHERE id = %s"
            if values:
                # one statement, one round trip: PostgreSQL runs a data-modifying WITH even unread
                update = (
                    "WITH stored AS (INSERT INTO ai_conversation_event"
                    " (conversation_id, seq, type, payload, create_uid, create_date, write_uid, write_date)"
                    " VALUES " + ", ".join(values) + " RETURNING id) " + update
                )
            cr.execute(update, [*params, *sets.values(), turn.conversation_id])
        self.last_write = time.monotonic()
        return stored

    def _apply(self, env, seq: int, event: Event) -> tuple[Event, tuple[str, int | None] | None]:
        """The message log for one event; returns the event to store and (state, rounds) when the
        event changes the conversation's state."""
        Message = env["ai.message"]
        kind = event.type
        if kind == "start":
            # a turn resumed after an approval runs the calls that waited for it
            resumed = Message.search(
                [
                    ("conversation_id", "=", self.turn.conversation_id),
                    ("role", "=", "tool"),
                    ("status", "=", "pending"),
                ]
            )
            resumed.write({"status": "running"})
            self.running.update(resumed.mapped("tool_call_id"))
            return event, None
        if kind == "text":
            if self.reply_seq is None:
                self.reply_seq = seq
            self.reply_text.append(event.delta)
            return event, None
        if kind == "round":
            self._end_reply(env)
            return event, (None, event.n)
        if kind == "tool_call":
            if self.reply_seq is None:
                self.reply_seq = seq
            self.reply_calls.append({"id": event.id, "name": event.name, "arguments": event.arguments})
            # the reply is logged before its first call: a reply without text has the seq of that
            # call, and (seq, id) must still list the call before its result
            self._log_reply(env)
            self.tool_messages[event.id] = insert_row(
                env["ai.message"],
                {
                    "conversation_id": self.turn.conversation_id,
                    "role": "tool",
                    "seq": seq,
                    "tool_call_id": event.id,
                    "tool_name": event.tool,
                    "server_name": event.server,
                    "arguments": event.arguments or None,
                    "status": "running",
                },
            )
            self.running.add(event.id)
            self.tool_calls[event.id] = (event.server, event.tool, event.arguments or None)
            return event, None
        if kind == "tool_result":
            self._end_reply(env)
            self.running.discard(event.id)
            if not self.running:
                call_requests.forget(self.turn.registry, self.turn.conversation_id)
            message = self._tool_message(env, event.id)
            if message:
                status = "done" if event.ok else RESULT_STATUSES.get(event.error_code, "error")
                update_row(
                    env["ai.message"],
                    message.id,
                    {
                        "status": status,
                        "content": event.model_text,
                        "duration_ms": event.duration_ms,
                        "error_code": event.error_code or False,
                    },
                )
            env["ai.tool.call"]._record_tool_result(  # audit: ai_tool_call.py
                self.turn.conversation_id, message, event, self.tool_calls.get(event.id), self.audit_known
            )
            return event, None
        if kind == "elicitation_done" and event.note:
            message = self._tool_message(env, event.id)
            if message:
                update_row(env["ai.message"], message.id, {"note": event.note})
            return event, None
        if kind == "approval_required":
            self._end_reply(env)
            # the calls that need no approval wait with the others
            waiting = env["ai.message"].search(
                [
                    ("conversation_id", "=", self.turn.conversation_id),
                    ("role", "=", "tool"),
                    ("status", "=", "running"),
                ]
            )
            for call in event.calls:
                waiting |= self._tool_message(env, call.id)
            waiting.write({"status": "pending"})
            return event, ("awaiting_approval", None)
        if kind == "auth_required":
            self._end_reply(env)
            waiting = Message.browse()
            for call in event.calls:
                waiting |= self._tool_message(env, call.id)
            waiting.write({"status": "pending"})
            return event, ("awaiting_auth", None)
        if kind == "confirm_continue":
            self._end_reply(env)
            return event, ("awaiting_confirmation", event.rounds_used)
        if kind == "done":
            if self.reply_seq is None:
                self.reply_seq = seq
            answer = self._log_reply(env, usage=event.usage or None, rounds=event.rounds)
            self._reset_reply()
            return event.model_copy(update={"message_id": answer.id}), ("idle", event.rounds)
        if kind == "error":
            self._end_reply(env)
            interrupted = Message.search(
                [
                    ("conversation_id", "=", self.turn.conversation_id),
                    ("role", "=", "tool"),
                    ("status", "in", ("running", "pending", "cancelling")),
                ]
            )
            interrupted.write({"status": "error", "error_code": event.code})
            return event, ("idle", None)
        return event, None

    def _end_reply(self, env) -> None:
        """The model reply that was streaming is complete: log it as an assistant message."""
        if self.reply_seq is None:
            return
        self._log_reply(env)
        self._reset_reply()

    def _log_reply(self, env, **values):
        """Creates or brings up to date the assistant message of the reply being streamed."""
        values.update(content="".join(self.reply_text), tool_calls=list(self.reply_calls) or None)
        Message = env["ai.message"]
        if self.reply_message_id is None:
            self.reply_message_id = insert_row(
                Message,
                {
                    "conversation_id": self.turn.conversation_id,
                    "role": "assistant",
                    "seq": self.reply_seq,
                    **values,
                },
            )
        elif values != self.reply_logged:
            update_row(Message, self.reply_message_id, values)
        self.reply_logged = values
        return Message.browse(self.reply_message_id)

    def _reset_reply(self) -> None:
        self.reply_text = []
        self.reply_calls = []
        self.reply_seq = None
        self.reply_message_id = None
        self.reply_logged = None

    def _tool_message(self, env, call_id: str):
        Message = env["ai.message"]
        if call_id in self.tool_messages:
            return Message.browse(self.tool_messages[call_id])
        # a call of an earlier run of this turn (resumed after an approval)
        return Message.search(
            [
                ("conversation_id", "=", self.turn.conversation_id),
                ("role", "=", "tool"),
                ("tool_call_id", "=", call_id),
            ],
            order="id desc",
            limit=1,
        )


async def turn_events(
    make: Callable[[], AsyncIterator[Event]] | None,
    warnings: list[str],
    failure: AiMcpError | None,
    start: StartEvent,
) -> AsyncIterator[Event]:
    """The loop's events with the tool-binding warnings after `start`; or, when the turn could not
    even be set up, `start` and the error."""
    if failure is not None or make is None:
        yield start
        error = failure or AiMcpError(ErrorCode.CONFIG_INVALID)
        yield ErrorEvent(code=error.code.value, message=error.message)
        return
    async with contextlib.aclosing(make()) as events:
        async for event in events:
            yield event
            if event.type == "start":
                for warning in warnings:
                    yield WarningEvent(code=TOOLS_LEFT_OUT, message=warning)
