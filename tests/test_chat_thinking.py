"""A provider that shows its reasoning and needs it back (DeepSeek's thinking mode, strict as its
documentation: testing/llm_providers.py): the user sees it, the reply's message keeps it, and a
turn resumed from what was stored after an approval sends it back, and so does the next question
for the messages that made tool calls."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.llm_providers import DeepSeekReasoner
from odoo.addons.ai_mcp.testing.scripted_llm import Provider, ToolCall, Turn

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatThinking(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.llm.provider = DeepSeekReasoner()
        cls.addClassCleanup(setattr, cls.llm, "provider", Provider())

    def test_reasoning_is_shown_kept_and_sent_back_after_an_approval(self):
        self.login(self.user)
        self.assertTrue(self.tools["weather"].requires_approval)
        self.llm.queue(Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_weather"),)))
        response, events = self.send("Weather in Paris?")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "approval_required")
        shown = "".join(e.data["delta"] for e in events if e.event == "thinking")
        self.assertEqual(shown, DeepSeekReasoner.thought)
        conversation_id = events[0].data["conversation_id"]
        reply = self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "assistant")
        self.assertEqual(reply.thinking, DeepSeekReasoner.thought)

        self.llm.queue(Turn(text="Paris: 21.5 °C."))
        response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(resumed[-1].event, "done", resumed[-1].data)
        (sent,) = [m for m in self.llm.requests[-1]["messages"] if m.get("tool_calls")]
        self.assertEqual(sent["reasoning_content"], DeepSeekReasoner.thought)

        replies = self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "assistant")
        self.assertEqual(replies.mapped("thinking"), [DeepSeekReasoner.thought] * 2)
        # a reopened conversation reads the reasoning of both replies from the stored events
        stored = self.conversation(conversation_id)._chat_history()["events"]
        thinking = "".join(event["delta"] for event in stored if event["type"] == "thinking")
        self.assertEqual(thinking, DeepSeekReasoner.thought * 2)

    def test_the_next_question_sends_back_the_reasoning_of_earlier_tool_calls(self):
        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_weather"),)))
        _response, events = self.send("Weather in Paris?")
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="Paris: 21.5 °C."))
        _response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        self.assertEqual(resumed[-1].event, "done", resumed[-1].data)

        # DeepSeek refuses a later request whose tool-calling message lacks its reasoning
        self.llm.queue(Turn(text="Lyon is warmer."))
        response, again = self.send("And Lyon?", conversation_id=conversation_id)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(again[-1].event, "done", again[-1].data)
        (sent,) = [m for m in self.llm.requests[-1]["messages"] if m.get("tool_calls")]
        self.assertEqual(sent["reasoning_content"], DeepSeekReasoner.thought)
