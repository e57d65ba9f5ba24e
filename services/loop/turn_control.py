"""Requests from another thread into a running turn: cancelling one tool call, answering a server's
question (elicitation); and, the other way, the turn waiting until the Odoo layer has audited the
calls it is about to send.

The Odoo layer learns such a request from the database (any worker may have received it) and
hands it here from the thread that streams the turn; the turn itself runs on the hub's loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..events import UsageEvent

_logger = logging.getLogger(__name__)

# How long a call waits for its audit row at most: the row is one short insert, written as soon as
# the call's event is read; past this something is wrong with the database, and the call goes on
# (its row then comes with its result, as the user's answer matters more than the audit).
AUDIT_WAIT_SECONDS = 30.0


class TurnControl:
    def __init__(self, audited_first: bool = False) -> None:
        """`audited_first`: a call is sent to its server only once `audited()` named it (the Odoo
        layer committed its audit row), so that a call that reached its server always has its row."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel: Callable[[str], bool] | None = None
        self._answer: Callable[..., bool] | None = None
        self._early: set[str] = set()
        # the usage of the model call a stopped turn was streaming, for the Odoo layer to record
        self._unfinished: UsageEvent | None = None
        self._audited_first = audited_first
        self._audited: set[str] = set()
        self._waiting: list[tuple[set[str], asyncio.Future[None]]] = []

    def attach(
        self, loop: asyncio.AbstractEventLoop, cancel: Callable[[str], bool], answer: Callable[..., bool]
    ) -> None:
        """Called by the turn when it starts; requests that came before are applied now."""
        with self._lock:
            self._loop, self._cancel, self._answer = loop, cancel, answer
            early, self._early = self._early, set()
        for call_id in early:
            cancel(call_id)

    def detach(self) -> None:
        with self._lock:
            self._loop = self._cancel = self._answer = None

    def answer_elicitation(self, elicitation: str, action: str, content: dict[str, Any] | None = None) -> None:
        """Thread-safe: hands the user's answer to the call waiting for it. A question exists only
        while its turn runs, so an answer that finds no turn is dropped."""
        with self._lock:
            loop, answer = self._loop, self._answer
        if loop is not None and answer is not None:
            loop.call_soon_threadsafe(answer, elicitation, action, content)

    def leave_unfinished(self, usage: UsageEvent | None) -> None:
        """The turn, stopped while a model call streamed, leaves that call's UsageEvent."""
        with self._lock:
            self._unfinished = usage

    def take_unfinished(self) -> UsageEvent | None:
        """The UsageEvent the stopped turn left (None: it stopped between model calls), once."""
        with self._lock:
            usage, self._unfinished = self._unfinished, None
        return usage

    def cancel_call(self, call_id: str) -> None:
        """Thread-safe: the call is cancelled on the turn's loop; the server is told."""
        with self._lock:
            if self._loop is None or self._cancel is None:
                self._early.add(call_id)
                return
            loop, cancel = self._loop, self._cancel
        loop.call_soon_threadsafe(cancel, call_id)

    def audited(self, call_ids: Iterable[str]) -> None:
        """Thread-safe: the audit rows of these calls are committed; the calls waiting for them go."""
        with self._lock:
            self._audited.update(call_ids)
            ready = [future for ids, future in self._waiting if ids <= self._audited]
            self._waiting = [(ids, future) for ids, future in self._waiting if not ids <= self._audited]
        for future in ready:
            future.get_loop().call_soon_threadsafe(_resolve, future)

    async def until_audited(self, call_ids: Iterable[str]) -> None:
        """On the turn's loop: returns once every call of `call_ids` is audited (at once unless
        `audited_first`)."""
        if not self._audited_first:
            return
        with self._lock:
            missing = set(call_ids) - self._audited
            if not missing:
                return
            future = asyncio.get_running_loop().create_future()
            self._waiting.append((missing, future))
        try:
            await asyncio.wait_for(asyncio.shield(future), AUDIT_WAIT_SECONDS)
        except TimeoutError:
            _logger.warning("AI turn: calls %s sent without their audit rows confirmed", sorted(missing))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
