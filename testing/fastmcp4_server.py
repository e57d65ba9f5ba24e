"""A server built with FastMCP 4 (the standalone framework on the mcp 2.x SDK), to prove our client
talks to it as well as to servers made with the SDK's own MCPServer.

It needs FastMCP, which has a venv of its own: run it with the python that
`testing.fastmcp4_venv.fastmcp4_python()` returns, e.g.
`python testing/fastmcp4_server.py --transport streamable-http --port 8123 [--stateless]`.
FastMCP serves both protocol eras as the SDK does: a client in auto mode gets 2026-07-28.
"""

import argparse
import asyncio
import os
import sys

# no banner, and so no look-up of FastMCP's latest release on PyPI
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Context, FastMCP  # noqa: E402
from fastmcp.exceptions import ToolError  # noqa: E402
from pydantic import BaseModel  # noqa: E402

NAME = "fastmcp4-server"
VERSION = "4.0.0-test"


class Weather(BaseModel):
    city: str
    celsius: float


def build_server() -> FastMCP:
    """A few of testing/mcp_servers.py's tools, under the same names and with the same answers, so one
    test can run against either."""
    mcp = FastMCP(NAME, version=VERSION)

    @mcp.tool
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @mcp.tool
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    # a pydantic return type: FastMCP publishes an outputSchema and answers with structuredContent
    @mcp.tool
    def weather(city: str) -> Weather:
        """Structured weather for a city."""
        return Weather(city=city, celsius=21.5)

    @mcp.tool
    def fail(reason: str = "boom") -> str:
        """Always fails, with a message for the client."""
        raise ToolError(f"the tool failed: {reason}")

    @mcp.tool
    async def progress(steps: int, seconds: float, ctx: Context) -> str:
        """Report `steps` progress notifications spread over `seconds`, then answer."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i} of {steps}")
            await asyncio.sleep(seconds / steps)
        return f"{steps} steps done"

    @mcp.tool
    async def slow(seconds: float) -> str:
        """Sleep, then answer: lets a client time out and cancel."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--stateless", action="store_true", help="streamable HTTP without a session id")
    opts = parser.parse_args()
    mcp = build_server()
    if opts.transport == "stdio":
        mcp.run("stdio", show_banner=False, log_level="WARNING")
        return
    sys.stderr.write(f"{NAME} on http://127.0.0.1:{opts.port}/mcp stateless={opts.stateless}\n")
    mcp.run(
        "streamable-http",
        show_banner=False,
        host="127.0.0.1",
        port=opts.port,
        path="/mcp",
        log_level="WARNING",
        stateless_http=opts.stateless,
    )


if __name__ == "__main__":
    main()
