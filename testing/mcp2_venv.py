"""A virtual environment with the mcp 2.x SDK, for the server in mcp2_server.py.

Our client is pinned to mcp 1.x, so a 2.x server cannot live in the test venv: it gets a venv of its
own, made once in the user's cache (keyed by the pinned mcp and this Python's version) and reused by
later runs. A file lock lets parallel test runs share one build instead of racing two.
"""

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

MCP2_VERSION = "2.3.0"
INSTALL_TIMEOUT = 600.0


class Mcp2Unavailable(RuntimeError):
    """The venv could not be made (most often: PyPI is out of reach)."""


def venv_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "ai_mcp" / f"mcp2-venv-{MCP2_VERSION}-py{sys.version_info.major}{sys.version_info.minor}"


def mcp2_python() -> Path:
    """The python of a venv holding mcp==MCP2_VERSION, built on first use; raises Mcp2Unavailable."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    # written last: a venv without it is a build that was interrupted
    done = venv / ".mcp-installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], "create the venv")
        _run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"mcp=={MCP2_VERSION}"],
            f"pip install mcp=={MCP2_VERSION}",
        )
        done.write_text(f"mcp=={MCP2_VERSION}\n")
    return python


def _run(argv: list[str], what: str) -> None:
    try:
        subprocess.run(
            argv, check=True, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise Mcp2Unavailable(f"could not {what}: {' / '.join(tail) or f'exit {exc.returncode}'}") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Mcp2Unavailable(f"could not {what}: {exc}") from None
