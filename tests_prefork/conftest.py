"""What every test module of a real prefork Odoo shares."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def state_dir() -> Iterator[Path]:
    """A folder the module's test MCP servers keep their state in (e.g. the gate tool's)."""
    with tempfile.TemporaryDirectory(prefix="ai_mcp-prefork-state.") as path:
        yield Path(path)
