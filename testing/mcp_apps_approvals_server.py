"""A real MCP server whose apps call tools that need the user's approval, as the official system
monitor and cohort heatmap examples do, built with the mcp SDK's MCPServer and its Apps extension.
Both apps are testing/mcp_apps_approvals.html.

- `show_stats` (read-only): a dashboard whose app polls `poll_stats` (app only; no annotation, so
  a host asks before running it): three calls at once, then one every `interval_ms`, `polls` in
  all (tool input), then it tells the chat how many ran and how many it had waiting at once.
- `show_cohort` {metric} (for the model and its app; no annotation): a chart whose app calls
  `show_cohort` for another metric as soon as it has the arguments (while the model's call may
  still wait for the user's approval), as an app fetches its own data, and tells the chat.

Run it as testing/mcp_servers.py's servers are run, with that file's launchers and this `PROGRAM`:
`HttpServer("streamable-http", program=PROGRAM)`; or by hand:
`python testing/mcp_apps_approvals_server.py --transport streamable-http --port 8124`.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve()
PROGRAM = (sys.executable, str(HERE))
STATS_URI = "ui://stats/app.html"
COHORT_URI = "ui://cohort/app.html"
APP_HTML = HERE.with_name("mcp_apps_approvals.html")


def build_server(name: str) -> MCPServer:
    polls = {"n": 0}
    apps = Apps()
    page = APP_HTML.read_text(encoding="utf-8")
    apps.add_html_resource(STATS_URI, page.replace("__MODE__", "poll"), name="stats", title="System stats")
    apps.add_html_resource(COHORT_URI, page.replace("__MODE__", "refetch"), name="cohort", title="Cohort chart")

    @apps.tool(resource_uri=STATS_URI, title="System stats", annotations=types.ToolAnnotations(readOnlyHint=True))
    def show_stats(polls: int = 6, interval_ms: int = 2000) -> dict[str, Any]:
        """Show a dashboard of the system's load, which polls for fresh numbers."""
        return {"cpu": 0, "polls": polls, "interval_ms": interval_ms}

    @apps.tool(resource_uri=STATS_URI, visibility=["app"], title="Poll stats")
    def poll_stats() -> dict[str, Any]:
        """The system's load now (for the dashboard)."""
        polls["n"] += 1
        return {"cpu": polls["n"] % 100}

    @apps.tool(resource_uri=COHORT_URI, title="Cohort data")
    def show_cohort(metric: str = "retention") -> dict[str, Any]:
        """Show a cohort chart of `metric`."""
        return {"metric": metric, "rows": [[100, 80, 64], [100, 75]]}

    return MCPServer(name, version="1.0.0", log_level="WARNING", extensions=[apps])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="approvals-server")
    opts = parser.parse_args()
    sys.stderr.write(f"{opts.name} starting on {opts.transport}\n")
    sys.stderr.flush()
    mcp = build_server(opts.name)
    if opts.transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    app = mcp.sse_app() if opts.transport == "sse" else mcp.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
