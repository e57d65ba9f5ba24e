"""Starting the test MCP servers from Python: a free port, a server's command line, an HTTP server
process that tests start, stop and restart. Standard library only.
"""

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

# the entry point of the test servers; `program` may run it (or another script) with another python
SERVERS_SCRIPT = Path(__file__).resolve().with_name("mcp_servers.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_argv(
    transport: str, *extra: str, program: Sequence[str] = (sys.executable, str(SERVERS_SCRIPT))
) -> list[str]:
    """The command line of a server; `program` runs the script (e.g. testing.mcp1_venv.mcp1_program())."""
    return [*program, "--transport", transport, *extra]


class HttpServer:
    """A server process on 127.0.0.1; `url` is its MCP endpoint."""

    def __init__(
        self, transport: str, *extra: str, program: Sequence[str] = (sys.executable, str(SERVERS_SCRIPT))
    ) -> None:
        """`program` runs the server script: another python and script serve, e.g., an mcp 1.x server
        (testing.mcp1_venv.mcp1_program()) or a FastMCP one (testing.fastmcp4_venv)."""
        self.transport = transport
        self.extra = extra
        self.program = tuple(program)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/{'mcp' if transport == 'streamable-http' else 'sse'}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, wait: float = 20.0) -> "HttpServer":
        self.process = subprocess.Popen(
            [*self.program, "--transport", self.transport, "--port", str(self.port), *self.extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"MCP test server exited with {self.process.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"MCP test server did not listen on {self.port} within {wait} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def restart(self) -> "HttpServer":
        self.stop()
        return self.start()


@contextlib.contextmanager
def serve_http(
    transport: str, *extra: str, program: Sequence[str] = (sys.executable, str(SERVERS_SCRIPT))
) -> Iterator[HttpServer]:
    server = HttpServer(transport, *extra, program=program).start()
    try:
        yield server
    finally:
        server.stop()
