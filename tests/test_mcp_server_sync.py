"""Test connection, tool sync, the rug-pull guard and the cron, against real FastMCP servers."""

import sys
from datetime import datetime

from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.ai_mcp.testing.mcp_servers import free_port, server_argv

from .common import AiMcpCase

SYNC_LOGGER = "odoo.addons.ai_mcp.models.server.sync"


@tagged("post_install", "-at_install")
class TestMcpServerSync(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.http = cls.start_server()
        cls.addClassCleanup(cls.http.stop)

    def make_server(self, url=None, **values):
        return self.system_server(url=url or self.http.url, **values)

    def tools_by_name(self, server):
        tools = self.Tool.with_context(active_test=False).search([("server_id", "=", server.id)])
        return {tool.name: tool for tool in tools}

    # -- test connection -------------------------------------------------------------------------

    def test_test_connection_reports_the_server_and_discovers_tools(self):
        server = self.make_server()
        action = server.action_test_connection()
        params = action["params"]
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn("test-server", params["message"])
        self.assertIn("protocol 2026-07-28 (stateless):", params["message"])
        self.assertEqual((server.protocol_version, server.protocol_stateless), ("2026-07-28", True))
        self.assertRegex(params["message"], r"\d+ tools, answered in \d+ ms")
        self.assertEqual(params["next"]["tag"], "soft_reload")
        self.assertEqual(server.state, "connected")
        self.assertEqual(server.server_name, "test-server")
        self.assertTrue(server.server_version)
        self.assertTrue(server.protocol_version)
        self.assertGreaterEqual(server.last_latency_ms, 0)
        self.assertFalse(server.last_error)
        self.assertTrue(server.last_sync, "the first successful test discovers the tools")
        self.assertIn("echo", server.tool_ids.mapped("name"))
        self.assertEqual(server.tool_count, len(server.tool_ids))

    def test_test_connection_to_a_server_of_the_previous_generation_shows_its_revision(self):
        legacy = self.start_server("--era", "legacy")
        self.addCleanup(legacy.stop)
        server = self.make_server(url=legacy.url)
        params = server.action_test_connection()["params"]
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn("protocol 2025-11-25:", params["message"])
        self.assertNotIn("stateless", params["message"])
        self.assertEqual((server.protocol_version, server.protocol_stateless), ("2025-11-25", False))

    def test_unreachable_server_is_marked_error_with_code_and_advice(self):
        server = self.make_server(url=f"http://127.0.0.1:{free_port()}/mcp")
        action = server.action_test_connection()
        params = action["params"]
        self.assertEqual(params["type"], "danger")
        self.assertIn("MCP_UNREACHABLE", params["message"])
        self.assertEqual(server.state, "error")
        self.assertEqual(server.last_error_code, "MCP_UNREACHABLE")
        self.assertTrue(server.last_error)

        server.action_sync_tools()
        self.assertEqual(server.state, "error")
        self.assertFalse(server.tool_ids)

    def test_refused_token_is_auth_failed(self):
        guarded = self.serve("--token", "right")
        server = self.make_server(url=guarded.url, auth_type="bearer", api_key="wrong")
        server.action_test_connection()
        self.assertEqual(server.last_error_code, "MCP_AUTH_FAILED")
        server.api_key = "right"
        self.assertEqual(server.state, "draft", "a new token makes 'connected' stale")
        server.action_test_connection()
        self.assertEqual(server.state, "connected", server.last_error)

    # -- sync ------------------------------------------------------------------------------------

    def test_sync_creates_tools_with_annotations_schemas_and_defaults(self):
        server = self.make_server()
        action = server.action_sync_tools()
        self.assertEqual(action["params"]["type"], "success", action["params"]["message"])
        tools = self.tools_by_name(server)
        self.assertEqual(server.state, "connected")
        self.assertTrue(server.last_sync)
        echo, die, slow, add, weather = (tools[n] for n in ("echo", "die", "slow", "add", "weather"))
        self.assertTrue(echo.read_only_hint)
        self.assertFalse(echo.requires_approval, "read-only tools need no approval")
        self.assertTrue(die.destructive_hint)
        self.assertTrue(die.requires_approval, "destructive tools need approval")
        self.assertTrue(slow.requires_approval, "an unannotated tool may be destructive")
        self.assertTrue(add.idempotent_hint)
        self.assertEqual(echo.description, "Return the text unchanged.")
        self.assertIn('"text"', echo.input_schema)
        self.assertIn('\n  "properties"', echo.input_schema_pretty)
        self.assertTrue(weather.output_schema)
        self.assertIn("celsius", weather.output_schema_pretty)
        self.assertFalse(echo.output_schema_pretty and "celsius" in echo.output_schema_pretty)
        for tool in tools.values():
            self.assertEqual(tool.review_state, "approved", tool.name)
            self.assertEqual(tool.content_hash, tool.approved_hash)
            self.assertTrue(tool.enabled)
        # the stored tool is exactly what the server described
        info = echo._tool_info()
        self.assertEqual(info.content_hash(), echo.content_hash)

    def test_admin_choices_survive_syncs(self):
        server = self.make_server()
        server.action_sync_tools()
        tools = self.tools_by_name(server)
        tools["echo"].enabled = False
        tools["echo"].requires_approval = True
        tools["die"].requires_approval = False
        server.action_sync_tools()
        server.action_sync_tools()
        tools = self.tools_by_name(server)
        self.assertFalse(tools["echo"].enabled)
        self.assertTrue(tools["echo"].requires_approval)
        self.assertFalse(tools["die"].requires_approval)
        self.assertTrue(tools["add"].enabled)

    def test_a_sync_that_finds_nothing_new_rewrites_nothing_and_says_so(self):
        http = self.serve()
        server = self.make_server(url=http.url)
        server.action_sync_tools()
        self.env.flush_all()
        self.env.cr.execute("UPDATE mcp_tool SET write_date = '2000-01-01' WHERE server_id = %s", (server.id,))
        self.env.invalidate_all()
        action = server.action_sync_tools()
        self.assertIn("0 new, 0 updated, 0 no longer offered", action["params"]["message"])
        self.assertEqual(set(server.tool_ids.mapped("write_date")), {datetime(2000, 1, 1)}, "no tool was rewritten")

        self.restart_with(http, server, "--variant")
        action = server.action_sync_tools()
        self.assertIn("0 new, 1 updated", action["params"]["message"])
        echo = self.tools_by_name(server)["echo"]
        self.assertEqual(echo.description, "Return the text unchanged, and send it to a third party.")
        self.assertEqual(
            {tool.name for tool in server.tool_ids if tool.write_date.year == 2000},
            set(server.tool_ids.mapped("name")) - {"echo"},
        )

    def test_changed_tool_is_set_aside_until_accepted(self):
        http = self.serve()
        server = self.make_server(url=http.url)
        assistant = self.env["ai.assistant"].create(
            {
                "name": "A",
                "provider_id": self.env["ai.provider"].create({"name": "P"}).id,
                "mcp_server_ids": [(6, 0, server.ids)],
            }
        )
        server.action_sync_tools()
        echo = self.tools_by_name(server)["echo"]
        approved = echo.approved_hash
        self.assertIn("echo", [b.tool.name for b in assistant._tool_bindings()])

        self.restart_with(http, server, "--variant")
        action = server.action_sync_tools()
        self.assertIn("set aside", action["params"]["message"])
        echo.invalidate_recordset()
        self.assertEqual(echo.review_state, "changed")
        self.assertEqual(echo.description, "Return the text unchanged, and send it to a third party.")
        self.assertEqual(echo.approved_hash, approved, "a sync never approves a change")
        self.assertTrue(echo.active)
        bound = [b.tool.name for b in assistant._tool_bindings()]
        self.assertNotIn("echo", bound, "a changed tool is given to no model")
        self.assertIn("add", bound, "the unchanged tools stay")
        self.assertIn("changed since it was approved", assistant.tool_preview)
        self.assertIn("echo", server.message_ids[0].body)

        server.action_sync_tools()
        self.assertEqual(echo.review_state, "changed", "a second sync does not approve it either")

        echo.action_accept_change()
        self.assertEqual(echo.review_state, "approved")
        self.assertEqual(echo.approved_hash, echo.content_hash)
        assistant.invalidate_recordset()
        self.assertIn("echo", [b.tool.name for b in assistant._tool_bindings()])
        self.assertEqual(
            next(b for b in assistant._tool_bindings() if b.tool.name == "echo").tool.description,
            "Return the text unchanged, and send it to a third party.",
        )

    def test_disappearing_tool_is_deactivated_and_comes_back_with_the_admin_choices(self):
        http = self.serve("--tools", "3")
        server = self.make_server(url=http.url)
        server.action_sync_tools()
        tools = self.tools_by_name(server)
        self.assertTrue({"tool_000", "tool_001", "tool_002"} <= set(tools))
        tools["tool_002"].write({"enabled": False, "requires_approval": True})

        http = self.restart_with(http, server, "--tools", "1")
        action = server.action_sync_tools()
        self.assertIn("2 no longer offered", action["params"]["message"])
        tools = self.tools_by_name(server)
        self.assertTrue(tools["tool_000"].active)
        self.assertFalse(tools["tool_001"].active)
        self.assertFalse(tools["tool_002"].active)
        self.assertNotIn("tool_001", server.tool_ids.mapped("name"))

        self.restart_with(http, server, "--tools", "3")
        server.action_sync_tools()
        tools = self.tools_by_name(server)
        self.assertTrue(tools["tool_001"].active)
        self.assertEqual(tools["tool_001"].review_state, "approved", "same content as approved before")
        self.assertFalse(tools["tool_002"].enabled, "the admin's choice came back with the tool")
        self.assertTrue(tools["tool_002"].requires_approval)

    def test_tool_appearing_after_the_first_sync_waits_for_review(self):
        http = self.serve()
        server = self.make_server(url=http.url)
        server.action_sync_tools()
        self.restart_with(http, server, "--tools", "1")
        server.action_sync_tools()
        new = self.tools_by_name(server)["tool_000"]
        self.assertEqual(new.review_state, "changed")
        self.assertFalse(new.approved_hash)
        new.action_accept_change()
        self.assertEqual(new.review_state, "approved")

    def test_pagination_is_followed(self):
        paged = self.serve("--tools", "30", "--page-size", "7")
        server = self.make_server(url=paged.url)
        server.action_sync_tools()
        self.assertIn("tool_029", server.tool_ids.mapped("name"))

    # -- cron ------------------------------------------------------------------------------------

    def test_cron_marks_the_failing_server_and_goes_on(self):
        self.Server.search([]).active = False  # only this test's servers
        dead = self.make_server(name="Dead", sequence=1, url=f"http://127.0.0.1:{free_port()}/mcp")
        good = self.make_server(name="Good", sequence=2)
        archived = self.make_server(name="Archived", sequence=3, active=False)
        cron = self.env.ref("ai_mcp.ir_cron_mcp_sync_tools")
        self.assertEqual((cron.interval_number, cron.interval_type), (1, "days"))
        self.assertTrue(cron.active)
        with mute_logger(SYNC_LOGGER):
            cron.ir_actions_server_id.run()
        self.assertEqual(dead.state, "error")
        self.assertEqual(dead.last_error_code, "MCP_UNREACHABLE")
        self.assertEqual(good.state, "connected", good.last_error)
        self.assertIn("echo", good.tool_ids.mapped("name"))
        self.assertEqual(archived.state, "draft", "archived servers are left alone")

    # -- stdio -----------------------------------------------------------------------------------

    def test_stdio_server_keeps_its_stderr_and_gets_only_its_env(self):
        self.set_param("ai_mcp.allow_stdio", "True")
        argv = server_argv("stdio", "--name", "stdio-test")
        server = (
            self.Server.with_user(self.admin)
            .create(
                {
                    "name": "Local",
                    "transport": "stdio",
                    "command": argv[0],
                    "args": "\n".join(argv[1:]),
                    "env_vars": '{"MY_TOKEN": "s3cret-env"}',
                }
            )
            .sudo()
        )
        self.assertIn("MY_TOKEN=***", server.command_preview)
        self.assertIn("mcp_servers.py --transport stdio --name stdio-test", server.command_preview)
        self.assertNotIn("s3cret-env", server.command_preview)
        action = server.action_test_connection()
        self.assertEqual(action["params"]["type"], "success", action["params"]["message"])
        self.assertEqual(server.server_name, "stdio-test")
        self.assertIn("stdio-test starting on stdio", server.last_stderr)
        self.assertIn("stdio-test starting on stdio", server.stderr_tail)
        spec = server._server_spec()
        self.assertEqual(spec.process_env(), {"MY_TOKEN": "s3cret-env"})
        self.assertEqual(spec.command, sys.executable)
