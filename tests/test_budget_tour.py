"""In a real browser, a user near her AI budget is warned at 80%, then her next message once the
budget is spent is refused with the sentence naming it (static/tests/tours/ai_mcp_budget_tour.js)."""

from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .test_chat_tour import _TourCase


def budget_model(body):
    """The first question uses 900 tokens, any later one 200."""
    messages = body.get("messages", [])
    asked = [message["content"] for message in messages if message.get("role") == "user"][-1]
    if asked.startswith("First"):
        return Turn(text="First answer.", usage={"prompt_tokens": 850, "completion_tokens": 50, "total_tokens": 900})
    return Turn(text="Second answer.", usage={"prompt_tokens": 150, "completion_tokens": 50, "total_tokens": 200})


@tagged("post_install", "-at_install")
class TestBudgetTour(_TourCase):
    responder = staticmethod(budget_model)
    approvals = {"echo": False}
    assistant_values = {"name": "Budget assistant"}

    def test_a_user_is_warned_then_refused(self):
        user = new_test_user(self.env, "budget_user", groups="base.group_user,ai_mcp.group_ai_user", name="Budget User")
        self.env["ai.budget"].create(
            {"name": "Research", "scope": "user", "user_id": user.id, "unit": "tokens", "amount": 1000}
        )
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_budget_tour", login="budget_user", timeout=120)
        self.assertEqual(len(self.llm.requests), 2, "the third message never reached the model")
        messages = self.env["ai.message"].search([("conversation_id.user_id", "=", user.id), ("role", "=", "user")])
        self.assertEqual(messages.mapped("content"), ["First question", "Second question"])
