"""A server's request for a completion of the assistant's model in a real browser
(static/tests/tours/ai_mcp_sampling_tour.js): the card shows which server asks, the messages and
the output cap; the user edits and approves it, and sees the model's answer the server got. Then
the same card for MCP's reference server (server-everything, run over stdio by node)."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .browser import browser_prepared
from .common import node_or_skip, reference_server
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


REFERENCE_SYSTEM = "You are a helpful test server."


def reference_model(body):
    """Calls the reference server's sampling tool, answers its request, then says it is done."""
    messages = body.get("messages", [])
    if messages and messages[0].get("content") == REFERENCE_SYSTEM:
        return Turn(text="Brussels.")
    if any(message.get("role") == "tool" for message in messages):
        return Turn(text="The reference server has its answer.")
    return Turn(tool_calls=(ToolCall("trigger-sampling-request", {"prompt": "Capital of Belgium?", "maxTokens": 50}),))


@tagged("post_install", "-at_install")
class TestReferenceServerSamplingTour(_TourCase):
    """MCP's reference server (server-everything, over stdio), its request approved on the card."""

    responder = staticmethod(reference_model)
    assistant_values = {"name": "Reference assistant"}

    @classmethod
    def setUpClass(cls):
        node_or_skip()
        super().setUpClass()

    def setUp(self):
        super().setUp()
        self.everything = reference_server(self.env)
        asked = self.everything.tool_ids.filtered(lambda t: t.name == "trigger-sampling-request")
        asked.requires_approval = False
        self.assistant.write(
            {
                "mcp_server_ids": [(4, self.everything.id)],
                "mcp_tool_disabled_ids": [(4, tool.id) for tool in self.everything.tool_ids - asked],
            }
        )

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.everything._server_key()))
        super().tearDown()

    def test_the_user_approves_the_reference_servers_request_on_its_card(self):
        self.start_tour(
            "/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_reference_sampling_tour", login="admin", timeout=120
        )
        usage = self.env["ai.usage"].search([("sampling", "=", True)])
        self.assertEqual(len(usage), 1, "the sampling call has its usage row")
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        asked = conversation.message_ids.filtered(lambda m: m.tool_name == "trigger-sampling-request")
        self.assertEqual(asked.status, "done")
        self.assertIn('"text": "Brussels."', asked.content)
