"""The mcp SDK's server API as the test servers use it, on mcp 2.x or on mcp 1.x.

testing/mcp_servers.py runs on mcp 2.x (the test venv) and on mcp 1.x (testing/mcp1_venv.py's venv):
the servers import the SDK from here only, so the same code serves a genuine server of either
generation. `MCP2` says which one is installed.
"""

import warnings

from mcp import types

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MCP2",
    "MODERN_PROTOCOL_VERSIONS",
    "Asking",
    "CacheHint",
    "Context",
    "Image",
    "MCPServer",
    "ToolError",
    "prompt_base",
    "render_elicitation_schema",
    "_serve_modern_stream",
    "serve_loop",
]

try:  # mcp 2.x
    from mcp.server.caching import CacheHint
    from mcp.server.elicitation import render_elicitation_schema
    from mcp.server.mcpserver import Context, Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.prompts import base as prompt_base
    from mcp.server.runner import _serve_modern_stream, serve_loop
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    MCP2 = True
    # Asking the user returns this on 2026-07-28 (the client answers and calls again); the SDK
    # leaves it out of the tool's output schema.
    Asking = str | types.InputRequiredResult
    # log messages are deprecated at 2026-07-28 but still delivered to a request that opts in
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
except ImportError:  # mcp 1.x: the very same server, as a genuine mcp 1.x one
    from mcp.server.fastmcp import Context, Image
    from mcp.server.fastmcp import FastMCP as MCPServer
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.server.fastmcp.prompts import base as prompt_base

    MCP2 = False
    Asking = str  # type: ignore[misc]
    HANDSHAKE_PROTOCOL_VERSIONS = ()
    MODERN_PROTOCOL_VERSIONS = ()
    # mcp 2.x only, used under `if MCP2` only; defined so that the same imports work on both
    CacheHint = render_elicitation_schema = serve_loop = _serve_modern_stream = None
