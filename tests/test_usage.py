"""Usage of every model call (ai.usage): a real chat turn (the scripted LLM, a real MCP server)
leaves one row per model call with the tokens the provider reported and their cost at the model's
prices, readable by its user and the AI managers only."""

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase


def reported(prompt, completion, cached=0, reasoning=0):
    """A usage object as OpenAI's Chat Completions reports it."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


@tagged("post_install", "-at_install")
class TestUsage(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.env["ai.provider.model"].create(
            {
                "provider_id": cls.provider.id,
                "name": "scripted-model",
                "price_input": 2.5,
                "price_cached_input": 1.25,
                "price_output": 10.0,
                "currency_id": cls.env.company.currency_id.id,
            }
        )

    def _tool_turn(self):
        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),), usage=reported(1000, 50, cached=600)),
            Turn(text="5.", usage=reported(1200, 20, reasoning=8)),
        )
        self.login(self.user)
        response, events = self.send("What is 2 + 3?")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "done", events[-1].data)
        return events

    def test_each_model_call_is_recorded_with_its_tokens_and_cost(self):
        events = self._tool_turn()
        conversation = self.conversation(events[0].data["conversation_id"])
        rows = self.env["ai.usage"].search([("conversation_id", "=", conversation.id)], order="round, id")
        self.assertEqual(
            [(r.round, r.input_tokens, r.cached_input_tokens, r.output_tokens, r.reasoning_tokens) for r in rows],
            [(1, 1000, 600, 50, 0), (2, 1200, 0, 20, 8)],
        )
        self.assertEqual(rows.user_id, self.user)
        self.assertEqual(rows.assistant_id, self.assistant)
        self.assertEqual(rows.provider_id, self.provider)
        self.assertEqual(rows.model_id, self.model)
        self.assertEqual(rows.company_id, self.user.company_id)
        self.assertEqual(rows.currency_id, self.user.company_id.currency_id)
        # round 1: 400 input at 2.5, 600 cached at 1.25, 50 output at 10 (per million)
        # round 2: 1200 input at 2.5, 20 output at 10
        self.assertAlmostEqual(rows[0].cost, 0.00225, places=6)
        self.assertAlmostEqual(rows[1].cost, 0.0032, places=6)
        self.assertEqual(events[-1].data["usage"]["cached_input_tokens"], 600)
        self.assertEqual([e.data["round"] for e in events if e.event == "usage"], [1, 2])

    def test_a_later_price_does_not_rewrite_the_past(self):
        events = self._tool_turn()
        self.model.price_output = 1000.0
        rows = self.env["ai.usage"].search([("conversation_id", "=", events[0].data["conversation_id"])])
        self.assertAlmostEqual(sum(rows.mapped("cost")), 0.00545, places=6)

    def test_a_model_without_prices_records_tokens_at_no_cost(self):
        self.model.write({"price_input": 0, "price_cached_input": 0, "price_output": 0})
        events = self._tool_turn()
        rows = self.env["ai.usage"].search([("conversation_id", "=", events[0].data["conversation_id"])])
        self.assertEqual(sum(rows.mapped("total_tokens")), 2270)
        self.assertEqual(sum(rows.mapped("cost")), 0)

    def test_users_read_their_own_usage_and_managers_everyones(self):
        self._tool_turn()
        mine = self.env["ai.usage"].with_user(self.user).search([])
        self.assertEqual(len(mine), 2)
        self.assertFalse(self.env["ai.usage"].with_user(self.other).search([]))
        with self.assertRaises(AccessError):
            mine[0].with_user(self.other).read(["cost"])
        with self.assertRaises(AccessError):
            mine[0].with_user(self.user).write({"cost": 0})
        manager = new_test_user(self.env, "usage_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager")
        self.assertEqual(len(self.env["ai.usage"].with_user(manager).search([])), 2)

    def test_negative_prices_are_refused_naming_the_field(self):
        with self.assertRaisesRegex(ValidationError, "Output Price of scripted-model cannot be negative"):
            with self.cr.savepoint():
                self.model.price_output = -1
        self.model.invalidate_recordset()
        self.assertEqual(self.model.price_output, 10.0)
