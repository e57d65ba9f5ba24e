"""Enterprise-managed authorization in a real Odoo: a company's identity provider (testing/
identity_provider.py) vouches for each user at a real OAuth-protected MCP server
(testing/oauth_server.py) that trusts it. Each user signs in to the provider once, through Odoo's
own routes; then she reaches the server with no consent screen, as herself; a user who has not
signed in is told so in a sentence; a user of another company is refused before anything is sent."""

from odoo import Command
from odoo.exceptions import ValidationError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.identity_provider import IdentityProvider
from odoo.addons.ai_mcp.testing.oauth_server import MachineClient, OAuthServer, Switches
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase, types_of
from .log_capture import root_log_lines


@tagged("post_install", "-at_install")
class TestOAuthEnterprise(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.oauth = OAuthServer(name="notes", switches=Switches(jwt_bearer=True)).start()
        cls.addClassCleanup(cls.oauth.stop)
        cls.idp = IdentityProvider().start()
        cls.addClassCleanup(cls.idp.stop)
        # the authorization server trusts the company's provider and knows Odoo's client; the
        # provider approves the server for the company's users
        cls.oauth.provider.trusted_issuers[cls.idp.issuer] = cls.idp.public_pem
        cls.oauth.provider.machine_clients["odoo-at-notes"] = MachineClient(secret="notes-secret")
        cls.idp.clients_at[cls.oauth.issuer] = "odoo-at-notes"
        cls.manager = new_test_user(
            cls.env, "ema_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Notes Manager"
        )
        cls.identity = cls.env["mcp.identity.provider"].create(
            {
                "name": "Acme ID",
                "issuer": cls.idp.issuer,
                "client_id": cls.idp.client_id,
                "client_secret": cls.idp.client_secret,
            }
        )
        cls.identity.with_user(cls.manager).action_discover()
        cls.notes = cls.env["mcp.server"].create(
            {
                "name": "Notes",
                "scope": "system",
                "url": cls.oauth.url,
                "auth_type": "oauth",
                "oauth_flow": "enterprise",
                "oauth_identity_provider_id": cls.identity.id,
                "oauth_client_id": "odoo-at-notes",
                "oauth_client_secret": "notes-secret",
            }
        )
        cls.assistant.mcp_server_ids = [(4, cls.notes.id)]
        cls.servers_closed_at_end = (cls.notes,)
        # the assistant, its model and the server are shared by every company: only the provider is not
        for record in (cls.provider, cls.server, cls.notes, cls.assistant):
            record.company_id = False
        cls.elsewhere = cls.env["res.company"].create({"name": "Elsewhere Ltd"})
        cls.stranger = new_test_user(
            cls.env,
            "ema_stranger",
            groups=AI_USER_GROUPS,
            name="Stranger",
            company_id=cls.elsewhere.id,
            company_ids=[Command.set(cls.elsewhere.ids)],
        )

    def setUp(self):
        super().setUp()
        self.idp.requests.clear()
        self.idp.revoked.clear()
        self.oauth.provider.jwt_bearer_tokens.clear()

    def sign_in_at_provider(self, user, login):
        """What she does once: AI › Company Sign-in, Sign In, the provider's page, back to Odoo."""
        self.login(user)
        action = self.identity.with_user(user).action_sign_in()
        start = self.opener.get(self.base_url() + action["url"], allow_redirects=False, timeout=30)
        self.assertEqual(start.status_code, 303, start.text)
        back = self.idp.sign_in(start.headers["Location"], login)
        page = self.opener.get(back, timeout=30)
        self.assertEqual(page.status_code, 200, page.text)
        self.assertIn("You are signed in to Acme ID", page.text)

    def whoami(self, user, call_id):
        self.login(user)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id=call_id),)), Turn(text="Done."))
        _response, events = self.send("Who am I on Notes?")
        return events

    def results(self, events):
        return [(e.data["ok"], e.data["content"][0]["text"]) for e in events if e.event == "tool_result"]

    def told(self, events):
        return [e.data["message"] for e in events if e.event in ("warning", "error")]

    def synced(self):
        self.sign_in_at_provider(self.manager, "manager")
        result = self.notes.with_user(self.manager)._sync_tools()
        self.assertFalse(result.get("error"), result)
        self.notes.tool_ids.write({"requires_approval": False})

    def test_users_signed_in_at_their_provider_reach_the_server_as_themselves_with_no_consent(self):
        logged_lines = root_log_lines(self)
        self.synced()
        for user, login, call_id in ((self.user, "alice", "a1"), (self.other, "bob", "b1")):
            self.sign_in_at_provider(user, login)
            events = self.whoami(user, call_id)
            self.assertNotIn("auth_required", types_of(events), "no sign-in card: the provider vouches for her")
            self.assertEqual(self.results(events), [(True, login)], f"{user.login} calls as herself")
        self.assertFalse(self.oauth.provider.pending, "no authorization request at the server: no consent screen")
        self.assertEqual(self.oauth.provider.jwt_bearer_tokens, ["manager", "alice", "bob"])
        exchanges = [who for kind, who in self.idp.requests if kind == "exchange"]
        self.assertEqual(exchanges, ["manager", "alice", "bob"], "one token exchange each, then her token is kept")
        # a second turn uses her kept token: no new exchange
        self.whoami(self.user, "a2")
        self.assertEqual([who for kind, who in self.idp.requests if kind == "exchange"], exchanges)
        # her sign-in, as the browser and the log see it: status, never a token or a secret
        read = self.identity.with_user(self.user).web_read({"sign_in_status": {}, "client_secret": {}})[0]
        self.assertIn("alice@example.com", read["sign_in_status"])
        self.assertFalse(read["client_secret"])
        grant = self.env["mcp.identity.grant"].sudo().search([("user_id", "=", self.user.id)])
        self.assertEqual(grant.subject, "alice")
        id_token = grant._secret_value("id_token")
        self.assertTrue(id_token)
        self.assertFalse(grant.read(["id_token", "refresh_token"])[0]["id_token"])
        self.assertFalse([line for line in logged_lines if id_token in line or "notes-secret" in line])

    def test_a_user_who_has_not_signed_in_at_the_provider_is_told_so_in_a_sentence(self):
        self.synced()
        events = self.whoami(self.other, "c1")
        self.assertNotIn("auth_required", types_of(events), "never a sign-in card: there is no server sign-in")
        told = self.told(events) + [text for _ok, text in self.results(events)]
        self.assertTrue(any("You are not signed in to Acme ID" in m and "Company Sign-in" in m for m in told), told)
        self.assertEqual(self.oauth.provider.jwt_bearer_tokens, ["manager"], "nothing sent for her")
        # the server's own sign-in is not hers to make
        start = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", allow_redirects=False, timeout=30
        )
        self.assertEqual(start.status_code, 403)
        self.assertIn("your company&#39;s identity provider vouches for you", start.text)

    def test_a_user_of_another_company_does_not_reach_the_server(self):
        self.synced()
        provider_of_hers = self.env["mcp.identity.provider"].with_user(self.stranger).search([])
        self.assertFalse(provider_of_hers, "another company's provider is not shown to her")
        self.login(self.stranger)
        start = self.opener.get(
            f"{self.base_url()}/ai_mcp/identity/start?provider_id={self.identity.id}", allow_redirects=False, timeout=30
        )
        self.assertEqual(start.status_code, 403, "she cannot sign in to it either")
        self.assertNotIn("Acme ID", start.text, "nor learn its name")
        self.assertFalse(self.env["mcp.identity.grant"].sudo().search([("user_id", "=", self.stranger.id)]))
        events = self.whoami(self.stranger, "s1")
        told = self.told(events) + [text for _ok, text in self.results(events)]
        self.assertTrue(any("does not vouch for you" in m for m in told), told)
        self.assertFalse([who for kind, who in self.idp.requests if kind == "exchange" and who != "manager"])
        self.assertEqual(self.oauth.provider.jwt_bearer_tokens, ["manager"])

    def test_her_id_token_is_renewed_and_a_revoked_sign_in_is_a_sentence_not_a_loop(self):
        self.synced()
        self.idp.id_token_lifetime = 30  # within the renewal margin: renewed at each use
        self.addCleanup(setattr, self.idp, "id_token_lifetime", 3600)
        self.sign_in_at_provider(self.user, "alice")
        self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)]).unlink()
        events = self.whoami(self.user, "r1")
        self.assertEqual(self.results(events), [(True, "alice")])
        self.assertIn(("refresh", "alice"), self.idp.requests, "her ID token renewed with the refresh token")
        self.idp.revoked.add("alice")
        self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)]).unlink()
        events = self.whoami(self.user, "r2")
        self.assertNotIn("auth_required", types_of(events))
        told = self.told(events) + [text for _ok, text in self.results(events)]
        self.assertTrue(any("You are not signed in to Acme ID" in m for m in told), told)
        self.assertFalse(
            self.env["mcp.identity.grant"].sudo().search([("user_id", "=", self.user.id)]),
            "the refused sign-in is forgotten: her next one starts afresh",
        )

    def test_another_issuer_or_client_at_the_provider_signs_everyone_out_of_it(self):
        self.synced()
        self.sign_in_at_provider(self.user, "alice")
        self.whoami(self.user, "m1")
        Grant, Token = self.env["mcp.identity.grant"].sudo(), self.env["mcp.oauth.token"].sudo()
        self.assertEqual(len(Grant.search([("provider_id", "=", self.identity.id)])), 2)
        self.identity.with_user(self.manager).write({"scopes": "openid offline_access email"})
        self.assertEqual(len(Grant.search([("provider_id", "=", self.identity.id)])), 2, "a scope keeps them")
        self.identity.with_user(self.manager).write({"client_id": self.idp.client_id + "-new"})
        self.addCleanup(self.identity.write, {"client_id": self.idp.client_id})
        self.assertFalse(Grant.search([("provider_id", "=", self.identity.id)]))
        self.assertFalse(Token.search([("server_id", "=", self.notes.id)]), "her tokens at the server went too")

    def test_the_provider_vouches_only_for_each_user_never_a_shared_sign_in(self):
        with self.assertRaisesRegex(ValidationError, "Set Sign-in to Per user"):
            self.notes.oauth_token_scope = "shared"
            self.notes.flush_recordset()
