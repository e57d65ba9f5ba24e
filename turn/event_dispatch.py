"""Which writers a stored event of a turn goes to, for what it means beyond its own row.

Each kind of record an event changes has its writer, called in the writer's transaction
(writer.py) in the order the writers are given: the messages and the state they leave the
conversation in (messages.py), the calls' audit rows (audit_rows.py), the usage rows and their
charges to the budgets (usage_rows.py), what a model record learns it refuses (refused_params.py),
the tools a search found (found_tools.py), a skill's file refused (skill_refusals.py), the servers'
tasks a call left running (running_tasks.py).

A writer's method names the event classes of services/events.py it writes for with `@records(...)`:
anything else is refused when the writer is defined, so no handler waits for an event that never
comes. The events that write nothing but their own row are ROW_ONLY; every other one has a writer
(tests/test_event_writers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

from ..services.events import (
    EVENT_CLASSES,
    ElicitationRequiredEvent,
    Event,
    SamplingRequiredEvent,
    TaskResultEvent,
    ToolInputEvent,
    ToolLogEvent,
    ToolProgressEvent,
    WarningEvent,
)


class StateChange(NamedTuple):
    """What an event changes on the conversation: its state and the rounds used (None: unchanged)."""

    state: str | None = None
    rounds: int | None = None


# What a handler returns: None when the event is stored as it came and the conversation's state is
# unchanged; else the event to store (a `done` gets its message id) and what it changes.
Written = tuple[Event, StateChange | None] | None
Handler = Callable[[Any, int, Event], Written]

# The events that change nothing but their own row (a `tool_input` is not even stored:
# pacing.UNSTORED_TYPES): what the widget shows of them is in the row. A `task_result` is written
# between turns, with its task's row (ai.mcp.task), never by a turn.
ROW_ONLY: frozenset[type] = frozenset(
    {
        ToolInputEvent,
        ToolProgressEvent,
        ToolLogEvent,
        ElicitationRequiredEvent,
        SamplingRequiredEvent,
        WarningEvent,
        TaskResultEvent,
    }
)

_RECORDS = "_records_events"


def records(*event_classes: type) -> Callable[[Callable], Callable]:
    """Marks a writer's method as what it writes for each of `event_classes`."""
    if not event_classes:
        raise TypeError("a handler that names no event is never called")
    unknown = [cls for cls in event_classes if cls not in EVENT_CLASSES]
    if unknown:
        raise TypeError(f"not an event of services/events.py: {unknown!r}")

    def mark(handler: Callable) -> Callable:
        setattr(handler, _RECORDS, (*getattr(handler, _RECORDS, ()), *event_classes))
        return handler

    return mark


@cache
def handlers_of(writer_class: type) -> dict[type, str]:
    """{event class: the name of the method of `writer_class` that writes for it}."""
    table: dict[type, str] = {}
    for name in dir(writer_class):
        for event_class in getattr(getattr(writer_class, name), _RECORDS, ()):
            if event_class in table:
                raise TypeError(f"{writer_class.__name__} writes {event_class.__name__} twice")
            table[event_class] = name
    return table


class EventDispatch:
    """The writers of one run of a turn, by the events they write for."""

    def __init__(self, *writers: object | None) -> None:
        self.handlers: dict[type, list[Handler]] = {}
        for writer in writers:
            if writer is None:  # a record this run does not write (no usage before a model call)
                continue
            for event_class, name in handlers_of(type(writer)).items():
                self.handlers.setdefault(event_class, []).append(getattr(writer, name))

    def apply(self, env, seq: int, event: Event) -> tuple[Event, StateChange | None]:
        """Writes what `event` means; returns the event to store and what it changes on the
        conversation. Each writer is handed the event as the one before left it."""
        change = None
        for handler in self.handlers.get(type(event), ()):
            written = handler(env, seq, event)
            if written is not None:
                event = written[0]
                change = written[1] if written[1] is not None else change
        return event, change
