"""A server that announces a changed tool list is synced again at once, in the background.

Pooled sessions hear `notifications/tools/list_changed` (and resources/prompts) on the hub's loop.
The sync itself needs a cursor and calls back into the hub, so it runs in a thread of its own,
once per burst of announcements; it goes through _sync_tools like the daily cron, so a tool whose
description or schema changed is set aside for review and never offered before.
"""

import logging
import threading
import weakref

from odoo import SUPERUSER_ID, api, models
from odoo.modules.registry import Registry

_logger = logging.getLogger(__name__)

# announcements of one server within this many seconds make one sync
SYNC_DELAY_SECONDS = 1.0

_watched_hubs = weakref.WeakSet()
_scheduled = set()
_running = set()
_lock = threading.Lock()
_idle = threading.Condition(_lock)


class McpServer(models.Model):
    _inherit = "mcp.server"

    @api.model
    def _watch_list_changes(self, hub):
        """Have `hub` (this process's) tell this module when a pooled server's lists change."""
        with _lock:
            if hub in _watched_hubs:
                return
            _watched_hubs.add(hub)
        hub.pool.list_changed_listeners.append(_on_list_changed)


def _on_list_changed(spec, kind):
    """Called on the hub's loop: never block it."""
    target = _record_of(spec.key)
    if target is None or kind != "tools":
        return
    with _lock:
        if target in _scheduled:
            return
        _scheduled.add(target)
    timer = threading.Timer(SYNC_DELAY_SECONDS, _sync, args=target)
    timer.daemon = True
    timer.start()


def _record_of(key):
    """(database, id) of an mcp.server pool key "db/mcp.server/42", or None for another key."""
    dbname, _sep, rest = key.partition("/mcp.server/")
    return (dbname, int(rest)) if rest.isdigit() else None


def _sync(dbname, server_id):
    target = (dbname, server_id)
    with _lock:
        _scheduled.discard(target)
        _running.add(target)
    try:
        with Registry(dbname).cursor() as cr:
            server = api.Environment(cr, SUPERUSER_ID, {})["mcp.server"].browse(server_id).exists()
            if server and server.active:
                result = server._sync_tools()
                _logger.info("MCP tools re-synced after list_changed: server=%s result=%s", server.name, result)
    except Exception:  # a background sync must not take the thread's caller down; the next sync retries
        _logger.exception("MCP tools re-sync after list_changed failed: database=%s server=%s", dbname, server_id)
    finally:
        with _lock:
            _running.discard(target)
            _idle.notify_all()


def wait_for_background_syncs(timeout=30.0):
    """Block until no announced sync is waiting or running; whether that happened within `timeout`.

    An HTTP test's cursor is shared by every thread of the process: a sync running beside the
    test's own queries would interleave with them on one connection, so tests wait here before
    they query again (and before their transaction is rolled back).
    """
    with _lock:
        return _idle.wait_for(lambda: not _scheduled and not _running, timeout=timeout)
