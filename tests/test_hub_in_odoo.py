"""The MCP hub inside a real Odoo process, with the libraries Odoo pins, against real FastMCP servers."""

import os
import tempfile
from pathlib import Path
from unittest.mock import patch

from odoo.tests import TransactionCase, tagged

from odoo.addons.ai_mcp.hub_process import hub_settings, process_hub, turn_stale_after
from odoo.addons.ai_mcp.odoo_compat import read_config_section
from odoo.addons.ai_mcp.services.errors import ConfigError
from odoo.addons.ai_mcp.services.server_spec import build_server_spec
from odoo.addons.ai_mcp.testing.mcp_servers import serve_http, server_argv


def ai_mcp_section(options):
    """The `[ai_mcp]` section of Odoo's configuration file, as the running series hands it over."""
    return patch("odoo.addons.ai_mcp.hub_process.config_section", return_value=dict(options))


@tagged("post_install", "-at_install")
class TestHubInOdoo(TransactionCase):
    def _check(self, spec):
        hub = process_hub()
        report = hub.run(hub.atest_connection(spec))
        self.assertEqual(report.server.name, "test-server")
        self.assertIn("add", [tool.name for tool in report.tools])
        try:
            # through the pooled session, closed before the server goes away
            result = hub.run(hub.acall_tool(spec, "add", {"a": 2, "b": 3}))
        finally:
            hub.run(hub.aclose_server(spec.key))
        self.assertTrue(result.text_for_model().startswith("5"), result.text_for_model())

    def test_stdio_server(self):
        argv = server_argv("stdio")
        spec = build_server_spec(key="stdio", name="stdio", transport="stdio", command=argv[0], args=argv[1:])
        self._check(spec)

    def test_streamable_http_server(self):
        with serve_http("streamable-http") as server:
            self._check(build_server_spec(key="http", name="http", url=server.url))

    def test_the_ai_mcp_section_of_the_configuration_file_sizes_the_pool(self):
        with ai_mcp_section({"mcp_max_sessions": "7", "mcp_failure_cooldown": "5"}):
            settings = hub_settings()
        self.assertEqual((settings.max_sessions, settings.idle_timeout, settings.failure_cooldown), (7, 300.0, 5.0))
        with ai_mcp_section({"mcp_idle_timeout": "soon"}), self.assertRaises(ConfigError) as bad:
            hub_settings()
        self.assertEqual(bad.exception.field, "mcp_idle_timeout")
        self.assertIn("[ai_mcp] section", bad.exception.message)
        with ai_mcp_section({}):
            self.assertEqual(hub_settings().max_sessions, 32)
            self.assertEqual(turn_stale_after(), 90.0)

    def test_the_ai_mcp_section_sets_when_a_silent_turn_is_taken_over(self):
        with ai_mcp_section({"turn_stale_after": "12"}):
            self.assertEqual(turn_stale_after(), 12.0)
        with ai_mcp_section({"turn_stale_after": "5"}), self.assertRaises(ConfigError) as bad:
            turn_stale_after()
        self.assertEqual(bad.exception.field, "turn_stale_after")
        self.assertIn("at least 6 and at most 3600, not '5'", bad.exception.message)

    def test_the_ai_mcp_section_is_read_from_the_configuration_file(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "odoo.conf"
            path.write_text("[options]\ndb_name = x\n\n[ai_mcp]\nturn_stale_after = 12\nmcp_max_sessions = 7\n")
            self.assertEqual(
                read_config_section(str(path), "ai_mcp"), {"turn_stale_after": "12", "mcp_max_sessions": "7"}
            )
            path.write_text("[options]\ndb_name = x\n\n[ai_mcp]\nturn_stale_after = 30\n")
            # an edit is read again, even within the same second
            os.utime(path, ns=(1, 2))
            self.assertEqual(read_config_section(str(path), "ai_mcp"), {"turn_stale_after": "30"})
            self.assertEqual(read_config_section(str(path), "queue_job"), {})
        self.assertEqual(read_config_section(str(path), "ai_mcp"), {}, "no file, no options")
