"""The one place where Odoo's threads enter asyncio: an event loop of its own in a daemon thread.

Odoo serves requests from threads (or prefork workers, or gevent greenlets) with no event loop of
their own, and MCP sessions are long-lived async objects. A `LoopThread` runs one loop for the
whole process; sync code submits coroutines to it and waits for their results (`run`), or reads an
async generator's items as they come (`iterate`), as OCA rest-framework's
fastapi/pools/event_loop.py bridges FastAPI. A forked worker never touches the loop it inherited
from its parent: `submit` refuses, and the child makes its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

from ..errors import AiMcpError, ErrorCode, McpError

_logger = logging.getLogger(__name__)

T = TypeVar("T")


class _Credits:
    """How far the reader of `iterate` may fall behind its generator. The reader gives credit
    back without waking the loop unless the generator is waiting for it: a wake-up per item (a
    self-pipe write and a pass of the loop) was paid for every event of every turn."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self._loop = loop
        self._limit = limit
        self._lock = threading.Lock()
        self._outstanding = 0
        self._waiter: asyncio.Future[None] | None = None

    async def take(self) -> None:
        """On the loop: one more item handed to the reader; waits while `limit` are unread."""
        with self._lock:
            self._outstanding += 1
            if self._outstanding <= self._limit:
                return
            waiter = self._waiter = self._loop.create_future()
        await waiter

    def give(self) -> None:
        """In the reader's thread: one item read. The generator goes on once half are read."""
        with self._lock:
            self._outstanding -= 1
            waiter = self._waiter if self._outstanding <= self._limit // 2 else None
            if waiter is not None:
                self._waiter = None
        if waiter is not None:
            self._loop.call_soon_threadsafe(_wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class LoopThread:
    """An asyncio loop running in a daemon thread of its own, owned by the process that made it."""

    def __init__(self, name: str) -> None:
        self.pid = os.getpid()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if os.getpid() != self.pid:
            coro.close()
            raise RuntimeError("this hub belongs to the parent process; call get_hub() in the child")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the hub's loop and wait for it from a plain thread."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpError(ErrorCode.MCP_TIMEOUT, f"No answer within {timeout} s.") from None

    def iterate(
        self,
        make: Callable[[], AsyncIterator[T]],
        buffer: int = 64,
        close_timeout: float = 10.0,
        idle_every: float | None = None,
    ) -> Iterator[T | None]:
        """Run an async generator on the hub's loop and yield its items in this thread, as they come.

        At most `buffer` items wait for the reader (backpressure: the generator is paused, not the
        loop). When the reader stops early, the generator is closed, which cancels its work, and
        this returns only once it has finished. With `idle_every`, None is yielded whenever nothing
        came for that many seconds, so a streaming response can send a heartbeat."""
        items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        credits = _Credits(self._loop, buffer)
        # a cancelled concurrent future reports "done" at once; this says the generator really ended
        finished = threading.Event()

        async def produce() -> None:
            try:
                async with contextlib.aclosing(make()) as stream:
                    async for item in stream:
                        await credits.take()
                        items.put(("item", item))
            except Exception as exc:  # handed to the reading thread, which raises it
                items.put(("error", exc))
            except asyncio.CancelledError:
                items.put(("error", AiMcpError(ErrorCode.CANCELLED, "The hub stopped this stream.")))
                raise
            else:
                items.put(("end", None))
            finally:
                finished.set()

        task = self.submit(produce())
        try:
            while True:
                try:
                    kind, value = items.get(timeout=idle_every)
                except queue.Empty:
                    yield None
                    continue
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                credits.give()
                yield value
        finally:
            task.cancel()
            if not finished.wait(close_timeout):
                _logger.warning("MCP hub: a stream still closing after %.0f s", close_timeout)

    def stop(self, timeout: float) -> None:
        """Stops the loop and waits for its thread (at most `timeout` seconds)."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """Whether this process owns the loop and it still runs."""
        return os.getpid() == self.pid and self._loop.is_running()
