"""Stores a turn's events, in order, each before the browser may act on it.

The writer decides when an event is written (at once, batched with others, or held back with its
call until the result comes: see pacing.py) and writes each batch in one short transaction on a
cursor of its own: the event rows, what they mean for the conversation's records (the writers of
event_dispatch.py: messages, audit rows, usage rows and budget charges, refused parameters, found
tools), and the conversation's state, last sequence number and heartbeat in one statement.

Sequence numbers are reserved before they are sent (pacing.SEQ_BLOCK): while the turn runs, the
conversation's last_seq is the last number it may have sent, not the last one stored. The same
statement checks that last_seq is still the reservation this turn made: a turn another request took
over as dead (claim.py) finds it changed, writes nothing more and ends (TurnTakenOver).
"""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from odoo import api, fields

from ..hub_process import turn_stale_after
from ..services.events import Event, ToolCallEvent
from ..services.loop import SpendGuard, TurnControl
from . import pacing
from .audit_rows import AuditRows
from .budget_charges import charge_read_committed
from .cursors import call_requests, turn_cursor
from .event_dispatch import EventDispatch
from .found_tools import FoundTools
from .messages import MessageWriter
from .refused_params import RefusedParams
from .running_tasks import RunningTasks
from .skill_refusals import SkillRefusals
from .states import ConversationState
from .usage_rows import UsageContext, UsageLedger

Row = tuple[int | None, Event]  # None: an UNSTORED_TYPES event, sent without a sequence number


class TurnTakenOver(Exception):
    """Another request ended this turn as dead while it still ran (its heartbeat went stale): what
    it would write now belongs to nobody."""


class TurnData(Protocol):
    """What the writer reads of the turn it stores (runner.ChatTurn): plain data, no recordset."""

    registry: Any
    uid: int
    context: dict
    conversation_id: int
    last_seq: int
    audit_known: dict[Any, Any]
    resuming: bool
    usage: UsageContext | None
    spend: SpendGuard | None
    control: TurnControl | None


