"""A virtual environment with the mcp 1.x SDK, to run testing/mcp_servers.py as a genuine mcp 1.x server.

Our client is on mcp 2.x, so the servers of the previous generation (the 2025-11-25 handshake, server
requests for elicitation, logging/setLevel, unsolicited list_changed notifications, SSE) cannot live in
the test venv: they get a venv of their own, made once in the user's cache (keyed by what it holds and
this Python's version) and reused by later runs. A file lock lets parallel test runs share one build
instead of racing two. `cached_venv` is the recipe; testing/fastmcp4_venv.py uses it too.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

MCP1_VERSION = "1.30.0"
# what testing/mcp_servers.py (and its siblings) import besides the standard library
MCP1_REQUIREMENTS = (f"mcp=={MCP1_VERSION}", "uvicorn", "pydantic")
INSTALL_TIMEOUT = 600.0
HERE = Path(__file__).resolve().parent
SERVERS_SCRIPT = HERE / "mcp_servers.py"


class Unavailable(RuntimeError):
    """The venv could not be made (most often: PyPI is out of reach)."""


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ai_mcp"


def cached_venv(name: str, requirements: Sequence[str]) -> Path:
    """The python of a venv in the user's cache holding `requirements`, built on first use under a
    file lock and reused afterwards; raises Unavailable when it cannot be built."""
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:10]
    venv = cache_root() / f"{name}-py{sys.version_info.major}{sys.version_info.minor}-{key}"
    python = venv / "bin" / "python"
    # written last: a venv without it is a build that was interrupted
    done = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], "create the venv")
        _run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
            f"pip install {' '.join(requirements)}",
        )
        done.write_text("\n".join(requirements) + "\n")
    return python


def mcp1_python() -> Path:
    """The python of a venv holding mcp==MCP1_VERSION, uvicorn and pydantic; raises Unavailable."""
    return cached_venv(f"mcp-{MCP1_VERSION}", MCP1_REQUIREMENTS)


def mcp1_program() -> tuple[str, str]:
    """testing/mcp_servers.py run by the mcp 1.x venv's python: HttpServer's and serve_http's `program=`,
    or a stdio spec's command and first argument. Raises Unavailable."""
    return (str(mcp1_python()), str(SERVERS_SCRIPT))


def _run(argv: list[str], what: str) -> None:
    try:
        subprocess.run(
            argv, check=True, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise Unavailable(f"could not {what}: {' / '.join(tail) or f'exit {exc.returncode}'}") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"could not {what}: {exc}") from None
