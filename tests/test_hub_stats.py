"""GET /ai_mcp/hub/stats: the answering process's MCP pool, for AI managers only."""

import os

from odoo.tests import HttpCase, new_test_user, tagged

from odoo.addons.ai_mcp.hub_process import process_hub


@tagged("post_install", "-at_install")
class TestHubStats(HttpCase):
    def test_managers_read_the_pool_of_the_process(self):
        new_test_user(self.env, "stats_manager", groups="base.group_user,ai_mcp.group_ai_manager")
        new_test_user(self.env, "stats_user", groups="base.group_user,ai_mcp.group_ai_user")
        hub = process_hub()
        self.authenticate("stats_manager", "stats_manager")
        response = self.url_open("/ai_mcp/hub/stats")
        self.assertEqual(response.status_code, 200)
        stats = response.json()
        self.assertEqual(stats["pid"], os.getpid(), "the test server runs in this process")
        self.assertGreater(stats["rss_kb"], 0)
        self.assertEqual(stats["hub"]["pid"], hub.pid)
        self.assertEqual(stats["hub"]["max_sessions"], hub.pool.max_sessions)
        self.assertEqual(stats["hub"]["open_sessions"], hub.open_sessions())
        self.assertLessEqual(stats["hub"]["open_sessions"], stats["hub"]["max_sessions"])

        self.authenticate("stats_user", "stats_user")
        response = self.url_open("/ai_mcp/hub/stats")
        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.json()["error"]["code"], "FORBIDDEN")
