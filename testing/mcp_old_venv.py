"""Virtual environments with old releases of the mcp SDK, one for each protocol revision before
2025-11-25, to run testing/mcp_old_server.py as a genuine server of that revision.

Each revision gets the release that first served it (mcp 1.2 is the first with FastMCP, so the
2024-11-05 one), at its last patch. An old SDK asks only for lower bounds of its neighbours, and their
later releases are not what it was made with: each is pinned with the starlette, sse-starlette,
anyio, uvicorn, pydantic and httpx of its own time, so the server stays the one of that time. The
venvs are made once in the user's cache and reused, as testing/mcp1_venv.py makes the mcp 1.30 one.
"""

from dataclasses import dataclass
from pathlib import Path

from .mcp1_venv import Unavailable, cached_venv

SERVER_SCRIPT = Path(__file__).resolve().parent / "mcp_old_server.py"

__all__ = ["OLD_SDKS", "OldSdk", "Unavailable", "old_program", "old_python"]


@dataclass(frozen=True)
class OldSdk:
    version: str  # of mcp
    neighbours: tuple[str, ...]  # pinned as they were when it was released

    @property
    def requirements(self) -> tuple[str, ...]:
        return (f"mcp=={self.version}", *self.neighbours)


# the newest revision each release knows (mcp.types.LATEST_PROTOCOL_VERSION): 1.0-1.8 know
# 2024-11-05, 1.9 2025-03-26, 1.10 up to 1.23.2 2025-06-18
OLD_SDKS = {
    # January 2025: stdio and SSE, one request at a time, no cancellation
    "2024-11-05": OldSdk(
        "1.2.1",
        (
            "anyio==4.8.0",
            "starlette==0.45.3",
            "sse-starlette==2.2.1",
            "uvicorn==0.34.0",
            "pydantic==2.10.6",
            "pydantic-settings==2.7.1",
            "httpx==0.28.1",
            "httpx-sse==0.4.0",
        ),
    ),
    # June 2025: streamable HTTP, progress messages
    "2025-03-26": OldSdk(
        "1.9.4",
        (
            "anyio==4.9.0",
            "starlette==0.47.0",
            "sse-starlette==2.3.6",
            "uvicorn==0.34.3",
            "pydantic==2.11.5",
            "pydantic-settings==2.9.1",
            "python-multipart==0.0.20",
            "httpx==0.28.1",
            "httpx-sse==0.4.0",
        ),
    ),
    # June 2025: the MCP-Protocol-Version header, structured tool results, elicitation
    "2025-06-18": OldSdk(
        "1.10.1",
        (
            "anyio==4.9.0",
            "starlette==0.47.1",
            "sse-starlette==2.3.6",
            "uvicorn==0.34.3",
            "pydantic==2.11.7",
            "pydantic-settings==2.10.1",
            "python-multipart==0.0.20",
            "jsonschema==4.24.0",
            "httpx==0.28.1",
            "httpx-sse==0.4.1",
        ),
    ),
}


def old_python(revision: str) -> Path:
    """The python of a venv holding the mcp release of `revision` (a key of OLD_SDKS) and its pinned
    neighbours; raises Unavailable."""
    sdk = OLD_SDKS[revision]
    return cached_venv(f"mcp-{sdk.version}", sdk.requirements)


def old_program(revision: str) -> tuple[str, str]:
    """testing/mcp_old_server.py run by that venv's python: HttpServer's and serve_http's `program=`,
    or a stdio spec's command and first argument. Raises Unavailable."""
    return (str(old_python(revision)), str(SERVER_SCRIPT))
