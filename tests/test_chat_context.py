"""What a real turn sends the model, through the chat route: the conversation fitted to the model's
context window (read from the model's record, else from its provider's fallback), and a request
start that stays byte for byte the same from round to round and turn to turn, under one
prompt_cache_key per assistant and user."""

import json

from odoo.tests import tagged

from odoo.addons.ai_mcp.services.llm import prompt_cache_key
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase, text_of


@tagged("post_install", "-at_install")
class TestChatContext(ChatCase):
    def key_of(self, user):
        secret = self.env["ir.config_parameter"].sudo().get_param("database.secret")
        return prompt_cache_key(secret, self.assistant.id, user.id)

    def test_the_start_of_each_request_stays_the_same_from_round_to_round_and_turn_to_turn(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),)),
            Turn(tool_calls=(ToolCall("echo", {"text": "five"}),)),
            Turn(text="Five."),
            Turn(text="Still five."),
        )
        _response, first = self.send("Add 2 and 3, then echo it.")
        conversation_id = first[0].data["conversation_id"]
        _response, second = self.send("And now?", conversation_id=conversation_id)
        self.assertEqual((text_of(first), text_of(second)), ("Five.", "Still five."))
        requests = self.llm.requests
        self.assertEqual(len(requests), 4)
        tools = [json.dumps(body["tools"]) for body in requests]
        systems = [json.dumps(body["messages"][0]) for body in requests]
        self.assertEqual(tools, tools[:1] * 4, "the tools offered, byte for byte, in every request")
        self.assertEqual(systems, systems[:1] * 4, "the system prompt, byte for byte, in every request")
        # each request holds the one before it: only what follows it is new
        for before, after in zip(requests, requests[1:], strict=False):
            self.assertEqual(after["messages"][: len(before["messages"])], before["messages"])
        # one key for the assistant and user, that names neither
        key = self.key_of(self.user)
        self.assertEqual([body["prompt_cache_key"] for body in requests], [key] * 4)
        self.assertNotEqual(key, self.key_of(self.other))
        self.assertRegex(key, r"^[0-9a-f]{32}$")

    def test_the_window_is_the_models_own_else_the_providers_fallback(self):
        self.login(self.user)
        self.provider.fallback_context_window = 2_000
        self.llm.queue(Turn(text="Noted."), Turn(text="You asked twice."))
        _response, first = self.send("Remember this: " + "lorem ipsum " * 700)
        conversation_id = first[0].data["conversation_id"]
        _response, second = self.send("What did I ask?", conversation_id=conversation_id)
        # 2,000 tokens: the first turn (about 2,100) is left out, and the user told
        sent = self.llm.requests[-1]["messages"]
        self.assertEqual([m["role"] for m in sent], ["system", "user"])
        warnings = [e.data["message"] for e in second if e.event == "warning"]
        self.assertEqual(
            warnings, ["The oldest turn of the conversation was left out to fit the model's context window."]
        )
        stored = [e.payload["message"] for e in self.stored_events(conversation_id) if e.type == "warning"]
        self.assertEqual(stored, warnings, "the warning stays in the conversation")
        # the model's own window, on its record, counts over the provider's
        self.env["ai.provider.model"].create(
            {"provider_id": self.provider.id, "name": "scripted-model", "context_window": 128_000}
        )
        self.env.flush_all()
        self.llm.queue(Turn(text="All of it."))
        _response, third = self.send("And now?", conversation_id=conversation_id)
        sent = self.llm.requests[-1]["messages"]
        self.assertEqual([m["role"] for m in sent], ["system", "user", "assistant", "user", "assistant", "user"])
        self.assertFalse([e for e in third if e.event == "warning"])
