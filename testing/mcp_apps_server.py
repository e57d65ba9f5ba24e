"""A real MCP server with an MCP App (extension io.modelcontextprotocol/ui), built with the mcp SDK's
MCPServer and its Apps extension: a counter rendered by testing/mcp_apps_counter.html.

Tools:
- `show_counter` {start, script?, odoo?, undeclared?}: sets the count, renders in the app;
- `counter_add` {amount}: app-only (the model is never offered it);
- `reset_counter`: a plain tool, without an app (for tests: one an app may not call); destructive,
  so a host asks before running it, where the other two run at once.
The count is the process's, shared by every client.

The app's resource declares the server's own HTTP origin as the only one it may connect to
(`--connect-domain` declares another, `--no-csp` none), asks for a border and for clipboard
writes. The server answers `GET /ping` with "pong" to anyone (CORS `*`), for the app's probe of its
declared origin. Like a server of the official SDKs, it tells the tools' app only to a client that
says it renders apps (the extension, with the app MIME type): others get the same tools, text only.

Run it as testing/mcp_servers.py's servers are run, with that file's launchers and this `PROGRAM`:
`HttpServer("streamable-http", program=PROGRAM)`, `server_argv("stdio", program=PROGRAM)`; or by
hand: `python testing/mcp_apps_server.py --transport streamable-http --port 8123`.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

HERE = Path(__file__).resolve()
PROGRAM = (sys.executable, str(HERE))
APP_URI = "ui://counter/app.html"
APP_HTML = HERE.with_name("mcp_apps_counter.html")
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET", "Access-Control-Allow-Headers": "*"}


def build_server(name: str, declared: str | None, csp: bool = True) -> MCPServer:
    """The counter server. `declared`: the origin the app's resource declares it connects to (and
    the app probes); None: no origin, as over stdio. `csp` False: the resource declares nothing."""
    count = {"value": 0}

    def counted(text: str) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structuredContent={"count": count["value"]}
        )

    apps = Apps()

    # not destructive: a host runs them without asking the user first
    harmless = types.ToolAnnotations(destructiveHint=False, idempotentHint=True)

    @apps.tool(resource_uri=APP_URI, title="Counter", annotations=harmless)
    def show_counter(start: int, script: str = "", odoo: str = "", undeclared: str = "") -> types.CallToolResult:
        """Show a counter starting at `start`. For tests: `script` lists steps the app plays once it
        has the result, `odoo` and `undeclared` are origins its probe fetches."""
        count["value"] = start
        return counted(f"Counter at {start}")

    @apps.tool(
        resource_uri=APP_URI,
        visibility=["app"],
        title="Add to the counter",
        annotations=types.ToolAnnotations(destructiveHint=False),
    )
    def counter_add(amount: int) -> types.CallToolResult:
        """Add `amount` to the counter (the app's button)."""
        count["value"] += amount
        return counted(f"Counter at {count['value']}")

    apps.add_html_resource(
        APP_URI,
        APP_HTML.read_text(encoding="utf-8").replace("__DECLARED_ORIGIN__", declared or ""),
        name="counter",
        title="Counter",
        csp=ResourceCsp(connect_domains=[declared]) if csp and declared else None,
        permissions=ResourcePermissions(clipboard_write={}),
        prefers_border=True,
    )

    mcp = MCPServer(name, version="1.0.0", log_level="WARNING", extensions=[apps])

    @mcp.tool(title="Reset the counter", annotations=types.ToolAnnotations(destructiveHint=True))
    def reset_counter() -> types.CallToolResult:
        """Set the counter back to 0."""
        count["value"] = 0
        return counted("Counter at 0")

    @mcp.custom_route("/ping", methods=["GET", "OPTIONS"])
    async def ping(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=CORS)
        return PlainTextResponse("pong", headers=CORS)

    _apps_for_app_clients(mcp)
    return mcp


def _apps_for_app_clients(mcp: MCPServer) -> None:
    """tools/list as MCPServer answers it, but with the tools' `_meta.ui` only for a client that
    renders apps: another shows each tool's text, and an app it cannot render would only mislead it."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams) -> types.ListToolsResult:
        tools = await mcp.list_tools()
        if not client_supports_apps(ctx):
            tools = [_without_app(tool) for tool in tools]
        return types.ListToolsResult(tools=tools)

    # MCPServer has no per-client tool list: its low-level handler is replaced, as
    # testing/mcp_servers.py replaces it to page the list
    mcp._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)


def _without_app(tool: types.Tool) -> types.Tool:
    meta = {key: value for key, value in (tool.meta or {}).items() if key not in ("ui", "ui/resourceUri")}
    return tool.model_copy(update={"meta": meta or None})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="counter-server")
    parser.add_argument(
        "--connect-domain", help="the origin the app declares it connects to (default: this server's, over HTTP)"
    )
    parser.add_argument("--no-csp", action="store_true", help="the app's resource declares no origin at all")
    opts = parser.parse_args()
    own = f"http://127.0.0.1:{opts.port}" if opts.transport != "stdio" else None
    sys.stderr.write(f"{opts.name} starting on {opts.transport}\n")
    sys.stderr.flush()
    mcp = build_server(opts.name, opts.connect_domain or own, csp=not opts.no_csp)
    if opts.transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    app = mcp.sse_app() if opts.transport == "sse" else mcp.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
