"""A real MCP server with MCP Apps (extension io.modelcontextprotocol/ui), built with the mcp SDK's
MCPServer and its Apps extension. It serves one of two tool sets: a counter rendered by
testing/mcp_apps_counter.html (the default), or, with `--board`, a task board.

The counter's tools:
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

The board's (`--board`): `show_board` (for the model and its app) renders ui://board/app.html, which
declares the domains it reaches (with each `--connect-domain`) and the permissions it asks for; its app
calls `refresh_board` and `move_task` (app only; destructive), `archive_board` (app only) and
`rename_board` (app only; it asks the user for the new name);
`summarize_board` is for the model only. `show_clock` renders an app that declares nothing, and
`show_broken` one served with the wrong MIME type: a host must refuse to render it. With
`--schema-probes URL`, also the app-only `filter_board` (its argument's schema is a `$ref` to URL) and
`list_tasks` (an optional boolean).

Run it as testing/mcp_servers.py's servers are run, with that file's launchers and this `PROGRAM`:
`HttpServer("streamable-http", "--board", program=PROGRAM)`, `server_argv("stdio", program=PROGRAM)`; or by
hand: `python testing/mcp_apps_server.py --transport streamable-http --port 8123`.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
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


BOARD_URI = "ui://board/app.html"
BOARD_HTML = "<!doctype html><html><head><title>Board</title></head><body><div id='board'></div></body></html>"
CLOCK_URI = "ui://clock/app.html"
BROKEN_URI = "ui://broken/app.html"
TASKS = {"alpha": ["write the spec", "ship it"]}
READ_ONLY = types.ToolAnnotations(readOnlyHint=True)
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build_board(name: str, extra_connect: list[str], schema_probes: str = "") -> MCPServer:
    """The task board server; `extra_connect`: further origins the board declares it connects to;
    `schema_probes`: a URL for the app-only `filter_board` to refer to (see _board_schema_probes)."""
    apps = Apps()
    _add_board_resources(apps, extra_connect)
    _add_board_tools(apps)
    if schema_probes:
        _board_schema_probes(apps)
    mcp = MCPServer(name, log_level="WARNING", extensions=[apps])
    if schema_probes:
        # the listed schema, in place of the one MCPServer derives (it still checks a call's
        # arguments against the signature)
        filter_schema = {"type": "object", "properties": {"status": {"$ref": schema_probes}}, "required": ["status"]}
        mcp._tool_manager.get_tool("filter_board").parameters = filter_schema
    _add_plain_extras(mcp)
    return mcp


def _add_board_resources(apps: Apps, extra_connect: list[str]) -> None:
    """The board's app, declaring every kind of origin and permission, and the clock's."""
    apps.add_html_resource(
        BOARD_URI,
        BOARD_HTML,
        title="Task board",
        csp=ResourceCsp(
            connect_domains=["https://api.example.com", "*", "https:", "wss://live.example.com:8443", *extra_connect],
            resource_domains=["https://cdn.example.com", "'self'", "https://cdn.example.com/lib.js"],
            frame_domains=["https://*.youtube.com"],
        ),
        permissions=ResourcePermissions(camera={}, microphone={}, clipboard_write={}),
        prefers_border=True,
    )
    apps.add_html_resource(CLOCK_URI, "<html><body><p id='clock'>12:00</p></body></html>", title="Clock")


def _add_board_tools(apps: Apps) -> None:
    """The board's tools, for the model, for its app or for both, and the clock's."""

    @apps.tool(resource_uri=BOARD_URI, title="Task board", annotations=READ_ONLY)
    def show_board(project: str) -> dict[str, Any]:
        """Show a project's task board."""
        return {"project": project, "tasks": TASKS.get(project, [])}

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Refresh board", annotations=READ_ONLY)
    def refresh_board(project: str) -> dict[str, Any]:
        """The board's tasks, for its app."""
        return {"project": project, "tasks": TASKS.get(project, []), "refreshed": True}

    @apps.tool(
        resource_uri=BOARD_URI,
        visibility=["app"],
        title="Move task",
        annotations=types.ToolAnnotations(destructiveHint=True),
    )
    def move_task(task: str, column: str) -> str:
        """Move a task to another column."""
        return f"moved {task} to {column}"

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Archive board", annotations=READ_ONLY)
    def archive_board(project: str) -> str:
        """Archive the board."""
        return f"archived {project}"

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Rename board", annotations=READ_ONLY)
    async def rename_board(project: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the user for the board's new name, then rename it."""
        question = types.ElicitRequestFormParams(
            message=f"What should {project} be called?", requested_schema=NAME_FORM
        )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # 2026-07-28: the question goes back in the result, the answer comes with the retry
            answer = (ctx.input_responses or {}).get("name")
            if ctx.request_state != "name" or not isinstance(answer, types.ElicitResult):
                return types.InputRequiredResult(
                    input_requests={"name": types.ElicitRequest(params=question)}, request_state="name"
                )
        else:
            answer = await ctx.session.elicit_form(question.message, NAME_FORM, related_request_id=ctx.request_id)
        if answer.action != "accept" or not answer.content:
            return f"{project} not renamed: {answer.action}"
        return f"renamed {project} to {answer.content['name']}"

    @apps.tool(resource_uri=BOARD_URI, visibility=["model"], title="Summarize board", annotations=READ_ONLY)
    def summarize_board(project: str) -> str:
        """Summarize the board in a sentence."""
        return f"{project}: {len(TASKS.get(project, []))} tasks"

    @apps.tool(resource_uri=CLOCK_URI, title="Clock", annotations=READ_ONLY)
    def show_clock() -> str:
        """Show the time."""
        return "12:00"


def _add_plain_extras(mcp: MCPServer) -> None:
    """Beside the apps: a plain resource, and an app resource served as plain HTML."""

    @mcp.resource("board://tasks", name="tasks", mime_type="application/json")
    def tasks() -> str:
        return '{"alpha": ["write the spec", "ship it"]}'

    # an app resource under a plain HTML type
    @mcp.resource(BROKEN_URI, name="broken", mime_type="text/html")
    def broken() -> str:
        return "<p>not an app</p>"

    @mcp.tool(title="Broken", annotations=READ_ONLY, meta={"ui": {"resourceUri": BROKEN_URI}})
    def show_broken() -> str:
        """Show the broken app."""
        return "broken"


def _board_schema_probes(apps: Apps) -> None:
    """App-only tools whose schemas probe how a host reads them: `filter_board`, whose argument's
    schema is a `$ref` to another address (a host must not fetch it), and `list_tasks`, with an
    optional boolean that does not allow null."""

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Filter board", annotations=READ_ONLY)
    def filter_board(status: str) -> str:
        """The tasks of a status."""
        return f"tasks {status}"

    @apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="List tasks", annotations=READ_ONLY)
    def list_tasks(project: str, verbose: bool = False) -> str:
        """The board's tasks, with details when `verbose`."""
        return f"{project}: verbose={verbose}"


