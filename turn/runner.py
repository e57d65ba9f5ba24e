"""Running one turn of a conversation outside the request's transaction.

A streamed response outlives the request's cursor (Odoo closes it once the response object is
returned), and the Discuss path runs after its message is committed. So a turn is prepared (access
checked, conversation claimed, TurnRequest built) with the request's environment, and run by a
ChatTurn holding only plain data: its TurnWriter writes every event in short transactions on new
cursors from the registry, and the turn is consumed as an iterator by the SSE controller or by the
Discuss bot alike.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg2

from ..hub_process import process_hub
from ..services.errors import AiMcpError, ErrorCode
from ..services.events import FINAL_TYPES, ErrorEvent, Event, StartEvent, WarningEvent
from ..services.loop import SpendGuard, TurnControl
from . import pacing
from .usage_rows import UsageContext
from .writer import TurnTakenOver, TurnWriter

_logger = logging.getLogger(__name__)

PROVIDER_MENU = "AI > Configuration > Providers"
# SQLSTATE classes of a connection PostgreSQL ended or refused: connection exceptions, and a server
# shutting down or starting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now)
CONNECTION_LOST_STATES = ("08", "57P")
# the model provider's errors the user may fix in the provider's settings
PROVIDER_ERRORS = (ErrorCode.LLM_UNREACHABLE.value, ErrorCode.LLM_AUTH_FAILED.value)


@dataclass
class ChatTurn:
    """A claimed turn, ready to run. Plain data only: no recordset, no cursor."""

    registry: Any
    uid: int
    context: dict
    conversation_id: int
    last_seq: int
    make: Callable[[], AsyncIterator[Event]]
    # what the user is told when the browser goes away before the end (translated by the caller)
    stopped_message: str
    # what the user is told when the turn can write no more, its database connection lost (translated by the caller)
    database_lost_message: str = "The answer was interrupted: it lost its database connection."
    provider_hint: str = ""
    control: TurnControl | None = None
    # ai.tool.call's lookups for the audit rows, done where the turn is prepared
    audit_known: dict[Any, Any] = field(default_factory=dict)
    # carries on after the user's answer: its `start` marks the approved calls running, at once
    resuming: bool = False
    # what the turn's usage rows name (None: no model is called)
    usage: UsageContext | None = None
    # the budgets the loop asks before each model call; the writer tells it their counters
    spend: SpendGuard | None = None
    final: Event | None = field(default=None, init=False)

    def events(self, idle_every: float | None = None) -> Iterator[tuple[int | None, Event] | None]:
        """(seq, event) for every event, each written before it is yielded (DEFERRED_TYPES at most
        TEXT_FLUSH_SECONDS later, and always before the turn ends; HELD_TYPES are yielded once
        written, at the next event that is not deferred, the call's first report, or the idle tick,
        with what came meanwhile; UNSTORED_TYPES are never written, and their seq is None); None
        when nothing came for `idle_every` seconds (default IDLE_TICK_SECONDS). Closing this
        iterator early cancels the turn: an `error` CANCELLED event is stored and the conversation
        is idle again. A turn another request took over as dead (its heartbeat stale) stops without
        a final event of its own: the takeover stored one."""
        writer = TurnWriter(self)
        stream = process_hub().iterate(self.make, idle_every=idle_every or pacing.IDLE_TICK_SECONDS)
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
                if self.final is None:
                    for warning in writer.take_warnings():
                        yield from writer.add(WarningEvent(code=ErrorCode.BUDGET_NEAR.value, message=warning))
                if self.final is not None:
                    return
            # the loop always ends on a final event; should it not, the conversation must not stay running
            self.final = writer.add(
                ErrorEvent(code=ErrorCode.INTERNAL_ERROR.value, message="The answer ended unexpectedly.")
            )[-1][1]
        except GeneratorExit:
            stream.close()  # cancels the turn on the hub and waits for it to stop
            if self.final is None and not writer.taken_over:
                with contextlib.suppress(TurnTakenOver):
                    self._add_unfinished(writer)
                    self.final = writer.add(ErrorEvent(code=ErrorCode.CANCELLED.value, message=self.stopped_message))[
                        -1
                    ][1]
            raise
        except TurnTakenOver:
            stream.close()
            _logger.warning(
                "AI turn stopped: conversation=%s was taken over as dead while this process ran it",
                self.conversation_id,
            )
        except Exception as exc:  # noqa: BLE001 - whatever broke, the user is told and the state is released
            stream.close()
            if database_lost(exc):
                _logger.warning(
                    "AI turn interrupted: conversation=%s lost its database connection: %s", self.conversation_id, exc
                )
                yield from self._end_database_lost(writer)
                return
            if not isinstance(exc, AiMcpError):
                _logger.exception("AI turn failed: conversation=%s", self.conversation_id)
                exc = AiMcpError(ErrorCode.INTERNAL_ERROR)
            yield from self._add_unfinished(writer)
            self.final = ErrorEvent(code=exc.code.value, message=exc.message)
            yield from writer.add(self._adjust(self.final))
        finally:
            stream.close()
            writer.close()

    def _end_database_lost(self, writer: TurnWriter) -> Iterator[tuple[int | None, Event]]:
        """Ends the turn saying it lost its database connection, as soon as the database answers
        again (a restart takes seconds): the tab shows why now, rather than the takeover's error
        turn_stale_after later. Should it not come back in time, the error propagates and the
        stream breaks; the takeover ends the turn then."""
        unfinished = self.control.take_unfinished() if self.control is not None else None
        final = ErrorEvent(code=ErrorCode.CANCELLED.value, message=self.database_lost_message)
        for wait in (*pacing.DATABASE_BACK_WAITS, None):
            try:
                rows: list[tuple[int | None, Event]] = []
                if unfinished is not None:
                    written = writer.last_write
                    rows += writer.add(unfinished)
                    if writer.last_write != written:  # stored already: not added again
                        unfinished = None
                rows += writer.add(final)
            except Exception as exc:
                if wait is None or not database_lost(exc):
                    raise
                time.sleep(wait)
                continue
            self.final = final
            yield from rows
            return

    def _add_unfinished(self, writer: TurnWriter) -> list[tuple[int | None, Event]]:
        """The usage of the model call the stopped turn was streaming, recorded as incomplete."""
        unfinished = self.control.take_unfinished() if self.control is not None else None
        return writer.add(unfinished) if unfinished is not None else []

    def _adjust(self, event: Event) -> Event:
        """A provider error gets the hint that says where to fix it."""
        if (
            isinstance(event, ErrorEvent)
            and event.code in PROVIDER_ERRORS
            and self.provider_hint
            and PROVIDER_MENU not in event.message
        ):
            return event.model_copy(update={"message": f"{event.message} {self.provider_hint}"})
        return event


def database_lost(exc: BaseException) -> bool:
    """Whether `exc` says the connection to PostgreSQL is gone (the database restarted, the network
    broke), rather than a statement failing (a serialization failure, a lock not available)."""
    if isinstance(exc, psycopg2.InterfaceError):
        return True
    return isinstance(exc, psycopg2.OperationalError) and (
        exc.pgcode is None or exc.pgcode.startswith(CONNECTION_LOST_STATES)
    )


async def turn_events(make: Callable[[], AsyncIterator[Event]], warnings: list[str]) -> AsyncIterator[Event]:
    """The loop's events, with the tool-binding warnings right after `start`."""
    async with contextlib.aclosing(make()) as events:
        async for event in events:
            yield event
            if event.type == "start":
                for warning in warnings:
                    yield WarningEvent(code=ErrorCode.TOOLS_LEFT_OUT.value, message=warning)


async def refused_turn_events(start: StartEvent, failure: AiMcpError) -> AsyncIterator[Event]:
    """A turn that could not even be set up: its `start` and the error."""
    yield start
    yield ErrorEvent(code=failure.code.value, message=failure.message)
