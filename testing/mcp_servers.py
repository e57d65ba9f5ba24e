"""Real MCP servers for tests and benchmarks, built with the mcp SDK's MCPServer (FastMCP in mcp 1.x).

Run as a script (`python testing/mcp_servers.py --transport streamable-http --port 8123`) so a test
can kill it mid-call; `serve_http()` and `server_argv()` start it from Python.

The same file runs on mcp 2.x (the test venv) and on mcp 1.x (testing/mcp1_venv.py's venv, through the
import shim of mcp_sdk.py), so a test can put our client in front of a genuine server of either generation.
On mcp 2.x, `--era` picks what the server speaks: `dual` (the SDK's default: the 2025 `initialize`
handshake or the 2026-07-28 per-request envelope, whichever the client opens with), `modern`
(2026-07-28 only) or `legacy` (the handshake only: `server/discover` is answered as a server of the
previous generation answers it, so a client in auto mode falls back to `initialize`). mcp 1.x
serves the handshake only.

The server is built in mcp_catalogue.py (with the optional sets of mcp_tool_sets.py) on the SDK
of mcp_sdk.py, served as mcp_asgi.py says, and started from Python by mcp_launch.py's helpers,
all importable from here as before.
"""

import argparse
import sys
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

if not __package__:
    # Run as a file (also by another venv's python, testing/mcp1_venv.py): sys.path holds this
    # directory, not its parent, so the siblings are loaded as the package `testing` they are.
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        "testing", Path(__file__).with_name("__init__.py"), submodule_search_locations=[str(Path(__file__).parent)]
    )
    sys.modules["testing"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["testing"])
    __package__ = "testing"

from .mcp_asgi import (  # noqa: E402
    bearer_guard,
    garbler,
    header,
    legacy_only_asgi,
    modern_only_asgi,
    read_body,
    replay,
    serve_era_on_streams,
)
from .mcp_catalogue import build_server  # noqa: E402
from .mcp_launch import HttpServer, free_port, serve_http, server_argv  # noqa: E402
from .mcp_sampling_tools import add_sampling_tools  # noqa: E402
from .mcp_sdk import HANDSHAKE_PROTOCOL_VERSIONS, MCP2, MODERN_PROTOCOL_VERSIONS, MCPServer  # noqa: E402
from .mcp_tool_sets import DEFAULTS_FORM, DEFAULTS_FORM_UNTOUCHED, PNG_1PX  # noqa: E402
from .tool_catalogue import CATALOGUES, serve_catalogue  # noqa: E402

__all__ = [
    "DEFAULTS_FORM",
    "DEFAULTS_FORM_UNTOUCHED",
    "ERAS",
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "HERE",
    "MODERN_PROTOCOL_VERSIONS",
    "PNG_1PX",
    "HttpServer",
    "build_server",
    "free_port",
    "header",
    "legacy_only_asgi",
    "main",
    "modern_only_asgi",
    "read_body",
    "replay",
    "serve_http",
    "server_argv",
]

ERAS = ("dual", "modern", "legacy")
HERE = Path(__file__).resolve()


def main() -> None:
    parser = _parser()
    opts = parser.parse_args()
    era = opts.era or ("dual" if MCP2 else "legacy")
    if not MCP2 and era != "legacy":
        parser.error(f"--era {era}: mcp {installed_version('mcp')} serves the handshake era only (legacy)")
    sys.stderr.write(f"{opts.name} starting on {opts.transport}\n")
    sys.stderr.flush()
    mcp = build_server(
        opts.name,
        opts.tools,
        opts.page_size,
        opts.state_dir,
        opts.variant,
        opts.transport,
        opts.bad_tools,
        opts.notifying,
        opts.prompts,
        opts.resources,
        opts.stateless,
        opts.cache_ttl_ms,
        opts.cache_scope,
        opts.schema_probes,
        opts.completions,
    )
    if opts.sampling:
        add_sampling_tools(mcp)
    if opts.catalogue:
        serve_catalogue(mcp, opts.catalogue)
    if MCP2:
        serve_era_on_streams(mcp, era)
    if opts.transport == "stdio":
        mcp.run("stdio")
        return
    import uvicorn

    uvicorn.run(_http_app(mcp, opts, era), host="127.0.0.1", port=opts.port, log_level="warning", lifespan="on")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "sse", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="test-server")
    parser.add_argument("--tools", type=int, default=0, help="extra numbered tools")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--token", default="")
    parser.add_argument("--forbidden-token", default="", help="with --token: this token is answered 403, others 401")
    parser.add_argument("--state-dir", type=Path)
    parser.add_argument("--variant", action="store_true", help="echo with another description")
    parser.add_argument(
        "--bad-tools",
        action="store_const",
        const="schema",
        default="",
        help="tools/list also gives echo twice and a tool whose schema is not a JSON schema",
    )
    parser.add_argument(
        "--non-object-tool",
        action="store_const",
        const="non-object",
        dest="bad_tools",
        help="tools/list also gives a tool whose arguments are not an object (against the protocol)",
    )
    parser.add_argument(
        "--schema-probes", default="", metavar="URL", help="also the schema probes, whose remote $ref is URL"
    )
    parser.add_argument("--notifying", action="store_true", help="also the tools progress, chatty and grow")
    parser.add_argument("--sampling", action="store_true", help="also ask_model (sampling) and sampling_offered")
    parser.add_argument("--prompts", action="store_true", help="also the prompts daily_summary, greeting and review")
    parser.add_argument("--resources", action="store_true", help="also resources, a template, link_note and embed_dot")
    parser.add_argument(
        "--completions", action="store_true", help="completion/complete for the greeting and the day note's day"
    )
    parser.add_argument(
        "--era",
        choices=ERAS,
        help="mcp 2.x: dual (the default: 2026-07-28 or the handshake, as the client opens), modern "
        "(2026-07-28 only) or legacy (the handshake only); mcp 1.x serves the handshake only (legacy)",
    )
    parser.add_argument("--stateless", action="store_true", help="streamable HTTP without sessions (handshake era)")
    parser.add_argument(
        "--catalogue", choices=CATALOGUES, help="mcp 2.x: serve these real-looking tools instead (tool_catalogue.py)"
    )
    parser.add_argument(
        "--cache-ttl-ms", type=int, help="mcp 2.x: tools/, prompts/ and resources/list say they stay fresh this long"
    )
    parser.add_argument("--cache-scope", choices=["public", "private"], default="private", help="with --cache-ttl-ms")
    return parser


def _http_app(mcp: MCPServer, opts: argparse.Namespace, era: str) -> Any:
    """The server's ASGI app for its HTTP transport and era, behind the garbler and the token guard."""
    if opts.transport == "sse":
        app = mcp.sse_app()
    elif MCP2:
        app = mcp.streamable_http_app(stateless_http=opts.stateless)
        app = {"modern": modern_only_asgi, "legacy": legacy_only_asgi}.get(era, lambda app: app)(app)
    else:
        app = mcp.streamable_http_app()
    app = garbler(app)
    if opts.token:
        app = bearer_guard(app, opts.token, opts.forbidden_token)
    return app


if __name__ == "__main__":
    main()
