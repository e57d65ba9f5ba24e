"""The MCP server catalog (mcp.server.preset): well-known servers as data, and one click from an
entry to a configured system server, stdio rules included."""

from odoo.exceptions import AccessError, UserError
from odoo.tests import tagged

from odoo.addons.ai_mcp.odoo_compat import USER_GROUPS

from .common import AiMcpCase


@tagged("post_install", "-at_install")
class TestServerPresets(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.Preset = cls.env["mcp.server.preset"]
        cls.github = cls.env.ref("ai_mcp.mcp_server_preset_github")
        cls.context7 = cls.env.ref("ai_mcp.mcp_server_preset_context7")
        cls.filesystem = cls.env.ref("ai_mcp.mcp_server_preset_filesystem")
        cls.fetch = cls.env.ref("ai_mcp.mcp_server_preset_fetch")
        cls.admin[USER_GROUPS] |= cls.env.ref("ai_mcp.group_ai_manager")

    def create_from(self, preset, user):
        action = preset.with_user(user).action_create_server()
        self.assertEqual(
            (action["type"], action["res_model"], action["view_mode"]), ("ir.actions.act_window", "mcp.server", "form")
        )
        return self.Server.browse(action["res_id"])

    def test_the_catalog_ships_the_well_known_servers(self):
        presets = self.Preset.search([])
        by_url = {p.url: p for p in presets if p.url}
        expected = {
            "https://api.githubcopilot.com/mcp/": ("streamable_http", "bearer"),
            "https://docs.mcp.cloudflare.com/mcp": ("streamable_http", "none"),
            "https://mcp.context7.com/mcp": ("streamable_http", "none"),
            "https://huggingface.co/mcp": ("streamable_http", "bearer"),
            "https://mcp.deepwiki.com/mcp": ("streamable_http", "none"),
            "https://mcp.sentry.dev/mcp": ("streamable_http", "bearer"),
            "https://mcp.linear.app/mcp": ("streamable_http", "bearer"),
        }
        for url, (transport, auth) in expected.items():
            self.assertIn(url, by_url)
            self.assertEqual((by_url[url].transport, by_url[url].auth_type), (transport, auth), url)
            self.assertTrue(by_url[url].docs_url.startswith("https://"), url)
        stdio = {p.name: (p.command, p.args) for p in presets if p.transport == "stdio"}
        self.assertEqual(
            stdio["Filesystem"], ("npx", "-y\n@modelcontextprotocol/server-filesystem\n/path/to/allowed/directory")
        )
        self.assertEqual(stdio["Memory"], ("npx", "-y\n@modelcontextprotocol/server-memory"))
        self.assertEqual(stdio["Everything (test server)"], ("npx", "-y\n@modelcontextprotocol/server-everything"))
        self.assertEqual(stdio["Fetch"], ("uvx", "mcp-server-fetch"))
        self.assertTrue(self.env.ref("ai_mcp.mcp_server_preset_sentry").needs_oauth)

    def test_one_click_creates_a_configured_system_server_and_opens_it(self):
        server = self.create_from(self.github, self.manager)
        self.assertEqual(
            (server.name, server.scope, server.transport, server.url, server.auth_type, server.state),
            ("GitHub", "system", "streamable_http", "https://api.githubcopilot.com/mcp/", "bearer", "draft"),
        )
        self.assertEqual(server.preset_id, self.github)

        self.assertFalse(server.api_key_set, "the admin adds the token on the form that opens")
        self.assertIn("https://github.com/github/github-mcp-server", server.description)
        self.assertIn("personal access token", server.description)
        self.assertEqual(self.github.with_user(self.manager).server_count, 1)
        # the admin adds the token: the server is ready to test
        server.with_user(self.manager).write({"api_key": "ghp_example"})
        self.assertTrue(server.api_key_set)
        self.assertEqual(server._server_spec().http_headers()["Authorization"], "Bearer ghp_example")

        context7 = self.create_from(self.context7, self.manager)
        self.assertEqual((context7.auth_type, context7.api_key_header), ("none", "CONTEXT7_API_KEY"))
        self.assertEqual(self.create_from(self.github, self.manager).name, "GitHub", "a preset can be used again")

    def test_the_servers_button_lists_the_servers_made_from_the_entry_archived_ones_too(self):
        made = self.create_from(self.github, self.manager)
        archived = self.create_from(self.github, self.manager)
        archived.active = False
        self.create_from(self.context7, self.manager)

        action = self.github.with_user(self.manager).action_open_servers()
        self.assertEqual((action["res_model"], action["view_mode"]), ("mcp.server", "list,form"))
        self.assertIn("GitHub", action["name"])
        listed = self.Server.with_user(self.manager).with_context(**action["context"]).search(action["domain"])
        self.assertEqual(listed, made | archived)

    def test_an_oauth_entry_creates_a_server_that_signs_in(self):
        server = self.create_from(self.env.ref("ai_mcp.mcp_server_preset_linear"), self.manager)
        self.assertEqual((server.auth_type, server.oauth_token_scope), ("oauth", "user"))
        # signing in to the real Linear is not for a test: the sign-in link is enough
        self.assertEqual(
            server.with_user(self.manager)._oauth_sign_in_url(), f"/ai_mcp/oauth/start?server_id={server.id}"
        )

    def test_a_preset_server_connects_and_discovers_its_tools(self):
        http = self.serve()
        preset = self.Preset.with_user(self.admin).create(
            {"name": "Local test tools", "transport": "streamable_http", "url": http.url, "auth_type": "none"}
        )
        server = self.create_from(preset, self.manager)
        self.addCleanup(self.close_pooled, server)
        result = server.action_test_connection()
        self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
        self.assertEqual(server.state, "connected")
        self.assertIn("echo", server.tool_ids.mapped("name"))

    def test_stdio_presets_follow_the_stdio_rules(self):
        # off by default: refused, and the preset says why before anyone clicks
        self.assertIn("ai_mcp.allow_stdio", self.filesystem.with_user(self.admin).stdio_blocked)
        self.assertFalse(self.github.with_user(self.admin).stdio_blocked)
        count = self.Server.with_context(active_test=False).search_count([])
        with self.assertRaisesRegex(UserError, "stdio MCP servers are turned off.*ai_mcp.allow_stdio"):
            self.filesystem.with_user(self.admin).action_create_server()
        self.assertEqual(self.Server.with_context(active_test=False).search_count([]), count)

        self.set_param("ai_mcp.allow_stdio", "True")
        # allowed, but only for system administrators
        self.assertIn("system administrators", self.filesystem.with_user(self.manager).stdio_blocked)
        with self.assertRaisesRegex(UserError, "Only system administrators"):
            self.filesystem.with_user(self.manager).action_create_server()
        server = self.create_from(self.fetch, self.admin)
        self.assertEqual(
            (server.transport, server.command, server.args, server.url), ("stdio", "uvx", "mcp-server-fetch", False)
        )
        server = self.create_from(self.filesystem, self.admin)
        self.assertEqual(
            server._arg_list(), ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/allowed/directory"]
        )
        self.assertEqual(
            server.command_preview, "npx -y @modelcontextprotocol/server-filesystem /path/to/allowed/directory"
        )

    def test_managers_use_the_catalog_system_administrators_edit_it(self):
        self.assertTrue(self.Preset.with_user(self.manager).search([]))
        with self.assertRaises(AccessError):
            self.github.with_user(self.manager).write({"url": "https://evil.example.com/mcp"})
        with self.assertRaises(AccessError):
            self.Preset.with_user(self.user1).search([])
        self.github.with_user(self.admin).write({"setup_notes": "Ask IT for the token."})
        self.assertEqual(self.github.setup_notes, "Ask IT for the token.")
