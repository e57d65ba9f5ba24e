"""Assistants at work in Odoo's flows: the server action "Run an AI assistant" queues a run per
record, the cron runs them as the user the action says (never the superuser), with the tools the
action lists and nobody to approve, and does what the action says with the answer.

base_automation is not installed in the test database: the triggers are a contextual server action
run on a record by a user (as a button or an automation rule fired by a user's write runs it) and
a scheduled action (ir.cron) over a domain."""

import warnings
from unittest.mock import patch

from odoo.exceptions import ValidationError
from odoo.sql_db import Cursor
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase


class FlowCase(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # may run an action on contacts: Odoo asks write access to the action's model of whoever runs it
        cls.flow_user = new_test_user(
            cls.env, "flow_user", groups=AI_USER_GROUPS + ",base.group_partner_manager", name="Flow User"
        )
        cls.partner_model = cls.env["ir.model"]._get("res.partner")

    def make_action(self, **values):
        return self.env["ir.actions.server"].create(
            {
                "name": "Welcome call",
                "model_id": self.partner_model.id,
                "state": "ai_assistant",
                "ai_assistant_id": self.assistant.id,
                "ai_instruction": "Draft a welcome call for {{ object.name }} of {{ object.city }}.",
                **values,
            }
        )

    def run_on(self, action, records, user):
        """Run the action on `records` as `user` would from a button."""
        return (
            action.with_user(user)
            .with_context(active_model=records._name, active_id=records[:1].id, active_ids=records.ids)
            .run()
        )

    def process(self):
        """What the cron does once triggered (its own cursors: test cursors of this transaction)."""
        self.env.flush_all()
        done = self.env["ai.assistant.run"]._cron_run(limit=500)
        self.env.invalidate_all()
        return done

    def notes(self, record):
        return record.message_ids.filtered(lambda m: m.message_type == "notification").sorted("id")


@tagged("post_install", "-at_install")
class TestFlows(FlowCase):
    def test_a_new_partner_gets_an_activity_drafted_with_a_tool(self):
        action = self.make_action(ai_answer_to="activity", ai_tool_ids=[(6, 0, self.tools["add"].ids)])
        partner = self.env["res.partner"].with_user(self.flow_user).create({"name": "Azure Interior", "city": "Gent"})
        self.run_on(action, partner, self.flow_user)
        run = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual(run.state, "queued", "the action only queues: nothing runs in the triggering request")
        self.assertEqual(run.user_id, self.flow_user)
        self.assertFalse(partner.activity_ids)

        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),)),
            Turn(text="Call **Azure Interior** in Gent: 5 days since signing."),
        )
        self.assertEqual(self.process(), 1)
        self.assertEqual(run.state, "done", run.error)
        self.assertIn("Draft a welcome call for Azure Interior of Gent.", str(self.llm.requests[0]["messages"]))
        activity = partner.activity_ids
        self.assertEqual(len(activity), 1)
        self.assertEqual(activity.user_id, self.flow_user)
        self.assertIn("<strong>Azure Interior</strong>", str(activity.note))
        # accountable: a conversation about the partner, as the user, with its tool call audited
        conversation = run.conversation_id
        self.assertEqual((conversation.res_model, conversation.res_id), ("res.partner", partner.id))
        self.assertEqual(conversation.user_id, self.flow_user)
        call = self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual((call.tool_name, call.status, call.approval), ("add", "ok", "not_required"))
        note = self.notes(partner)[-1]
        self.assertIn(f"/odoo/{conversation.id}/action-ai_mcp.action_ai_chat", str(note.body))
        self.assertIn("run as Flow User", str(note.body))
        # the user it ran as and AI managers see the run and its conversation; another user does not
        self.assertEqual(self.env["ai.assistant.run"].with_user(self.flow_user).search([]), run)
        self.assertFalse(self.env["ai.assistant.run"].with_user(self.other).search([]))
        self.assertEqual(
            self.env["ai.conversation"].with_user(self.flow_user).search([("res_id", "=", partner.id)]), conversation
        )
        # run once: the cron finds nothing more to do
        self.assertEqual(self.process(), 0)
        self.assertEqual(len(partner.activity_ids), 1)

    def test_a_cron_call_that_runs_the_last_run_reads_the_candidates_once(self):
        partner = self.env["res.partner"].create({"name": "Gemini Furniture", "city": "Gent"})
        self.run_on(self.make_action(), partner, self.flow_user)
        self.llm.queue(Turn(text="Welcome!"))
        lookups = []
        execute = Cursor.execute

        def counting(cr, query, params=None, log_exceptions=True):
            if "pg_try_advisory_xact_lock" in str(query) or "ORDER BY id LIMIT" in str(query):
                lookups.append(query)
            return execute(cr, query, params, log_exceptions)

        # the answer's transaction finds the queue empty: no cursor, nor transaction, more to look again
        with patch.object(Cursor, "execute", counting):
            self.assertEqual(self.process(), 1)
        self.assertEqual(len(lookups), 2, "the candidates read once, the run locked once")
        self.assertEqual(self.env["ai.assistant.run"].search([("res_id", "=", partner.id)]).state, "done")

    def test_the_queue_tells_its_cron_how_far_it_got(self):
        partners = self.env["res.partner"].create([{"name": f"Queued {i}", "city": "Gent"} for i in range(3)])
        self.run_on(self.make_action(), partners, self.flow_user)
        self.llm.queue(Turn(text="Welcome!"), Turn(text="Welcome!"))
        cron = self.env.ref("ai_mcp.ir_cron_ai_assistant_run")
        progress = self.env["ir.cron.progress"].create({"cron_id": cron.id, "remaining": 0, "done": 0})
        Run = self.env["ai.assistant.run"].with_context(ir_cron_progress_id=progress.id, cron_id=cron.id)
        self.env.flush_all()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertEqual(Run._cron_run(limit=2), 2)
        self.env.invalidate_all()
        self.assertEqual((progress.done, progress.remaining), (2, 1), "the cron runs again for the last one")
        # Odoo 19 deprecates 18's ir.cron._notify_progress: an administrator's log reads no warning of ours
        self.assertFalse([str(w.message) for w in caught if "ai_mcp" in w.filename])

    def test_the_answer_goes_to_the_chatter_or_a_field(self):
        partner = self.env["res.partner"].create({"name": "Deco Addict", "city": "Namur"})
        chatter = self.make_action()
        self.llm.queue(Turn(text="A short welcome."))
        self.run_on(chatter, partner, self.flow_user)
        self.process()
        self.assertIn("A short welcome.", str(self.notes(partner)[-1].body))

        comment = self.env["ir.model.fields"]._get("res.partner", "comment")
        to_field = self.make_action(ai_answer_to="field", ai_answer_field_id=comment.id)
        self.llm.queue(Turn(text="Prefers mornings."))
        self.run_on(to_field, partner, self.flow_user)
        self.process()
        self.assertIn("Prefers mornings.", str(partner.comment))

    def test_a_listed_tool_runs_without_approval_and_any_other_is_refused_and_recorded(self):
        action = self.make_action(ai_tool_ids=[(6, 0, self.tools["weather"].ids)])
        partner = self.env["res.partner"].create({"name": "Gemini Furniture", "city": "Paris"})
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("weather", {"city": "Paris"}, id="call_weather"),
                    ToolCall("echo", {"text": "hi"}, id="call_echo"),
                )
            ),
            Turn(text="Sunny in Paris; echo was not allowed."),
        )
        self.run_on(action, partner, self.flow_user)
        self.process()
        run = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual(run.state, "done", run.error)
        self.assertEqual(run.conversation_id.state, "idle", "no pause: nobody is there to answer it")
        offered = {tool["function"]["name"] for tool in self.llm.requests[0].get("tools", [])}
        self.assertEqual(offered, {"weather"}, "only the tools the action lists are offered")
        calls = self.env["ai.tool.call"].search([("conversation_id", "=", run.conversation_id.id)])
        by_tool = {call.tool_name: call for call in calls}
        self.assertEqual((by_tool["weather"].status, by_tool["weather"].approval), ("ok", "action"))
        self.assertEqual((by_tool["echo"].status, by_tool["echo"].error_code), ("denied", "TOOL_DENIED"))
        told = str(self.llm.requests[1]["messages"])
        self.assertIn("may call only the tools its action lists", told)
        self.assertIn("Sunny in Paris", str(self.notes(partner)[-1].body))

    def test_a_tool_that_needs_approval_and_is_not_listed_is_refused(self):
        action = self.make_action(ai_tool_ids=[(6, 0, self.tools["add"].ids)])
        partner = self.env["res.partner"].create({"name": "Lumber Inc"})
        self.llm.queue(
            Turn(tool_calls=(ToolCall("weather", {"city": "Oslo"}, id="call_weather"),)),
            Turn(text="I could not look the weather up."),
        )
        self.run_on(action, partner, self.flow_user)
        self.process()
        run = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual(run.state, "done", run.error)
        call = self.env["ai.tool.call"].search([("conversation_id", "=", run.conversation_id.id)])
        self.assertEqual((call.tool_name, call.status), ("weather", "denied"))

    def test_never_the_superuser(self):
        partner = self.env["res.partner"].create({"name": "Ready Mat"})
        action = self.make_action()
        # triggered by the system (a cron as OdooBot, sudo) with no named user: refused, said on the record
        self.env["ir.actions.server"].browse(action.id).with_context(
            active_model="res.partner", active_id=partner.id, active_ids=partner.ids
        ).run()
        self.assertFalse(self.env["ai.assistant.run"].search([("action_id", "=", action.id)]))
        self.assertIn("did not run", str(self.notes(partner)[-1].body))
        with self.assertRaises(ValidationError):
            self.make_action(ai_run_as="user", ai_run_user_id=self.env.ref("base.user_root").id)
        # a run row made to run as the superuser anyway fails without calling the model
        run = self.env["ai.assistant.run"].create(
            {"action_id": action.id, "res_model": "res.partner", "res_id": partner.id, "user_id": 1}
        )
        self.process()
        self.assertEqual(run.state, "failed")
        self.assertIn("superuser", run.error)
        self.assertFalse(self.llm.requests)

    def test_a_scheduled_run_as_a_named_user_reads_only_what_that_user_may(self):
        """A scheduled action over AI providers (which only AI managers read), run as an AI user,
        finds nothing; run on a provider by a manager's button, as that user, fails unread."""
        provider_model = self.env["ir.model"]._get("ai.provider")
        action = self.make_action(
            model_id=provider_model.id,
            ai_instruction="Describe {{ object.api_key }}",
            ai_run_as="user",
            ai_run_user_id=self.user.id,
        )
        cron = self.env["ir.cron"].create(
            {
                "name": "Describe providers",
                "ir_actions_server_id": action.id,
                "interval_number": 1,
                "interval_type": "days",
            }
        )
        cron.method_direct_trigger()
        self.assertFalse(self.env["ai.assistant.run"].search([("action_id", "=", action.id)]))

        manager = new_test_user(self.env, "flow_manager", groups=AI_USER_GROUPS + ",ai_mcp.group_ai_manager")
        action.with_user(manager).with_context(
            active_model="ai.provider", active_id=self.provider.id, active_ids=self.provider.ids
        ).run()
        run = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual(run.user_id, self.user)
        self.process()
        self.assertEqual(run.state, "failed")
        self.assertFalse(self.llm.requests, "the model reads nothing of a record its user may not read")

    def test_a_scheduled_batch_runs_each_record_once(self):
        partners = self.env["res.partner"].create([{"name": f"Batch {i}", "city": "Liège"} for i in range(5)])
        action = self.make_action(
            ai_run_as="user", ai_run_user_id=self.flow_user.id, ai_domain="[('city', '=', 'Liège')]"
        )
        cron = self.env["ir.cron"].create(
            {"name": "Welcome all", "ir_actions_server_id": action.id, "interval_number": 1, "interval_type": "days"}
        )
        cron.method_direct_trigger()
        runs = self.env["ai.assistant.run"].search([("action_id", "=", action.id)])
        self.assertEqual(sorted(runs.mapped("res_id")), sorted(partners.ids))
        for _partner in partners:
            self.llm.queue(Turn(text="Welcome!"))
        self.assertEqual(self.process(), 5)
        self.assertEqual(set(runs.mapped("state")), {"done"})
        # the schedule comes round again: each record is queued again once its last run is done, never twice
        cron.method_direct_trigger()
        cron.method_direct_trigger()
        again = self.env["ai.assistant.run"].search([("action_id", "=", action.id)]) - runs
        self.assertEqual(sorted(again.mapped("res_id")), sorted(partners.ids))
        for partner in partners:
            self.assertEqual(len(self.notes(partner)), 1)
