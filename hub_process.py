"""The process's MCP hub, as the Odoo side gets it: sized by the `[ai_mcp]` section of Odoo's
configuration file, as OCA's queue_job reads `[queue_job]`.

    [ai_mcp]
    mcp_max_sessions = 32      ; pooled MCP sessions of one Odoo process at most
    mcp_idle_timeout = 300     ; seconds an unused session is kept open
    mcp_failure_cooldown = 30  ; seconds a server that failed to connect is not tried again

Each Odoo process (each prefork worker, the gevent worker, the threaded server) has its own hub
with these settings.
"""

from odoo.tools import config

from .services.hub import HubSettings, McpHub, get_hub, running_hub

SECTION = "ai_mcp"

__all__ = ["process_hub", "running_hub"]


def hub_settings() -> HubSettings:
    """The `[ai_mcp]` options of Odoo's configuration file; ConfigError names a bad one."""
    return HubSettings.from_options(config.misc.get(SECTION, {}))


def process_hub() -> McpHub:
    """The hub of this Odoo process, started on first use."""
    return get_hub(hub_settings())
