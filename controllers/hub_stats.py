"""GET /ai_mcp/hub/stats: the MCP session pool of the Odoo process that answers, for AI managers.

Each Odoo process (each prefork HTTP worker, the gevent worker that serves the chat streams behind
docs/operators.md's proxy, or the one threaded server) has its own hub and pool (docs/architecture.md, Processes), so
the answer describes one process: ask the gevent port for the turns' pool, poll the HTTP port a few
times to see its workers, or scrape each node. A process that has not run a turn yet has no hub, and says so
without starting one.
"""

import os
import threading

from odoo import http
from odoo.http import request

from ..hub_process import running_hub


class HubStatsController(http.Controller):
    @http.route("/ai_mcp/hub/stats", type="http", auth="user", methods=["GET"])
    def hub_stats(self, **_query):
        if not request.env.user.has_group("ai_mcp.group_ai_manager"):
            return request.make_json_response(
                {"error": {"code": "FORBIDDEN", "message": "Only AI managers may read the MCP hub's statistics."}},
                status=403,
            )
        hub = running_hub()
        running = hub is not None and hub.pid == os.getpid()
        return request.make_json_response(
            {
                "pid": os.getpid(),
                "rss_kb": _rss_kb(),
                "threads": threading.active_count(),
                "hub": hub.stats() if running else None,
            },
            headers=[("Cache-Control", "no-store")],
        )


def _rss_kb():
    """Resident memory of this process, from /proc (Linux); None elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None  # no /proc: not Linux
    return None
