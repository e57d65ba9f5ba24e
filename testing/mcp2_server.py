"""An MCP server written against the mcp 2.x SDK (`MCPServer`), to prove our 1.x client talks to it.

It needs mcp 2.x, which cannot share a virtual environment with our mcp 1.x client: run it with the
python that `testing.mcp2_venv.mcp2_python()` returns, e.g.
`python testing/mcp2_server.py --transport streamable-http --stateless --port 8123`.
Only the standard library and mcp 2.x are imported, so it runs in that bare venv.
"""

import argparse
import sys

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

NAME = "mcp2-server"
VERSION = "2.3.0-test"


class Forecast(BaseModel):
    city: str
    celsius: float
    sunny: bool


def build_server() -> MCPServer:
    mcp = MCPServer(NAME, version=VERSION, log_level="WARNING")

    @mcp.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    # a pydantic return type: mcp 2.x publishes an outputSchema and answers with structuredContent
    @mcp.tool()
    def forecast(city: str) -> Forecast:
        """Structured weather for a city."""
        return Forecast(city=city, celsius=18.5, sunny=True)

    @mcp.tool()
    def refuse(reason: str) -> str:
        """Always fails, as a tool that anticipated the failure does (isError, message kept)."""
        raise ToolError(f"refused: {reason}")

    @mcp.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Reports progress on each step, then answers."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @mcp.tool()
    async def slow(seconds: float) -> str:
        """Sleeps, then answers: lets a client time out and cancel."""
        await anyio.sleep(seconds)
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
        mcp.run("stdio")
        return
    sys.stderr.write(f"{NAME} on http://127.0.0.1:{opts.port}/mcp stateless={opts.stateless}\n")
    mcp.run("streamable-http", host="127.0.0.1", port=opts.port, stateless_http=opts.stateless)


if __name__ == "__main__":
    main()
