"""Ending a tools/call when its CallClock runs out, rather than by the SDK's fixed timer.

call_clock.py only measures (pure, no asyncio, shared with the agent loop); this file acts on a live
call: it awaits the call, cancels it when a limit is reached and words the timeout for the user.

The SDK's timer can neither be started again by progress nor stopped while a question waits for
the user; the clock (call_clock.py) does both. The call is awaited in the caller's task and a
watcher cancels that task when a limit runs out, as asyncio.timeout does; the SDK then tells the
server that the request is cancelled (a notifications/cancelled, or on a stateless connection the
end of the request's HTTP exchange).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from ..call_clock import CallClock, Limit, spoken_duration
from ..errors import ErrorCode, McpError
from .call_observer import CallObserver

_logger = logging.getLogger(__name__)
T = TypeVar("T")

# A call's limits are read from its CallClock at least this often: the clock is a callable that
# asyncio's timers cannot follow (tests drive it), and a question opened meanwhile may lapse sooner.
CLOCK_TICK = 1.0


async def clocked(
    server: str, request: Awaitable[T], clock: CallClock, observer: CallObserver | None, tick: float = CLOCK_TICK
) -> T:
    """`request`'s answer, unless `clock` runs out first: then it is cancelled and McpError
    MCP_TIMEOUT says which limit ran out and what raises it."""
    caller = asyncio.current_task()
    assert caller is not None
    ran_out: list[Limit] = []
    watcher = asyncio.create_task(_watch(clock, observer, tick, caller, ran_out))
    try:
        return await request
    except asyncio.CancelledError:
        if not ran_out or caller.uncancel() > 0:
            raise  # cancelled by someone else (the user, the turn), not by the clock
    finally:
        watcher.cancel()
    limit = ran_out[0]
    _logger.info("MCP tools/call timed out: server=%s limit=%s", server, limit.value)
    raise McpError(ErrorCode.MCP_TIMEOUT, timeout_message(server, limit, clock))


async def _watch(
    clock: CallClock, observer: CallObserver | None, tick: float, caller: asyncio.Task[Any], ran_out: list[Limit]
) -> None:
    while True:
        await asyncio.sleep(min(clock.due(), tick))
        if observer is not None:
            for question in clock.lapsed():
                observer.lapse(question)
        limit = clock.expired()
        if limit is not None:
            ran_out.append(limit)
            caller.cancel()
            return


def timeout_message(server: str, limit: Limit, clock: CallClock) -> str:
    """Which limit ended the call, and what raises it."""
    if limit is Limit.TURN:
        seconds = clock.budget.seconds if clock.budget is not None else 0.0
        return (
            f"The answer's time limit ({spoken_duration(seconds)}) ran out while {server} ran this call; "
            "the call was cancelled. Raise the assistant's answer timeout if its tools need longer."
        )
    if limit is Limit.CAP:
        return (
            f"{server} was still running this call after {spoken_duration(clock.limits.cap)}, the most a call may "
            "take however often it reports progress; the call was cancelled. Raise the server's call time cap if "
            "the tool needs longer."
        )
    return (
        f"{server} sent neither a result nor progress for {spoken_duration(clock.limits.idle)}; "
        "the call was cancelled. Raise the call timeout (the assistant's or the server's, whichever is lower) "
        "if the tool needs longer, or have the tool report progress."
    )
