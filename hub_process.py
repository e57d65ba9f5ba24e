"""The process's MCP hub and the turns' heartbeat limit, as the Odoo side gets them: from the
`[ai_mcp]` section of Odoo's configuration file, as OCA's queue_job reads `[queue_job]`.

    [ai_mcp]
    mcp_max_sessions = 32      ; pooled MCP sessions of one Odoo process at most
    mcp_idle_timeout = 300     ; seconds an unused session is kept open
    mcp_failure_cooldown = 30  ; seconds a server that failed to connect is not tried again
    turn_stale_after = 90      ; seconds (6 to 3600) a running turn may go without a heartbeat
                               ; before another request takes it over as dead; it writes one
                               ; every sixth of this (15 s)

Each Odoo process (each prefork worker, the gevent worker, the threaded server) has its own hub
with these settings. Every process and node of a database must have the same `turn_stale_after`:
the one that writes a turn's heartbeats and the one that judges them are often not the same.
"""

from .odoo_compat import config_section
from .services.limits import TURN_STALE_AFTER
from .services.mcp import HubSettings, McpHub, get_hub, running_hub

SECTION = "ai_mcp"
STALE_OPTION = "turn_stale_after"

__all__ = ["process_hub", "running_hub", "turn_stale_after"]


def hub_settings() -> HubSettings:
    """The `[ai_mcp]` options of Odoo's configuration file; ConfigError names a bad one."""
    return HubSettings.from_options(config_section(SECTION))


def process_hub() -> McpHub:
    """The hub of this Odoo process, started on first use."""
    return get_hub(hub_settings())


def turn_stale_after() -> float:
    """Seconds without a heartbeat after which a running turn died with its process (`[ai_mcp]
    turn_stale_after`); ConfigError names a bad value."""
    return TURN_STALE_AFTER.from_option(config_section(SECTION), STALE_OPTION)
