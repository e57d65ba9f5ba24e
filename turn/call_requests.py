"""The user's requests about running calls (stop one, answer its server's question), looked up for
every turn of the process in one query.

The request reaches whichever worker the browser talks to, which stores it on the call's message;
the worker running the turn finds it there. Each turn used to look for its own twice a second:
with 200 turns on a gevent worker, hundreds of queries a second, each borrowing a connection from
a pool of as many (as profiled with bench_load --scale). Now the first turn to look once the
period is over runs one query for all the turns of its database, and each turn takes what was
found for it the next time it looks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from .states import MessageStatus


class CallRequest(NamedTuple):
    call_id: str
    cancel: bool
    answer: dict[str, Any] | None  # an answer to the server's question, handed over once


class CallRequests:
    """Running calls by turn, and what the user asked of them, for the turns of this process."""

    def __init__(
        self,
        open_cursor: Callable[[Any], AbstractContextManager],
        period: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._open_cursor = open_cursor  # registry -> a cursor of a connection a turn may take
        self._period = period
        self._clock = clock
        self._lock = threading.Lock()
        self._running: dict[str, dict[int, frozenset[str]]] = {}  # database -> conversation -> calls
        self._found: dict[tuple[str, int], list[CallRequest]] = {}
        self._last_look: dict[str, float] = {}

    def take(self, registry: Any, conversation_id: int, running: set[str]) -> list[CallRequest]:
        """What was asked of `running`, the calls of this turn now running, since the last take;
        looks for every turn of the database first when the last look is a period old."""
        database = registry.db_name
        now = self._clock()
        with self._lock:
            turns = self._running.setdefault(database, {})
            turns[conversation_id] = frozenset(running)
            due = now - self._last_look.get(database, 0.0) >= self._period
            if due:
                self._last_look[database] = now
                watched = dict(turns)
        if due:
            found = self._look(registry, watched)
            with self._lock:
                for conversation, requests in found.items():
                    if conversation in self._running.get(database, {}):  # not over meanwhile
                        self._found.setdefault((database, conversation), []).extend(requests)
        with self._lock:
            return self._found.pop((database, conversation_id), [])

    def forget(self, registry: Any, conversation_id: int) -> None:
        """The turn runs no call any more: nothing to look for, nothing to hand over."""
        with self._lock:
            self._running.get(registry.db_name, {}).pop(conversation_id, None)
            self._found.pop((registry.db_name, conversation_id), None)

    def _look(self, registry: Any, watched: dict[int, frozenset[str]]) -> dict[int, list[CallRequest]]:
        with self._open_cursor(registry) as cr:
            cr.execute(
                "SELECT id, conversation_id, tool_call_id, status, elicitation_answer FROM ai_message"
                " WHERE conversation_id = ANY(%s) AND role = 'tool'"
                " AND (status = %s OR elicitation_answer IS NOT NULL)",
                (list(watched), MessageStatus.CANCELLING),
            )
            rows = [row for row in cr.fetchall() if row[2] in watched[row[1]]]
            answered = [row[0] for row in rows if row[4] is not None]
            if answered:
                # taken: an answer is handed over once
                cr.execute("UPDATE ai_message SET elicitation_answer = NULL WHERE id = ANY(%s)", (answered,))
        found: dict[int, list[CallRequest]] = {}
        for _id, conversation_id, call_id, status, answer in rows:
            found.setdefault(conversation_id, []).append(
                CallRequest(call_id, status == MessageStatus.CANCELLING, answer)
            )
        return found
