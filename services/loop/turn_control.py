"""Requests from another thread into a running turn: cancelling one tool call, answering a server's
question (elicitation).

The Odoo layer learns such a request from the database (any worker may have received it) and
hands it here from the thread that streams the turn; the turn itself runs on the hub's loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from ..events import UsageEvent


class TurnControl:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel: Callable[[str], bool] | None = None
        self._answer: Callable[..., bool] | None = None
        self._early: set[str] = set()
        # the usage of the model call a stopped turn was streaming, for the Odoo layer to record
        self._unfinished: UsageEvent | None = None

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
