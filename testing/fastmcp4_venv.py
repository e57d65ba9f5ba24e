"""A virtual environment with FastMCP 4 (the standalone framework, built on the mcp 2.x SDK), for the
server in testing/fastmcp4_server.py.

FastMCP pins its own versions of the SDK's neighbours, so it gets a venv of its own in the user's
cache, made once and reused, as testing/mcp1_venv.py makes the mcp 1.x one.
"""

from pathlib import Path

from .mcp1_venv import Unavailable, cached_venv

FASTMCP_VERSION = "4.2.3"
FASTMCP_REQUIREMENTS = (f"fastmcp=={FASTMCP_VERSION}",)
SERVER_SCRIPT = Path(__file__).resolve().parent / "fastmcp4_server.py"

__all__ = ["FASTMCP_VERSION", "Unavailable", "fastmcp4_program", "fastmcp4_python"]


def fastmcp4_python() -> Path:
    """The python of a venv holding fastmcp==FASTMCP_VERSION; raises Unavailable."""
    return cached_venv(f"fastmcp-{FASTMCP_VERSION}", FASTMCP_REQUIREMENTS)


def fastmcp4_program() -> tuple[str, str]:
    """testing/fastmcp4_server.py run by that venv's python: HttpServer's and serve_http's `program=`,
    or a stdio spec's command and first argument. Raises Unavailable."""
    return (str(fastmcp4_python()), str(SERVER_SCRIPT))
