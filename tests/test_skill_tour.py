"""A server's skill in a real browser (static/tests/tours/ai_mcp_skill_tour.js): the assistant is
given the invoice-review skill of testing/skills_server.py, the scripted model loads it, and the
user sees the call's block (the skill, its server, its instructions) and the answer."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn
from odoo.addons.ai_mcp.testing.skills_server import BODY_LINE, SKILL_URI, SkillsServer

from .browser import browser_prepared
from .test_chat_tour import _TourCase


def skill_model(body):
    """Loads the skill it was offered, then answers once it read the skill's instructions."""
    results = [message["content"] for message in body.get("messages", []) if message.get("role") == "tool"]
    if any(BODY_LINE in result for result in results):
        return Turn(text="The VAT number matches.")
    return Turn(tool_calls=(ToolCall("load_skill", {"skill": "invoice-review"}),))


@tagged("post_install", "-at_install")
class TestSkillTour(_TourCase):
    responder = staticmethod(skill_model)
    assistant_values = {"name": "Skill assistant"}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.skills_server = SkillsServer().start()
        cls.addClassCleanup(cls.skills_server.stop)

    def setUp(self):
        super().setUp()
        self.invoices = self.env["mcp.server"].create(
            {"name": "Invoices", "scope": "system", "url": self.skills_server.url}
        )
        sync = self.invoices.action_sync_tools()
        self.assertEqual(sync["params"]["type"], "success", sync["params"]["message"])
        self.assistant.write(
            {"mcp_server_ids": [(4, self.invoices.id)], "mcp_skill_ids": [(6, 0, self.invoices.skill_ids.ids)]}
        )

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.invoices._server_key()))
        super().tearDown()

    def test_the_user_sees_the_skill_the_model_loaded_and_its_answer(self):
        with browser_prepared(self, axe=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_skill_tour", login="admin", timeout=120)
        self.assertEqual(self.skills_server.reads(), [SKILL_URI])
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        loaded = conversation.message_ids.filtered(lambda m: m.tool_name == "load_skill")
        self.assertEqual(loaded.status, "done")
        self.assertIn(BODY_LINE, loaded.content)
