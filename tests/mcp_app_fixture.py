"""A real MCP server with MCP Apps, for the app host's tests: run as a script
(`python tests/mcp_app_fixture.py --transport streamable-http --port 8123`), as
testing/mcp_servers.py's HttpServer starts servers.

A task board: `show_board` (for the model and its app) renders ui://board/app.html, which declares
the domains it reaches and the permissions it asks for; its app calls `refresh_board` and
`move_task` (app only; moving needs the user's approval) and `archive_board` (app only, disabled for
the assistant by the tests); `summarize_board` is for the model only. `show_clock` renders an app
that declares nothing, and `show_broken` one served with the wrong MIME type.
"""

import argparse
from typing import Any

import uvicorn
from mcp import types
from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions
from mcp.server.mcpserver import MCPServer

BOARD_URI = "ui://board/app.html"
BOARD_HTML = "<!doctype html><html><head><title>Board</title></head><body><div id='board'></div></body></html>"
CLOCK_URI = "ui://clock/app.html"
CLOCK_HTML = "<html><body><p id='clock'>12:00</p></body></html>"
BROKEN_URI = "ui://broken/app.html"
TASKS = {"alpha": ["write the spec", "ship it"]}
READ_ONLY = types.ToolAnnotations(readOnlyHint=True)


def build(extra_connect: list[str]) -> MCPServer:
    apps = Apps()
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
    apps.add_html_resource(CLOCK_URI, CLOCK_HTML, title="Clock")

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

    @apps.tool(resource_uri=BOARD_URI, visibility=["model"], title="Summarize board", annotations=READ_ONLY)
    def summarize_board(project: str) -> str:
        """Summarize the board in a sentence."""
        return f"{project}: {len(TASKS.get(project, []))} tasks"

    @apps.tool(resource_uri=CLOCK_URI, title="Clock", annotations=READ_ONLY)
    def show_clock() -> str:
        """Show the time."""
        return "12:00"

    mcp = MCPServer("apps-fixture", log_level="WARNING", extensions=[apps])

    @mcp.resource("board://tasks", name="tasks", mime_type="application/json")
    def tasks() -> str:
        return '{"alpha": ["write the spec", "ship it"]}'

    # an app resource under a plain HTML type: a host must refuse to render it
    @mcp.resource(BROKEN_URI, name="broken", mime_type="text/html")
    def broken() -> str:
        return "<p>not an app</p>"

    @mcp.tool(title="Broken", annotations=READ_ONLY, meta={"ui": {"resourceUri": BROKEN_URI}})
    def show_broken() -> str:
        """Show the broken app."""
        return "broken"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["streamable-http"], default="streamable-http")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connect", action="append", default=[], help="a further connect domain the board declares")
    opts = parser.parse_args()
    app = build(opts.connect).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
