"""A stdio server that prints its token when it fails, as a plain AI user meets it in the chat:
she is told it could not start, never what it printed; the admin reads its output on Test
connection with the token masked, and the log holds it masked too. The server is a real Node
process started by Odoo's hub, the chat goes over real HTTP."""

import json
import shutil

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase, types_of

TOKEN = "tok-3f9a-very-secret"
REJECTING = "console.error('rejected token ' + process.env.API_TOKEN); process.exit(1)"
LEFT_OUT = (
    "Example could not start, so its tools are left out of this answer; an administrator can see why on the "
    "server's form."
)


@tagged("post_install", "-at_install")
class TestStdioSecrets(ChatCase):
    def setUp(self):
        super().setUp()
        if shutil.which("node") is None:
            self.skipTest("the server runs on Node")
        self.env["ir.config_parameter"].sudo().set_param("ai_mcp.allow_stdio", "True")
        self.admin = self.env.ref("base.user_admin")
        self.stdio = (
            self.env["mcp.server"]
            .with_user(self.admin)
            .create(
                {
                    "name": "Example",
                    "scope": "system",
                    "transport": "stdio",
                    "command": "node",
                    "args": f"-e\n{REJECTING}",
                    "env_vars": json.dumps({"API_TOKEN": TOKEN}),
                }
            )
        )
        self.addCleanup(self._close_session, self.stdio.sudo()._server_key())

    @staticmethod
    def _close_session(key):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(key))

    def chat_as_user(self, assistant):
        self.llm.queue(Turn(text="Here is what I know."))
        self.login(self.user)
        response, events = self.send("What do you know?", assistant_id=assistant.id)
        self.assertEqual(response.status_code, 200, response.text)
        return events

    def stored(self, conversation_id):
        """Everything kept of her conversation: its events and its messages."""
        self.env.invalidate_all()
        events = self.env["ai.conversation.event"].search_read([("conversation_id", "=", conversation_id)])
        messages = self.env["ai.message"].search_read([("conversation_id", "=", conversation_id)])
        return json.dumps([events, messages], default=str)

    def test_a_user_is_told_the_server_could_not_start_and_the_admin_reads_why_with_the_token_masked(self):
        with self.assertLogs(level="INFO") as logs:
            action = self.stdio.with_user(self.admin).action_test_connection()
            assistant = self.assistant.copy({"name": "Example helper", "mcp_server_ids": [(4, self.stdio.id)]})
            events = self.chat_as_user(assistant)
        # the admin: the output, the token masked, on Test connection and the form's Output tab
        shown = action["params"]["message"]
        self.assertIn("rejected token ***", shown)
        self.assertNotIn(TOKEN, shown)
        self.stdio.invalidate_recordset()
        self.assertEqual(self.stdio.with_user(self.admin).stderr_tail, "rejected token ***")
        # the user: a sentence, without the output, in what she is shown and in what is kept
        warnings = [e.data["message"] for e in events if e.event == "warning"]
        self.assertEqual(warnings, [LEFT_OUT], types_of(events))
        received = json.dumps([e.data for e in events])
        self.assertNotIn(TOKEN, received)
        self.assertNotIn("rejected token", received)
        kept = self.stored(events[0].data["conversation_id"])
        self.assertIn("could not start", kept)
        self.assertNotIn(TOKEN, kept)
        self.assertNotIn("rejected token", kept)
        # the log: the output, masked
        logged = "\n".join(logs.output)
        self.assertIn("rejected token ***", logged)
        self.assertNotIn(TOKEN, logged)

    def test_a_server_that_fails_when_her_turn_starts_it_is_left_out_without_its_output(self):
        # it was connected when its tool was approved; it fails now, as her turn starts it
        self.stdio.sudo().with_context(ai_mcp_keep_state=True).write({"state": "connected"})
        self.env["mcp.tool"].create(
            {
                "name": "lookup",
                "server_id": self.stdio.id,
                "content_hash": "h",
                "approved_hash": "h",
                "requires_approval": False,
                "input_schema": '{"type": "object", "properties": {}}',
            }
        )
        assistant = self.assistant.copy({"name": "Example helper", "mcp_server_ids": [(6, 0, self.stdio.ids)]})
        with self.assertLogs(level="INFO") as logs:
            events = self.chat_as_user(assistant)
        warnings = [e.data["message"] for e in events if e.event == "warning"]
        self.assertEqual(warnings, [LEFT_OUT], types_of(events))
        received = json.dumps([e.data for e in events])
        self.assertNotIn(TOKEN, received)
        self.assertNotIn("rejected token", received)
        kept = self.stored(events[0].data["conversation_id"])
        self.assertNotIn(TOKEN, kept)
        self.assertNotIn("rejected token", kept)
        logged = "\n".join(logs.output)
        self.assertIn("rejected token ***", logged)
        self.assertNotIn(TOKEN, logged)
