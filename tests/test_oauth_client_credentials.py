"""A shared MCP server Odoo signs in to as a company client (client credentials), in a real Odoo,
against a real OAuth-protected MCP server (testing/oauth_server.py): no person signs in, no browser
opens, two users chat through one token, and a refused client is a sentence, never a sign-in."""

from odoo.exceptions import ValidationError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.oauth_server import MachineClient, OAuthServer, Switches
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase, types_of
from .log_capture import root_log_lines

SECRET = "s3cret-of-the-company-client"


@tagged("post_install", "-at_install")
class TestOAuthClientCredentials(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.oauth = OAuthServer(name="notes", switches=Switches(client_credentials=True)).start()
        cls.addClassCleanup(cls.oauth.stop)
        cls.oauth.provider.machine_clients["odoo-company"] = MachineClient(secret=SECRET)
        cls.manager = new_test_user(
            cls.env, "cc_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Notes Manager"
        )
        cls.notes = cls.env["mcp.server"].create(
            {
                "name": "Notes",
                "scope": "system",
                "url": cls.oauth.url,
                "auth_type": "oauth",
                "oauth_token_scope": "shared",
                "oauth_flow": "client_credentials",
                "oauth_client_id": "odoo-company",
                "oauth_client_secret": SECRET,
            }
        )
        cls.assistant.mcp_server_ids = [(4, cls.notes.id)]
        cls.servers_closed_at_end = (cls.notes,)

    def setUp(self):
        super().setUp()
        self.oauth.provider.machine_tokens.clear()

    def synced(self):
        result = self.notes.with_user(self.manager)._sync_tools()
        self.assertFalse(result.get("error"), result)
        self.assertEqual(self.notes.state, "connected")
        self.notes.tool_ids.write({"requires_approval": False})

    def whoami(self, user, call_id):
        self.login(user)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id=call_id),)), Turn(text="Done."))
        _response, events = self.send("Who am I on Notes?")
        return events

    def grants(self):
        self.env.invalidate_all()
        return self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)])

    def test_two_users_chat_through_the_company_client_without_any_sign_in(self):
        self.synced()  # the manager syncs: Odoo signs in by itself, nobody is sent to the provider
        self.assertEqual(set(self.notes.tool_ids.mapped("name")), {"whoami", "echo", "admin_report"})
        for user, call_id in ((self.user, "a1"), (self.other, "b1")):
            events = self.whoami(user, call_id)
            self.assertNotIn("auth_required", types_of(events))
            results = [(e.data["ok"], e.data["content"][0]["text"]) for e in events if e.event == "tool_result"]
            self.assertEqual(results, [(True, "odoo-company")], f"{user.login} calls as the company client")
        self.assertEqual(self.oauth.provider.machine_tokens, [("odoo-company", "client_secret_basic")])
        self.assertFalse(self.oauth.provider.pending, "no authorization request: no browser step")
        grant = self.grants()
        self.assertEqual((len(grant), grant.user_id.id, grant.access_token_set), (1, False, True))
        form = self.notes.with_user(self.manager)
        form.invalidate_recordset()
        self.assertIn("Company client odoo-company, until", form.oauth_status)

    def test_a_wrong_secret_is_a_sentence_naming_the_server_and_the_fields(self):
        self.synced()
        # the provider's secret is changed and the token it gave revoked: Odoo's secret is wrong now
        clients = self.oauth.provider.machine_clients
        self.addCleanup(clients.__setitem__, "odoo-company", clients["odoo-company"])
        clients["odoo-company"] = MachineClient(secret="rotated-at-the-provider")
        self.oauth.provider.expire_access_tokens()
        events = self.whoami(self.user, "w1")
        self.assertNotIn("auth_required", types_of(events), "never a sign-in card: nobody could sign in")
        # the turn lists the server's tools first: that is where the token is refused and the new one is not given
        error = next((e.data for e in events if e.event == "error"), None)
        self.assertTrue(error, [(e.event, e.data) for e in events])
        self.assertEqual(error["code"], "OAUTH_TOKEN_ERROR")
        self.assertIn("Notes: its authorization server refused the company client", error["message"])
        self.assertIn("check Client ID and Client Secret", error["message"])
        action = self.notes.with_user(self.manager).action_test_connection()
        self.assertEqual(action["params"]["type"], "danger")
        self.assertIn("check Client ID and Client Secret", action["params"]["message"])

    def test_a_per_user_server_cannot_sign_in_as_a_company_client(self):
        with self.assertRaisesRegex(ValidationError, "while its Sign-in is Per user.*Set Sign-in to Shared"):
            self.notes.oauth_token_scope = "user"
            self.notes.flush_recordset()

    def test_nobody_signs_in_to_a_company_client_server(self):
        self.login(self.manager)
        refused = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", allow_redirects=False, timeout=30
        )
        self.assertNotEqual(refused.status_code, 303)
        self.assertIn("Odoo signs in by itself as its company client", refused.text)

    def test_a_private_key_made_in_odoo_signs_in_and_never_leaves_it(self):
        logged_lines = root_log_lines(self)
        form = self.notes.with_user(self.manager)
        form.write({"oauth_client_auth": "private_key_jwt"})
        form.action_oauth_generate_key()
        form.invalidate_recordset()
        self.assertIn("BEGIN PUBLIC KEY", form.oauth_public_pem)
        self.assertIn('"kty": "RSA"', form.oauth_public_jwk)
        # the identity provider is given the public key shown on the form
        clients = self.oauth.provider.machine_clients
        self.addCleanup(clients.__setitem__, "odoo-company", clients["odoo-company"])
        clients["odoo-company"] = MachineClient(public_key=form.oauth_public_pem)
        self.synced()
        self.assertEqual(self.oauth.provider.machine_tokens, [("odoo-company", "private_key_jwt")])
        events = self.whoami(self.other, "k1")
        self.assertEqual([e.data["content"][0]["text"] for e in events if e.event == "tool_result"], ["odoo-company"])

        # what the browser reads of the form, as a manager: no secret, the public key only
        self.login(self.manager)
        read = self.jsonrpc(
            "/web/dataset/call_kw/mcp.server/web_read",
            {
                "model": "mcp.server",
                "method": "web_read",
                "args": [[self.notes.id]],
                "kwargs": {
                    "specification": {
                        name: {}
                        for name in (
                            "oauth_client_secret",
                            "oauth_private_key",
                            "oauth_private_key_set",
                            "oauth_public_pem",
                        )
                    }
                },
            },
        )
        record = read["result"][0]
        self.assertEqual((record["oauth_client_secret"], record["oauth_private_key"]), (False, False))
        self.assertTrue(record["oauth_private_key_set"])
        private = self.notes.sudo()._secret_value("oauth_private_key")
        self.assertIn("PRIVATE KEY", private)
        body = private.split("-----")[2].strip().splitlines()[1]
        logged = "\n".join(logged_lines)
        self.assertIn("OAuth client credentials token", logged)
        for secret in (SECRET, body):
            self.assertNotIn(secret, logged)
            self.assertNotIn(secret, str(read))
