"""A shared MCP server Odoo signs in to with its workload identity (the JWT bearer grant), in a real
Odoo, against a real OAuth-protected MCP server (testing/oauth_server.py) that trusts the platform
issuing the deployment's JWT (testing/workload_identity.py): no secret stored, no person signs in,
no browser opens, two users chat through one token, and a failure is a sentence naming the field."""

import os
import tempfile

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.oauth_server import OAuthServer, Switches
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn
from odoo.addons.ai_mcp.testing.workload_identity import WorkloadIssuer

from .chat_common import AI_USER_GROUPS, ChatCase, types_of


@tagged("post_install", "-at_install")
class TestOAuthWorkload(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.oauth = OAuthServer(name="notes", switches=Switches(jwt_bearer=True)).start()
        cls.addClassCleanup(cls.oauth.stop)
        cls.platform = WorkloadIssuer()
        cls.oauth.provider.trusted_issuers[cls.platform.issuer] = cls.platform.public_pem
        folder = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        cls.addClassCleanup(folder.cleanup)
        # where the platform mounts the deployment's token (a Kubernetes projected volume, say)
        cls.token_file = os.path.join(folder.name, "mcp-token")
        cls.manager = new_test_user(
            cls.env, "wif_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Notes Manager"
        )
        cls.notes = cls.env["mcp.server"].create(
            {
                "name": "Notes",
                "scope": "system",
                "url": cls.oauth.url,
                "auth_type": "oauth",
                "oauth_token_scope": "shared",
                "oauth_flow": "workload_identity",
                "oauth_workload_token": cls.token_file,
            }
        )
        cls.assistant.mcp_server_ids = [(4, cls.notes.id)]
        cls.servers_closed_at_end = (cls.notes,)

    def setUp(self):
        super().setUp()
        self.oauth.provider.jwt_bearer_tokens.clear()
        with open(self.token_file, "w", encoding="utf-8") as handle:
            handle.write(self.platform.token(self.oauth.issuer))

    def whoami(self, user, call_id):
        self.login(user)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id=call_id),)), Turn(text="Done."))
        _response, events = self.send("Who am I on Notes?")
        return events

    def test_two_users_chat_through_the_workload_identity_without_any_sign_in(self):
        result = self.notes.with_user(self.manager)._sync_tools()
        self.assertFalse(result.get("error"), result)
        self.notes.tool_ids.write({"requires_approval": False})
        for user, call_id in ((self.user, "a1"), (self.other, "b1")):
            events = self.whoami(user, call_id)
            self.assertNotIn("auth_required", types_of(events))
            results = [(e.data["ok"], e.data["content"][0]["text"]) for e in events if e.event == "tool_result"]
            self.assertEqual(results, [(True, "odoo-deployment")], f"{user.login} calls as the deployment")
        self.assertEqual(self.oauth.provider.jwt_bearer_tokens, ["odoo-deployment"], "one token for both")
        self.assertFalse(self.oauth.provider.pending, "no authorization request: no browser step")
        form = self.notes.with_user(self.manager)
        form.invalidate_recordset()
        self.assertIn("Workload identity, until", form.oauth_status)

    def test_a_token_file_that_is_gone_is_a_sentence_naming_the_server_and_the_field(self):
        os.remove(self.token_file)
        self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)]).unlink()
        action = self.notes.with_user(self.manager).action_test_connection()
        self.assertEqual(action["params"]["type"], "danger")
        self.assertIn("Notes: the file", action["params"]["message"])
        self.assertIn("check Workload Token", action["params"]["message"])
        events = self.whoami(self.user, "g1")
        self.assertNotIn("auth_required", types_of(events), "never a sign-in card: nobody could sign in")
        told = [e.data["message"] for e in events if e.event in ("warning", "error")]
        self.assertTrue(any("Notes: the file" in m and "check Workload Token" in m for m in told), told)

    def test_only_a_system_administrator_says_where_odoo_reads_its_identity(self):
        # the file's content is sent to the server's authorization server: an AI manager could name any file
        with self.assertRaises(AccessError):
            self.notes.with_user(self.manager).write({"oauth_workload_token": "/etc/odoo/odoo.conf"})
        self.assertEqual(self.notes.oauth_workload_token, self.token_file)

    def test_a_per_user_server_cannot_sign_in_with_the_workload_identity(self):
        with self.assertRaisesRegex(ValidationError, "while its Sign-in is Per user"):
            self.notes.oauth_token_scope = "user"
            self.notes.flush_recordset()
