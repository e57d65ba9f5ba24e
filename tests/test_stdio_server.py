"""A stdio server run by Odoo: the limits its process gets (not the worker's), and what the admin,
the log and the chat are told when it cannot start, with testing/limits_server.py, a real MCP server."""

import resource
import sys
from pathlib import Path

from odoo.tests import tagged
from odoo.tools import config, mute_logger

from ..hub_process import process_hub
from .common import AiMcpCase

SERVER = Path(__file__).resolve().parents[1] / "testing" / "limits_server.py"
SESSION_LOGGER = "odoo.addons.ai_mcp.services.mcp.session"
MIB = 1024 * 1024


@tagged("post_install", "-at_install")
class TestStdioServer(AiMcpCase):
    def setUp(self):
        super().setUp()
        self.set_param("ai_mcp.allow_stdio", "True")

    def stdio_server(self, name, *args, **values):
        server = self.Server.with_user(self.admin).create(
            {
                "name": name,
                "transport": "stdio",
                "command": sys.executable,
                "args": "\n".join([str(SERVER), *args]),
                **values,
            }
        )
        self.addCleanup(self.close_pooled, server)
        return server.sudo()

    def call(self, server, tool, arguments):
        hub = process_hub()
        return hub.run(hub.acall_tool(server._server_spec(), tool, arguments))

    def test_a_stdio_server_is_not_held_to_the_memory_limit_of_odoos_worker(self):
        worker_limit, hard = resource.getrlimit(resource.RLIMIT_AS)
        if worker_limit == resource.RLIM_INFINITY:
            self.skipTest("this Odoo runs without limit_memory_hard")
        self.assertEqual(worker_limit, config["limit_memory_hard"])
        server = self.stdio_server("Notation")
        action = server.action_test_connection()
        self.assertEqual(action["params"]["type"], "success", action["params"]["message"])
        limits = self.call(server, "limits", {}).parts[-1].data
        self.assertEqual(limits["address_space"], None if hard == resource.RLIM_INFINITY else hard)
        # more address space than the worker may have: what Node's WebAssembly reserves
        reserve = worker_limit // MIB + 512
        self.assertEqual(self.call(server, "reserve", {"mib": reserve}).text_for_model(), f"took {reserve} MiB")

    def test_the_memory_limit_of_a_server_bounds_its_process(self):
        server = self.stdio_server("Bounded", memory_limit_mb=256)
        self.assertEqual(server._server_spec().memory_limit_mb, 256)
        self.assertEqual(self.call(server, "limits", {}).parts[-1].data["data"], 256 * MIB)
        self.assertEqual(self.call(server, "reserve", {"mib": 512}).text_for_model(), "out of memory for 512 MiB")
        server.memory_limit_mb = 0  # no limit of its own: a new session, without it
        self.assertIsNone(server._server_spec().memory_limit_mb)
        self.assertIsNone(self.call(server, "limits", {}).parts[-1].data["data"])

    def test_a_server_that_cannot_start_shows_its_stack_trace_to_the_admin_and_in_the_log(self):
        server = self.stdio_server("sheet-music", "--crash")
        with self.assertLogs(SESSION_LOGGER, "WARNING") as logs:
            action = server.action_test_connection()
        params = action["params"]
        self.assertEqual(params["type"], "danger")
        self.assertIn("Its output (stderr):", params["message"])
        self.assertIn("limits-server v1.0.0", params["message"])
        self.assertIn(
            "Last output: RuntimeError: cannot load the configuration from /etc/limits-server.json", params["message"]
        )
        self.assertNotIn("URL", params["message"])
        self.assertIn("RuntimeError: cannot load the configuration from /etc/limits-server.json", params["message"])
        self.assertEqual(server.state, "error")
        for shown in (server.last_stderr, server.stderr_tail):
            lines = shown.splitlines()
            self.assertEqual((lines[0], lines[-1]), ("limits-server: starting", "limits-server v1.0.0"))
            self.assertIn("Traceback (most recent call last):", lines)
        logged = "\n".join(logs.output)
        self.assertIn("server=sheet-music", logged)
        self.assertIn("RuntimeError: cannot load the configuration", logged)
        with mute_logger(SESSION_LOGGER):
            result = server.action_sync_tools()
        self.assertEqual(result["params"]["type"], "danger")
        self.assertIn("Traceback (most recent call last):", result["params"]["message"])

    def test_the_chat_warns_of_an_assistants_server_that_could_not_start(self):
        server = self.stdio_server("sheet-music", "--crash")
        provider = self.env["ai.provider"].create(
            {"name": "P", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "default_model": "m"}
        )
        assistant = self.env["ai.assistant"].create(
            {"name": "Scores", "provider_id": provider.id, "mcp_server_ids": [(6, 0, server.ids)]}
        )
        with mute_logger(SESSION_LOGGER):
            server.action_test_connection()
        warnings = []
        self.assertEqual(assistant._tool_bindings(warnings=warnings), [])
        self.assertEqual(len(warnings), 1, warnings)
        # what it wrote is the admin's to read: the user is told where
        self.assertEqual(
            warnings[0],
            "sheet-music could not start, so its tools are left out of this answer; an administrator can see why on "
            "the server's form.",
        )
        # an app's calls are not the turn's: no notice there
        app_warnings = []
        assistant._tool_bindings(warnings=app_warnings, audience="app")
        self.assertEqual(app_warnings, [])
