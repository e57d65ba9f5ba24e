"""A server's request for a completion of the assistant's model in a real browser
(static/tests/tours/ai_mcp_sampling_tour.js): the card shows which server asks, the messages and
the output cap; the user edits and approves it, and sees the model's answer the server got."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .browser import browser_prepared
from .test_chat_tour import _TourCase

SAMPLING_SYSTEM = "Answer in one short sentence."


def sampling_model(body):
    """The turn calls `ask_model`, then says what the server got; the server's own request (its
    system prompt first) is answered with the capital it asks for."""
    messages = body.get("messages", [])
    if messages and messages[0].get("content") == SAMPLING_SYSTEM:
        return Turn(text="Brussels." if "Belgium" in messages[-1]["content"] else "Paris.")
    results = [message["content"] for message in messages if message.get("role") == "tool"]
    if results:
        return Turn(text=f"The server got: {results[-1]}")
    return Turn(tool_calls=(ToolCall("ask_model", {"question": "Capital of France?"}),))


@tagged("post_install", "-at_install")
class TestSamplingTour(_TourCase):
    responder = staticmethod(sampling_model)
    server_options = ("--sampling",)
    approvals = {"ask_model": False}
    assistant_values = {"name": "Sampling assistant"}

    def setUp(self):
        super().setUp()
        self.server.sampling_enabled = True

    def test_the_user_edits_and_approves_a_servers_request_for_the_model(self):
        with browser_prepared(self, axe=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_sampling_tour", login="admin", timeout=120)
        sampled = [body for body in self.llm.requests if body["messages"][0].get("content") == SAMPLING_SYSTEM]
        self.assertEqual(len(sampled), 1)
        self.assertEqual(sampled[0]["messages"][-1]["content"], "Capital of Belgium?")
        self.assertEqual(sampled[0].get("max_tokens", sampled[0].get("max_completion_tokens")), 50)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        asked = conversation.message_ids.filtered(lambda m: m.tool_name == "ask_model")
        self.assertEqual((asked.status, asked.content), ("done", "scripted-model said: Brussels."))