def _apps_for_app_clients(mcp: MCPServer) -> None:
    """tools/list as MCPServer answers it, but with the tools' `_meta.ui` only for a client that
    renders apps: another shows each tool's text, and an app it cannot render would only mislead it."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams) -> types.ListToolsResult:
        tools = await mcp.list_tools()
        if not client_supports_apps(ctx):
            tools = [_without_app(tool) for tool in tools]
        return types.ListToolsResult(tools=tools)

    # MCPServer has no per-client tool list: its low-level handler is replaced, as
    # testing/mcp_catalogue.py replaces it to page the list
    mcp._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)


def _without_app(tool: types.Tool) -> types.Tool:
    meta = {key: value for key, value in (tool.meta or {}).items() if key not in ("ui", "ui/resourceUri")}
    return tool.model_copy(update={"meta": meta or None})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="counter-server")
    parser.add_argument("--board", action="store_true", help="serve the task board's tools instead of the counter")
    parser.add_argument(
        "--connect-domain",
        action="append",
        default=[],
        help="an origin the app declares it connects to: the counter's only one (default: this server's, over "
        "HTTP); the board's, repeated, are added to its own",
    )
    parser.add_argument("--no-csp", action="store_true", help="the app's resource declares no origin at all")
    parser.add_argument(
        "--schema-probes", default="", metavar="URL", help="the board's schema probes, whose remote $ref is URL"
    )
    opts = parser.parse_args()
    own = f"http://127.0.0.1:{opts.port}" if opts.transport != "stdio" else None
    sys.stderr.write(f"{opts.name} starting on {opts.transport}\n")
    sys.stderr.flush()
    if opts.board:
        mcp = build_board(opts.name, opts.connect_domain, opts.schema_probes)
    else:
        declared = opts.connect_domain[0] if opts.connect_domain else own
        mcp = build_server(opts.name, declared, csp=not opts.no_csp)
    if opts.transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    app = mcp.sse_app() if opts.transport == "sse" else mcp.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
