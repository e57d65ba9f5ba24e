"""A server made with an old release of the mcp SDK, to prove our client talks to servers of the early
protocol revisions (2024-11-05, 2025-03-26, 2025-06-18) as they were really served.

It runs unchanged on every release that testing/mcp_old_venv.py pins, so it uses only what the oldest
of them (mcp 1.2, the first with FastMCP) offers: `FastMCP(name, **settings)`, `@mcp.tool()` with
parentheses, `Context.report_progress(progress, total)` without a message, and `mcp.run(transport)`
serving on the settings' host and port. Streamable HTTP is offered where the SDK has it (mcp 1.8 on).
Run it with the python of that venv, e.g.
`python testing/mcp_old_server.py --transport sse --port 8123`.

No `from __future__ import annotations`: mcp 1.2 finds the Context parameter by its annotation being
the class itself, not its name.
"""

import argparse
import asyncio
import sys

from mcp.server.fastmcp import Context, FastMCP

NAME = "old-server"


def build_server(port: int) -> FastMCP:
    """The tools of testing/mcp_servers.py that every revision can serve, under the same names and
    with the same answers, so one test can run against either."""
    mcp = FastMCP(NAME, host="127.0.0.1", port=port, log_level="WARNING")

    @mcp.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @mcp.tool()
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @mcp.tool()
    def fail(reason: str = "boom") -> str:
        """Always fails, with a message for the client."""
        raise ValueError(f"the tool failed: {reason}")

    @mcp.tool()
    async def progress(steps: int, ctx: Context, seconds: float = 0.3) -> str:
        """Report `steps` progress notifications spread over `seconds`, then answer."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps)
            await asyncio.sleep(seconds / steps)
        return f"{steps} steps done"

    @mcp.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer: lets a client time out and cancel."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    return mcp


def transports() -> list[str]:
    """What this SDK serves: stdio and SSE always, streamable HTTP from mcp 1.8."""
    return ["stdio", "sse", *(["streamable-http"] if hasattr(FastMCP, "streamable_http_app") else [])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=transports(), default="stdio")
    parser.add_argument("--port", type=int, default=8000)
    opts = parser.parse_args()
    sys.stderr.write(f"{NAME} starting on {opts.transport}\n")
    sys.stderr.flush()
    build_server(opts.port).run(opts.transport)


if __name__ == "__main__":
    main()
