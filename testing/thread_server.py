"""An ASGI app served by uvicorn in a thread of the test process, on a free 127.0.0.1 port, so that
a test changes what the server does while it runs, with no process to restart."""

from __future__ import annotations

import threading
import time
from typing import Any, Self

import uvicorn

from .mcp_launch import free_port


class ThreadServer:
    """A subclass builds its app in `_app()`; `label` names it in the error when it does not start,
    `thread_name` its thread (followed by the port). Use it as a context manager, or start and stop."""

    label = "Test server"
    thread_name = "test-server"

    def __init__(self) -> None:
        self.port = free_port()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def _app(self) -> Any:
        raise NotImplementedError

    def start(self, wait: float = 20.0) -> Self:
        config = uvicorn.Config(self._app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=f"{self.thread_name} {self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self._server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError(f"{self.label} did not start on {self.port} within {wait} s")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
