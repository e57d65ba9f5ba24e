"""DPoP on an OAuth server in a real Odoo, against a real authorization server and MCP server
(testing/oauth_server.py) that bind tokens to keys and ask for nonces: the sign-in from the browser,
a chat through the bound token, the key kept as a secret nobody reads, and the option turned off."""

import json

from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.services.oauth import dpop
from odoo.addons.ai_mcp.testing.oauth_server import OAuthServer, Switches
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase, types_of
from .log_capture import root_log_lines


@tagged("post_install", "-at_install")
class TestOAuthDpop(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        switches = Switches(dpop=True, dpop_as_nonce=True, dpop_rs_nonce=True)
        cls.oauth = OAuthServer(name="notes", switches=switches).start()
        cls.addClassCleanup(cls.oauth.stop)
        cls.env["ir.config_parameter"].sudo().set_param("web.base.url", cls.base_url())
        cls.manager = new_test_user(
            cls.env, "dpop_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Notes Manager"
        )
        cls.notes = cls.env["mcp.server"].create(
            {
                "name": "Notes",
                "scope": "system",
                "url": cls.oauth.url,
                "auth_type": "oauth",
                "oauth_token_scope": "user",
                "oauth_dpop": True,
            }
        )
        cls.assistant.mcp_server_ids = [(4, cls.notes.id)]
        cls.servers_closed_at_end = (cls.notes,)

    def sign_in(self, user, provider_user):
        """Odoo's sign-in link, the provider's consent, Odoo's callback: the browser's side."""
        self.login(user)
        start = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", allow_redirects=False, timeout=30
        )
        self.assertEqual(start.status_code, 303, start.text)
        back = self.oauth.consent(start.headers["Location"], user=provider_user)
        page = self.opener.get(back, timeout=30)
        self.assertEqual(page.status_code, 200, page.text)
        self.assertIn("You are signed in to Notes", page.text)
        return page.text

    def grants(self):
        self.env.invalidate_all()
        return self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)])

    def test_a_dpop_sign_in_chats_with_a_bound_token_and_its_key_stays_secret(self):
        logged_lines = root_log_lines(self)
        pages = [self.sign_in(self.manager, "manager")]
        self.assertFalse(self.notes.with_user(self.manager)._sync_tools().get("error"))
        self.notes.tool_ids.write({"requires_approval": False})
        pages.append(self.sign_in(self.user, "alice"))

        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="d1"),)), Turn(text="Done."))
        _response, events = self.send("Who am I on Notes?")
        self.assertNotIn("auth_required", types_of(events))
        results = [e.data["content"][0]["text"] for e in events if e.event == "tool_result"]
        self.assertEqual(results, ["alice"])
        self.assertEqual(set(self.oauth.dpop.schemes), {"DPoP"}, "every request proven, none sent as Bearer")
        self.assertIn("as", self.oauth.dpop.nonce_challenges)
        self.assertIn("rs", self.oauth.dpop.nonce_challenges)

        # one key per grant, kept as a secret: each grant's token is bound to its own key
        grants = self.grants()
        self.assertEqual(len(grants), 2)
        keys = []
        for grant in grants:
            self.assertTrue(grant.dpop_key_set)
            self.assertFalse(grant.dpop_key, "write-only")
            key = grant._secret_value("dpop_key")
            self.assertEqual(self.oauth.dpop.bound[grant._secret_value("access_token")], dpop.DpopKey(key).jkt)
            keys.append(key)
        self.assertNotEqual(keys[0], keys[1])

        # nobody reads a grant through the browser, managers included; the key is never logged nor shown
        self.login(self.manager)
        answer = self.jsonrpc(
            "/web/dataset/call_kw",
            {
                "model": "mcp.oauth.token",
                "method": "search_read",
                "args": [[]],
                "kwargs": {"fields": ["dpop_key", "dpop_key_set"]},
            },
        )
        self.assertIn("error", answer)
        with self.assertRaises(AccessError):
            self.env["mcp.oauth.token"].with_user(self.manager).search([])
        logged = "\n".join(logged_lines)
        for key in keys:
            body = key.split("-----")[2].strip().splitlines()[0]
            for seen in (logged, json.dumps(answer), *pages):
                self.assertNotIn(body, seen)

    def test_turning_dpop_off_signs_everyone_out(self):
        self.sign_in(self.user, "alice")
        self.assertTrue(self.grants().dpop_key_set)
        self.notes.write({"oauth_dpop": False})
        self.addCleanup(self.notes.write, {"oauth_dpop": True})
        self.assertFalse(self.grants(), "a grant bound to a key is not used as a bearer grant: sign in again")
        self.sign_in(self.user, "alice")
        grant = self.grants()
        self.assertEqual((grant.access_token_set, grant.dpop_key_set), (True, False), "a bearer grant now")
