"""What a server says about one running tools/call besides its result: progress and log messages.

Progress is coalesced before it becomes an event: a server may send hundreds of notifications a
second, and each event is a stored row and a message to the browser. The first one goes out at
once, later ones at most every PROGRESS_INTERVAL seconds, and the latest one always goes out
before the result. Log messages are capped per call for the same reason; the rest reach only the
Odoo log.
"""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from .events import ToolLogEvent, ToolProgressEvent

PROGRESS_INTERVAL = 0.5
MAX_LOG_EVENTS = 20
LOG_TEXT_LIMIT = 2000

Emit = Callable[[ToolProgressEvent | ToolLogEvent], None]


class CallObserver:
    """Turns one call's notifications into events handed to `emit`, on the hub's loop."""

    def __init__(self, call_id: str, emit: Emit, interval: float = PROGRESS_INTERVAL) -> None:
        self.call_id = call_id
        self._emit = emit
        self._interval = interval
        self._started = time.monotonic()
        self._last_sent = float("-inf")
        self._pending: ToolProgressEvent | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._logs = 0
        self.received = 0

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback: awaited in the session's receive loop, so it never waits."""
        self.received += 1
        self._pending = ToolProgressEvent(
            id=self.call_id, progress=progress, total=total, message=message, elapsed_ms=int((time.monotonic() - self._started) * 1000)
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

    def finish(self) -> None:
        """The call ended: its latest progress goes out now, before its result."""
        self._send_pending()

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
