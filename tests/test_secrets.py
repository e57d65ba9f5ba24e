"""Secrets are write-only: no read path returns them, the table holds ciphertext, the hub gets them."""

import json

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import tagged

from odoo.addons.ai_mcp.services.errors import ConfigError

from .common import AiMcpCase

TOKEN = "sk-live-TOPSECRET-0123456789"
HEADER_VALUE = "hdr-TOPSECRET-value"
HEADERS = json.dumps({"X-Org": HEADER_VALUE})
SECRET_FIELDS = ["api_key", "api_key_set", "headers", "headers_set", "name"]


@tagged("post_install", "-at_install")
class TestSecrets(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.service = cls.service_of(cls.user1, "Service")

    def assert_no_secret(self, data, *secrets):
        text = json.dumps(data, default=str)
        for secret in secrets or (TOKEN, HEADER_VALUE):
            self.assertNotIn(secret, text)

    def column(self, record, fname):
        self.env.flush_all()
        self.env.cr.execute(f'SELECT "{fname}_secret" FROM "{record._table}" WHERE id = %s', [record.id])
        return self.env.cr.fetchone()[0]

    def check_read_paths(self, records, user):
        records = records.with_user(user)
        self.assert_no_secret(records.read(SECRET_FIELDS))
        self.assert_no_secret(records.read())
        self.assert_no_secret(records.web_read({f: {} for f in SECRET_FIELDS}))
        self.assert_no_secret(records.search_read([("id", "in", records.ids)], SECRET_FIELDS))
        self.assert_no_secret(records.export_data(SECRET_FIELDS))
        self.assert_no_secret(records.onchange({}, [], {f: {} for f in SECRET_FIELDS}))
        self.assertEqual(records.read(["api_key", "api_key_set", "headers_set"])[0]["api_key"], False)

    def test_server_secrets_never_come_back(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=TOKEN)
        server.with_user(self.user1).write({"headers": HEADERS})
        # same transaction, right after the write: the cache must not hold the plaintext
        self.assertFalse(server.with_user(self.user1).read(["api_key"])[0]["api_key"])
        self.assertTrue(server.api_key_set)
        self.assertTrue(server.headers_set)
        for user in (self.user1, self.admin, self.manager):
            self.check_read_paths(server, user)

        token_column = self.column(server, "api_key")
        self.assertTrue(token_column.startswith("gAAAA"), "Fernet ciphertext")
        self.assertNotIn(TOKEN, token_column)
        self.assertNotIn(HEADER_VALUE, self.column(server, "headers"))

        spec = server._server_spec()
        self.assertEqual(spec.token.get_secret_value(), TOKEN)
        self.assertEqual(spec.http_headers()["Authorization"], f"Bearer {TOKEN}")
        self.assertNotIn(TOKEN, repr(spec))

        server.auth_type = "headers"
        self.assertEqual(server._server_spec().http_headers(), {"X-Org": HEADER_VALUE})

    def test_web_save_returns_no_secret(self):
        server = self.user_server(self.service).with_user(self.user1)
        result = server.web_save({"api_key": TOKEN, "auth_type": "api_key"}, {"api_key": {}, "api_key_set": {}})
        self.assert_no_secret(result)
        self.assertTrue(result[0]["api_key_set"])

    def test_empty_keeps_and_clear_removes(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=TOKEN)
        server.with_user(self.user1).write({"api_key": "", "name": "renamed"})
        self.assertEqual(server._server_spec().token.get_secret_value(), TOKEN)
        with self.assertRaises(AccessError):
            server.with_user(self.user2).action_clear_api_key()
        server.with_user(self.user1).action_clear_api_key()
        self.assertFalse(server.api_key_set)
        self.assertIsNone(self.column(server, "api_key"))
        with self.assertRaises(ConfigError, msg="bearer without a token"):
            server._server_spec()

    def test_secrets_are_stripped_and_validated(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=f"  {TOKEN}\n")
        self.assertEqual(server._server_spec().token.get_secret_value(), TOKEN)
        for bad in ("{not json", '["a"]', '{"X": 1}', '{"Bad Header": "x"}', '{"Host": "x"}'):
            with self.assertRaises(ValidationError, msg=bad):
                server.write({"headers": bad})
        self.assertFalse(server.headers_set)

    def test_copy_keeps_the_secret_encrypted(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=TOKEN)
        copy = server.with_user(self.user1).copy()
        self.assertTrue(copy.api_key_set)
        self.assertEqual(copy.sudo()._server_spec().token.get_secret_value(), TOKEN)

    def test_a_copy_keeps_the_sampling_an_administrator_turned_off(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=TOKEN)
        server.sudo().sampling_enabled = False
        copy = server.with_user(self.user1).copy()
        self.assertFalse(copy.sudo().sampling_enabled)
        fresh = self.user_server(self.service, name="Other")
        self.assertTrue(fresh.sudo().sampling_enabled, "a new one offers sampling")

    def test_changed_database_secret_asks_for_the_secret_again(self):
        server = self.user_server(self.service, auth_type="bearer", api_key=TOKEN)
        self.set_param("database.secret", "another-secret")
        with self.assertRaises(ConfigError) as info:
            server._server_spec()
        self.assertEqual(info.exception.field, "api_key")
        self.assertIn("again", info.exception.message)

    def test_provider_key_is_write_only(self):
        provider = (
            self.env["ai.provider"]
            .with_user(self.manager)
            .create({"name": "P", "base_url": "http://127.0.0.1:1/v1", "api_key": TOKEN})
        )
        fields_ = ["name", "api_key", "api_key_set"]
        for user in (self.manager, self.admin):
            records = provider.with_user(user)
            self.assert_no_secret(records.read(fields_), TOKEN)
            self.assert_no_secret(records.read(), TOKEN)
            self.assert_no_secret(records.web_read({f: {} for f in fields_}), TOKEN)
            self.assert_no_secret(records.search_read([("id", "=", provider.id)], fields_), TOKEN)
            self.assert_no_secret(records.export_data(fields_), TOKEN)
        self.assertTrue(provider.api_key_set)
        self.assertNotIn(TOKEN, self.column(provider, "api_key"))
        self.assertEqual(provider._llm_settings().api_key.get_secret_value(), TOKEN)
        provider.action_clear_api_key()
        self.assertFalse(provider.api_key_set)

    def test_stdio_env_is_write_only(self):
        self.set_param("ai_mcp.allow_stdio", "True")
        server = self.Server.with_user(self.admin).create(
            {"name": "stdio", "transport": "stdio", "command": "/bin/true", "env_vars": '{"TOKEN": "env-TOPSECRET"}'}
        )
        self.assert_no_secret(server.read(["env_vars", "env_vars_set", "command_preview"]), "env-TOPSECRET")
        self.assertTrue(server.env_vars_set)
        self.assertEqual(server.command_preview, "TOKEN=*** /bin/true")
        self.assertEqual(server.sudo()._server_spec().process_env(), {"TOKEN": "env-TOPSECRET"})
        with self.assertRaises(ValidationError):
            server.write({"env_vars": '{"A=B": "x"}'})
