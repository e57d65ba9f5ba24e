"""A real streamable-HTTP MCP server whose tool declares header parameters (`x-mcp-header` in its
input schema, 2026-07-28), recording the headers of every request it receives: a test reads what
the client mirrored into `Mcp-Param-*` headers."""

from __future__ import annotations

import json
from typing import Any

from mcp import types
from mcp.server.mcpserver import MCPServer

from .mcp_asgi import read_body, replay
from .thread_server import ThreadServer

# routed by the server's load balancer on its region: a header parameter, as SEP-2243 has it
HEADER_TOOL = types.Tool(
    name="forecast",
    description="The weather forecast of a region.",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
            "detail": {"type": "string"},
        },
        "required": ["region"],
    },
)


class ParamHeaderServer(ThreadServer):
    """`requests`: (JSON-RPC method, the request's headers, lower-cased) of each POST, in order."""

    label = "MCP test server"
    thread_name = "param-headers"

    def __init__(self) -> None:
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.requests: list[tuple[str, dict[str, str]]] = []

    def headers_of(self, method: str) -> list[dict[str, str]]:
        return [headers for name, headers in self.requests if name == method]

    def _app(self) -> Any:
        mcp = MCPServer("forecasts")

        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[HEADER_TOOL])

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            region = (params.arguments or {})["region"]
            return types.CallToolResult(content=[types.TextContent(text=f"sunny in {region}")])

        mcp._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
        mcp._lowlevel_server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
        app = mcp.streamable_http_app()

        async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["method"] == "POST":
                body = await read_body(receive)
                try:
                    method = str(json.loads(body).get("method"))
                except (ValueError, AttributeError):
                    method = ""
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
                self.requests.append((method, headers))
                receive = replay(body, receive)
            await app(scope, receive, send)

        return recording
