"""A plain mcp SDK Client held open on an event loop: the baseline both benchmarks compare with."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp import Client


class RawSession:
    """A plain SDK Client opened once, agreeing on the revision as ours does (auto). anyio wants
    its contexts left by the task that entered them, so an owner task on the hub loop holds them
    open while other tasks call through the Client (the SDK allows that), the same arrangement
    the hub's McpSession uses."""

    def __init__(self, transport: Callable[[], AbstractAsyncContextManager[tuple[Any, ...]]]) -> None:
        self._transport = transport
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def session(self) -> Client:
        assert self._client is not None, "open() first"
        return self._client

    async def open(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._own(ready, self._stop))
        await ready

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        try:
            async with Client(self._transport(), mode="auto", cache=None) as client:
                self._client = client
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise
        finally:
            self._client = None

    async def close(self) -> None:
        if self._stop is not None and self._task is not None:
            self._stop.set()
            await asyncio.wait([self._task], timeout=10)
