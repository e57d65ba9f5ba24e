"""An assistant at work in a flow, as users meet it in a real browser
(static/tests/tours/ai_mcp_flow_tour.js): a user makes a contact in the web client and presses
the contextual button "Welcome call" (a server action "Run an AI Assistant"; a contextual button
needs no module beside ai_mcp, where an automation rule would need base_automation); the run is
queued, the queue's cron runs it (triggered by the action; the test runs the triggered cron as
Odoo's cron worker would, with `method_direct_trigger`, since a test server runs no cron thread);
the assistant calls the real MCP tool `add` through the scripted model and schedules an activity
with its answer. The user then finds the activity and the chatter note on the contact, and the
note's link opens the run's conversation with its tool call; an AI manager opens it from the same
link (read only: it is not theirs to write in), another AI user cannot."""

from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS
from .common import require_browser
from .test_flows import FlowCase

PARTNER = "Azure Flow Partner"


@tagged("post_install", "-at_install")
class TestFlowsTour(FlowCase):
    def setUp(self):
        super().setUp()
        require_browser(self)

    def test_a_button_on_a_new_contact_runs_the_assistant_and_its_user_and_a_manager_read_the_run(self):
        action = self.make_action(ai_answer_to="activity", ai_tool_ids=[(6, 0, self.tools["add"].ids)])
        action.create_action()  # the contextual button "Welcome call" on contacts
        cron = self.env.ref("ai_mcp.ir_cron_ai_assistant_run")
        self.env["ir.cron.trigger"].search([("cron_id", "=", cron.id)]).unlink()

        self.start_tour("/odoo/res.partner/new", "ai_mcp_flow_trigger_tour", login="flow_user", timeout=180)
        partner = self.env["res.partner"].search([("name", "=", PARTNER)])
        run = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual((run.res_id, run.user_id, run.state), (partner.id, self.flow_user, "queued"))
        self.assertTrue(
            self.env["ir.cron.trigger"].search([("cron_id", "=", cron.id)]), "the action wakes the queue's cron up"
        )

        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),)),
            Turn(text="Call **Azure Flow Partner** in Gent: 2 + 3 = 5 days since signing."),
        )
        self.env.flush_all()
        cron.method_direct_trigger()
        self.env.invalidate_all()
        self.assertEqual(run.state, "done", run.error)

        self.start_tour(f"/odoo/res.partner/{partner.id}", "ai_mcp_flow_answer_tour", login="flow_user", timeout=180)
        manager = new_test_user(
            self.env, "flow_ai_manager", groups=AI_USER_GROUPS + ",ai_mcp.group_ai_manager", name="Flow Manager"
        )
        self.start_tour(f"/odoo/res.partner/{partner.id}", "ai_mcp_flow_manager_tour", login=manager.login, timeout=180)
        # the manager only read it: nothing was asked of the model on her behalf
        self.assertEqual(len(self.llm.requests), 2)

    def test_another_user_cannot_open_the_run_conversation(self):
        action = self.make_action(ai_tool_ids=[(6, 0, self.tools["add"].ids)])
        partner = self.env["res.partner"].create({"name": PARTNER, "city": "Gent"})
        self.llm.queue(Turn(text="Welcome."))
        self.run_on(action, partner, self.flow_user)
        self.process()
        conversation = self.env["ai.assistant.run"].search([("action_id", "=", action.id)]).conversation_id
        path = f"/ai_mcp/conversation/{conversation.id}/history"

        self.login(self.flow_user)
        mine = self.jsonrpc(path)["result"]
        self.assertEqual(mine["conversation"]["id"], conversation.id)
        self.assertFalse(mine["conversation"]["read_only"])

        self.login(self.other)
        refused = self.jsonrpc(path)
        self.assertNotIn("result", refused)
        self.assertIn("404", str(refused["error"]))
