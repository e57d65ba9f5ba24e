"""The process's MCP hub, as the Odoo side gets it."""

from .services.hub import McpHub, get_hub


def process_hub() -> McpHub:
    """The hub of this Odoo process (started on first use)."""
    return get_hub()
