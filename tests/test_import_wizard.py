"""Import of a pasted `mcpServers` config: preview per entry, then system servers with their
secrets written through the write-only fields."""

import json

from odoo.exceptions import UserError
from odoo.tests import TransactionCase, new_test_user, tagged

CONFIG = {
    "mcpServers": {
        "github": {
            "type": "http",
            "url": "https://api.example.com/mcp/",
            "headers": {"Authorization": "Bearer ghp_secret"},
            "alwaysAllow": ["search"],
            "autoStart": True,
        },
        "legacy": {"url": "https://legacy.example.com/sse", "disabled": True},
        "custom": {"url": "https://custom.example.com/mcp", "headers": {"X-Org": "acme", "X-Key": "k1"}},
        "mixed": {"url": "https://mixed.example.com/mcp", "headers": {"Authorization": "Bearer t", "X-Org": "o"}},
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
            "env": {"API_TOKEN": "env-secret"},
        },
        "broken": {"args": ["x"]},
        "not_an_object": 12,
    }
}


@tagged("post_install", "-at_install")
class TestImportWizard(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True))
        cls.manager = new_test_user(
            cls.env, "import_manager", groups="base.group_user,ai_mcp.group_ai_manager", name="Import Manager"
        )
        cls.env["ir.config_parameter"].sudo().set_param("ai_mcp.allow_stdio", "False")

    def wizard(self, config=None, user=None):
        config = CONFIG if config is None else config
        text = config if isinstance(config, str) else json.dumps(config)
        return self.env["mcp.server.import.wizard"].with_user(user or self.manager).create({"config_text": text})

    def lines(self, wizard):
        return {line.name: line for line in wizard.line_ids}

    def test_preview_reads_each_entry_on_its_own(self):
        wizard = self.wizard()
        action = wizard.action_preview()
        self.assertEqual(action["res_id"], wizard.id)
        self.assertEqual(wizard.state, "preview")
        lines = self.lines(wizard)
        self.assertEqual(list(lines), ["github", "legacy", "custom", "mixed", "files", "broken", "not_an_object"])
        github = lines["github"]
        self.assertEqual(
            (github.status, github.transport, github.target),
            ("ready", "streamable_http", "https://api.example.com/mcp/"),
        )
        self.assertEqual(github.secrets, "Bearer token")
        self.assertEqual(github.ignored_keys, "autoStart")
        self.assertEqual(github.always_allow, "search")
        self.assertNotIn(
            "ghp_secret",
            json.dumps(wizard.line_ids.read(["name", "target", "secrets", "note", "error", "ignored_keys"])),
            "no secret in the preview",
        )
        self.assertEqual(lines["legacy"].transport, "sse")
        self.assertTrue(lines["legacy"].disabled)
        self.assertEqual(lines["custom"].secrets, "headers: X-Key, X-Org")
        self.assertEqual(lines["files"].target, "npx -y @modelcontextprotocol/server-filesystem /data")
        self.assertEqual(lines["files"].secrets, "env: API_TOKEN")
        for name in ("broken", "not_an_object"):
            self.assertEqual(lines[name].status, "invalid")
            self.assertFalse(lines[name].selected)
            self.assertIn(name, lines[name].error)
        self.assertEqual(wizard.ready_count, 5)

    def test_create_makes_system_servers_with_encrypted_secrets(self):
        wizard = self.wizard()
        wizard.action_preview()
        wizard.action_create()
        self.assertEqual(wizard.state, "done")
        self.assertFalse(wizard.config_text, "the pasted secrets are not kept")
        lines = self.lines(wizard)
        servers = {name: line.server_id for name, line in lines.items() if line.server_id}
        self.assertEqual(set(servers), {"github", "legacy", "custom", "mixed"})
        for server in servers.values():
            self.assertEqual(server.scope, "system")
        github = servers["github"].sudo()
        self.assertEqual((github.auth_type, github.url), ("bearer", "https://api.example.com/mcp/"))
        self.assertTrue(github.api_key_set)
        self.assertFalse(github.api_key)
        self.assertEqual(github._server_spec().http_headers(), {"Authorization": "Bearer ghp_secret"})
        self.assertFalse(servers["legacy"].active, "disabled entries are imported archived")
        self.assertEqual(servers["legacy"].transport, "sse")
        custom = servers["custom"].sudo()
        self.assertEqual(custom.auth_type, "headers")
        self.assertTrue(custom.headers_set)
        self.assertEqual(custom._server_spec().http_headers(), {"X-Org": "acme", "X-Key": "k1"})
        mixed = servers["mixed"].sudo()
        self.assertEqual(
            mixed._server_spec().http_headers(),
            {"Authorization": "Bearer t", "X-Org": "o"},
            "a bearer token with other headers keeps them all",
        )
        # stdio is off: the model's refusal is shown on the line, the other entries are created
        self.assertEqual(lines["files"].status, "failed")
        self.assertIn("stdio", lines["files"].error)
        self.assertEqual(wizard.created_count, 4)
        self.assertEqual(wizard.failed_count, 3)
        action = wizard.action_open_servers()
        self.assertEqual(
            sorted(self.env["mcp.server"].with_context(active_test=False).search(action["domain"]).ids),
            sorted(s.id for s in servers.values()),
        )

    def test_stdio_entries_follow_the_stdio_rules(self):
        self.env["ir.config_parameter"].sudo().set_param("ai_mcp.allow_stdio", "True")
        config = {"mcpServers": {"files": CONFIG["mcpServers"]["files"]}}
        # an AI manager who is not a system administrator may not add stdio servers
        wizard = self.wizard(config)
        wizard.action_preview()
        wizard.action_create()
        self.assertEqual(self.lines(wizard)["files"].status, "failed")
        self.assertIn("system administrators", self.lines(wizard)["files"].error)
        # the administrator may
        wizard = self.wizard(config, user=self.env.ref("base.user_admin"))
        wizard.action_preview()
        wizard.action_create()
        server = self.lines(wizard)["files"].server_id.sudo()
        self.assertEqual((server.transport, server.command), ("stdio", "npx"))
        self.assertEqual(server.args.splitlines(), ["-y", "@modelcontextprotocol/server-filesystem", "/data"])
        self.assertTrue(server.env_vars_set)
        self.assertFalse(server.env_vars)
        self.assertEqual(server._server_spec().process_env(), {"API_TOKEN": "env-secret"})

    def test_unusable_text_and_existing_names(self):
        wizard = self.wizard("{not json")
        wizard.action_preview()
        self.assertEqual(wizard.state, "paste")
        self.assertIn("not valid JSON", wizard.error)
        wizard = self.wizard({"servers": []})
        wizard.action_preview()
        self.assertIn("mcpServers", wizard.error)
        with self.assertRaises(UserError):
            wizard.action_create()

        self.env["mcp.server"].create({"name": "legacy", "scope": "system", "url": "https://legacy.example.com/mcp"})
        wizard = self.wizard({"mcpServers": {"legacy": {"url": "https://legacy.example.com/sse"}}})
        wizard.action_preview()
        line = wizard.line_ids
        self.assertFalse(line.selected, "an existing name is not imported twice unless asked")
        self.assertTrue(line.note)
        wizard.action_create()
        self.assertEqual(line.status, "ready", "left alone")
        line.selected = True
        wizard.action_back()
        self.assertEqual(wizard.state, "paste")
        self.assertFalse(wizard.line_ids)
