"""Tool search in Odoo: an assistant with more tools than it offers up front, chatted with by a user
who has the AI user group only. A search finds only the tools the assistant may use, the tools found
stay offered in the conversation's next turns, and their calls ask for approval and are audited as
any other's."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase, types_of


def offered(body):
    return [tool["function"]["name"] for tool in body.get("tools") or []]


@tagged("post_install", "-at_install")
class TestToolSearch(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # 13 tools on the test server: past 3, the model searches them
        cls.assistant.write(
            {
                "tool_search_threshold": 3,
                "mcp_tool_disabled_ids": [(6, 0, cls.tools["weather"].ids)],
                "mcp_tool_always_ids": [(6, 0, cls.tools["add"].ids)],
            }
        )
        # changed on its server since it was approved: given to no model until reviewed
        cls.tools["environment"].sudo().write({"content_hash": "changed since approved"})

    def test_a_search_never_finds_a_tool_the_assistant_may_not_use(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("search_tools", {"query": "weather environment echo"}, id="call_s"),)),
            Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_w"),)),
            Turn(text="I may not look up the weather."),
        )
        _response, events = self.send("Weather in Paris?")
        self.assertEqual(
            types_of(events),
            ["start", "round", "tool_search", "round", "tool_call", "tool_result", "round", "text", "done"],
        )
        search = next(e.data for e in events if e.event == "tool_search")
        found = [tool["tool"] for tool in search["found"]]
        self.assertIn("echo", found)
        self.assertNotIn("weather", found, "disabled for the assistant")
        self.assertNotIn("environment", found, "changed since approved")
        for body in self.llm.requests:
            self.assertNotIn("weather", offered(body))
            self.assertNotIn("environment", offered(body))
        self.assertEqual(offered(self.llm.requests[0]), ["search_tools", "add"])
        self.assertIn(
            "You have 11 tools on these servers: Test tools (11).", self.llm.requests[0]["messages"][0]["content"]
        )
        refused = next(e.data for e in events if e.event == "tool_result")
        self.assertEqual(refused["error_code"], "MCP_TOOL_NOT_FOUND")
        self.assertIn("is not offered in this conversation", refused["model_text"])
        conversation = self.conversation(events[0].data["conversation_id"])
        self.assertEqual(conversation.found_tools, search["kept"])
        self.assertIn({"server": self.server._server_key(), "tool": "echo"}, conversation.found_tools)

    def test_the_preview_says_the_model_searches_the_tools(self):
        self.assertIn(
            "(11 tools, more than 3: the model is given search_tools, the always offered tools and those its "
            "searches find.)",
            self.assistant.tool_preview,
        )
        self.assistant.tool_search_threshold = 11
        self.assertNotIn("search_tools", self.assistant.tool_preview)

    def test_tools_found_stay_offered_in_the_next_turns_while_the_assistant_may_use_them(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("search_tools", {"query": "echo"}, id="call_s"),)),
            Turn(text="Found it."),
        )
        _response, first = self.send("Find the echo tool.")
        conversation_id = first[0].data["conversation_id"]
        self.assertIn("echo", offered(self.llm.requests[1]))

        self.llm.reset()
        self.llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="call_e"),)), Turn(text="It said hi."))
        _response, second = self.send("Echo hi.", conversation_id=conversation_id)
        self.assertIn("echo", offered(self.llm.requests[0]), "offered from the first call of the next turn")
        result = next(e.data for e in second if e.event == "tool_result")
        self.assertTrue(result["ok"])
        self.assertEqual(result["model_text"], "hi")

        # an admin takes echo from the assistant: the conversation's next turn no longer offers it
        self.assistant.write({"mcp_tool_disabled_ids": [(4, self.tools["echo"].id)]})
        self.llm.reset()
        self.llm.queue(Turn(text="No echo."))
        self.send("Echo again.", conversation_id=conversation_id)
        self.assertNotIn("echo", offered(self.llm.requests[0]))

    def test_a_tool_found_asks_for_approval_and_is_audited_as_any_other(self):
        self.login(self.user)
        self.assertTrue(self.tools["fail"].requires_approval)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("search_tools", {"query": "fail"}, id="call_s"),)),
            Turn(tool_calls=(ToolCall("fail", {"reason": "test"}, id="call_f"),)),
        )
        _response, events = self.send("Make it fail.")
        self.assertEqual(types_of(events)[-3:], ["round", "tool_call", "approval_required"])
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="Denied."))
        _response, resumed = self.resume(conversation_id, approvals={"call_f": False})
        result = next(e.data for e in resumed if e.event == "tool_result")
        self.assertEqual(result["error_code"], "TOOL_DENIED")
        audit = self.env["ai.tool.call"].search([("conversation_id", "=", conversation_id)])
        self.assertEqual(audit.mapped("tool_name"), ["fail"])
        self.assertEqual(audit.status, "denied")
