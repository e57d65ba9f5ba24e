"""Ask AI on a form, in a real browser (static/tests/tours/ai_mcp_ask_ai_tour.js): the partner's
chatter opens the chat about the partner, the scripted model, told which record it is, answers
with a Markdown table linking to it, and the link opens the partner's form over the chat."""

import re

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .test_chat_tour import _TourCase

PARTNER = "Azure Tour Partner"


def record_table_model(body):
    """A table whose first cell links to the record the system prompt names; without one, a question."""
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    told = re.search(r'Contact "([^"]+)" \(model res\.partner, id (\d+)', system)
    if told is None:
        return Turn(text="Which record do you mean?")
    name, record_id = told.groups()
    return Turn(
        text=f"Here it is:\n\n| Name | City |\n| --- | :-: |\n| [{name}](/odoo/res.partner/{record_id}) | Paris |\n",
        chunks=8,
    )


@tagged("post_install", "-at_install")
class TestAskAiTour(_TourCase):
    responder = staticmethod(record_table_model)
    assistant_values = {"name": "Ask AI assistant"}

    def test_ask_ai_on_a_partner_answers_with_a_table_linking_to_it(self):
        partner = self.env["res.partner"].create({"name": PARTNER, "city": "Paris"})
        self.start_tour(f"/odoo/res.partner/{partner.id}", "ai_mcp_ask_ai_tour", login="admin", timeout=180)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual((conversation.res_model, conversation.res_id), ("res.partner", partner.id))
        self.assertEqual(len(self.llm.requests), 1)
