"""Tools that run in the process itself rather than over MCP: the tools of a server whose
transport is `odoo` (the Odoo the addon runs in). The Odoo layer gives the turn an implementation;
the runner calls it in a worker thread, since it blocks (a database cursor of its own)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..events import RecordChange
from ..tool_result import ToolResult


class LocalTools(ABC):
    """Runs the calls of local tools for one turn's user."""

    @abstractmethod
    def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """The result of `tool` called with `arguments`; a refusal is an error result, never raised."""

    @abstractmethod
    def changes(self, tool: str, arguments: dict[str, Any]) -> list[RecordChange]:
        """What the call would change, computed without changing anything (empty: it changes nothing
        that can be listed, or it would fail: the call says why when it runs)."""