class TurnWriter:
    """Persists a turn's events and what they mean for the conversation and its messages."""

    def __init__(self, turn: TurnData) -> None:
        self.turn = turn
        self.seq = turn.last_seq
        # the numbers the claim reserved (pacing.SEQ_BLOCK): what last_seq holds while this turn runs
        self.reserved = turn.last_seq + pacing.SEQ_BLOCK
        self.taken_over = False
        self.pending: list[Row] = []  # not written yet
        self.pending_since = 0.0
        self.held: list[Row] = []  # not sent yet: HELD_TYPES and what came after
        self.held_since = 0.0
        self.last_write = time.monotonic()
        self.heartbeat_every = pacing.heartbeat_seconds(turn_stale_after())
        self.messages = MessageWriter(turn.conversation_id, turn.registry, call_requests)
        self.audit = AuditRows(turn.conversation_id, turn.audit_known, self.messages)
        # None: a turn refused before any model call records no usage
        self.usage = UsageLedger(turn.conversation_id, turn.usage, turn.spend) if turn.usage is not None else None
        # what each event means beyond its row, written in this order
        self.records = EventDispatch(
            self.messages,
            self.audit,
            self.usage,
            RefusedParams(turn.conversation_id),
            FoundTools(turn.conversation_id),
            SkillRefusals(turn.conversation_id, self.messages),
            RunningTasks(turn.conversation_id),
        )
        # a turn charged to budgets writes each call's usage at once: the loop learns the counters
        # (and the user a budget's warning) before the next round rather than a batch later
        self.deferred = (
            pacing.DEFERRED_TYPES - {"usage"} if turn.usage and turn.usage.budgets else pacing.DEFERRED_TYPES
        )
        self.cancels_sent: set[str] = set()
        # every write opens a new environment: without a company in its context, each looks the
        # user's company up again (ir.default's cache key needs it when a record is created)
        self.context = dict(turn.context)
        self.closed = False

    # -- events in ---------------------------------------------------------------------------

    def add(self, event: Event) -> list[Row]:
        """Takes the turn's next event; returns the (seq, event) that may be sent now, in order."""
        if self.taken_over:
            raise TurnTakenOver()
        now = time.monotonic()
        if event.type in pacing.UNSTORED_TYPES:
            return self._pass(event, now)
        if isinstance(event, ToolCallEvent) and not event.requires_approval and event.type in pacing.HELD_TYPES:
            self._audit_at_once(event)
        self.seq += 1
        row = (self.seq, event)
        ready: list[Row] = [row]
        if event.type in pacing.HELD_TYPES or (self.held and event.type in self.deferred):
            if not self.held:
                self.held_since = now
            self.held.append(row)
            ready = []
        elif not (event.type in self.deferred or (event.type == "start" and not self.turn.resuming)):
            row = (self.seq, self._write([row]))
            return [*self._release(), row]
        if not self.pending:
            self.pending_since = now
        self.pending.append(row)
        if self.held:  # the text waiting to be written waits with the held call
            waited, limit = now - self.held_since, pacing.IDLE_TICK_SECONDS
        else:
            waited, limit = now - self.pending_since, pacing.TEXT_FLUSH_SECONDS
        reported = bool(self.held) and event.type in pacing.RELEASING_TYPES
        unreserved = self.seq > self.reserved  # a number is sent only once the database reserved it
        if reported or unreserved or waited >= limit or len(self.pending) >= pacing.TEXT_FLUSH_COUNT:
            self._write([])
            return [*ready, *self._release()]
        return ready

    def _pass(self, event: Event, now: float) -> list[Row]:
        """An event sent, never stored: after the held ones, in the order it came. What waits to be
        written is written when due, as with a stored event: while a model writes a long call
        nothing else comes, and the turn's heartbeat must go on."""
        row: Row = (None, event)
        if self.held:
            self.held.append(row)
            return []
        if (self.pending and now - self.pending_since >= pacing.TEXT_FLUSH_SECONDS) or (
            now - self.last_write >= self.heartbeat_every
        ):
            self._write([])
        return [row]

    def _release(self) -> list[Row]:
        """The held events, once written."""
        released, self.held = self.held, []
        return released

    def take_warnings(self) -> list[str]:
        """The budgets' warnings the last writes gave (each budget's once per period)."""
        return self.usage.take_warnings() if self.usage is not None else []

    def pass_requests(self, control: TurnControl) -> None:
        """Hands `control` what the user asked of this turn's running calls (a stop, an answer to
        a server's question), whichever worker received it."""
        if not self.messages.running:
            return
        for request in call_requests.take(self.turn.registry, self.turn.conversation_id, self.messages.running):
            if request.answer is not None:
                control.answer_elicitation(
                    request.answer["elicitation"], request.answer["action"], request.answer.get("content")
                )
            if request.cancel and request.call_id not in self.cancels_sent:
                self.cancels_sent.add(request.call_id)
                control.cancel_call(request.call_id)

    def tick(self) -> list[Row]:
        """Nothing came for a while: writes what waited long enough; returns what may be sent now."""
        now = time.monotonic()
        if self.held or (self.pending and now - self.pending_since >= pacing.TEXT_FLUSH_SECONDS):
            self._write([])
            return self._release()
        if now - self.last_write >= self.heartbeat_every:
            self._write([])
        return []

    def close(self) -> None:
        if not self.closed and self.pending and not self.taken_over:
            self._write([])
        call_requests.forget(self.turn.registry, self.turn.conversation_id)
        self.closed = True

    # -- one transaction ---------------------------------------------------------------------

    def _env(self, cr) -> api.Environment:
        env = api.Environment(cr, self.turn.uid, dict(self.context), su=True)
        if "allowed_company_ids" not in self.context:
            self.context["allowed_company_ids"] = [env.company.id]
        return env

    def _audit_at_once(self, event: ToolCallEvent) -> None:
        """The audit row of a call held back from the tab (stored with its result when that comes
        soon), committed now: the turn sends the call to its server once this confirms it."""
        with turn_cursor(self.turn.registry) as cr:
            self.audit.audit_call(self._env(cr), event)
        self._confirm_audited()

    def _confirm_audited(self) -> None:
        audited = self.audit.take_audited()
        if audited and self.turn.control is not None:
            self.turn.control.audited(audited)

    def _write(self, rows: list[Row]) -> Event | None:
        """Writes the waiting text deltas and `rows` in one transaction; returns the last row's
        event as stored (a `done` gets its message id)."""
        rows = self.pending + rows
        self.pending = []
        stored: Event | None = None
        turn = self.turn
        charges = bool(turn.usage and turn.usage.budgets) and any(event.type == "usage" for _seq, event in rows)
        with turn_cursor(turn.registry) as cr:
            if charges:
                charge_read_committed(cr)
            env = self._env(cr)
            now = fields.Datetime.now()
            state = rounds = None
            values, params = [], []
            for seq, event in rows:
                event, change = self.records.apply(env, seq, event)
                if change is not None:
                    state = change.state or state
                    rounds = change.rounds if change.rounds is not None else rounds
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
            statement, reserved = self._statement(values, params, rows, state, rounds, now)
            cr.execute(*statement)
            if not cr.rowcount:  # the conversation is no longer this turn's: nothing of this is kept
                self.taken_over = True
                raise TurnTakenOver()
        self.reserved = reserved
        self.last_write = time.monotonic()
        self._confirm_audited()
        return stored

    def _statement(self, values: list[str], params: list[Any], rows: list[Row], state, rounds, now):
        """One statement, one round trip: the event rows and the conversation's update (PostgreSQL
        runs a data-modifying WITH even unread), which finds no row when the turn was taken over;
        and the last number reserved after it."""
        # a turn that ends clears its heartbeat; a running one renews it with every write
        running = state in (None, ConversationState.RUNNING)
        sets = {"write_date": now, "turn_heartbeat": now if running else None}
        # a running turn reserves the next block; one that ends or pauses leaves its last number
        reserved = self.seq + pacing.SEQ_BLOCK if running else self.seq
        if reserved != self.reserved:
            sets["last_seq"] = reserved
        if rounds is not None:
            sets["rounds_used"] = rounds
        if state is not None:
            sets["state"] = state
        update = (
            f"UPDATE ai_conversation SET {', '.join(f'{name} = %s' for name in sets)} WHERE id = %s AND last_seq = %s"
        )
        if values:
            update = (
                "WITH stored AS (INSERT INTO ai_conversation_event"
                " (conversation_id, seq, type, payload, create_uid, create_date, write_uid, write_date)"
                " VALUES " + ", ".join(values) + " RETURNING id) " + update
            )
        return (update, [*params, *sets.values(), self.turn.conversation_id, self.reserved]), reserved
