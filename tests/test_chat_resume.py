"""POST /ai_mcp/chat/resume: a turn paused for approval or for "continue?" goes on from what was
stored, in a new request, with the tools bound again for that request."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase, text_of, types_of


@tagged("post_install", "-at_install")
class TestChatResume(ChatCase):
    def setUp(self):
        super().setUp()
        # unannotated tools need approval by default (MCP: "may be destructive")
        self.assertTrue(self.tools["weather"].requires_approval)
        self.login(self.user)

    def ask_weather(self):
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("weather", {"city": "Paris"}, id="call_weather"),
                    ToolCall("add", {"a": 1, "b": 1}, id="call_add"),
                )
            )
        )
        response, events = self.send("Weather in Paris, and 1 + 1?")
        self.assertEqual(response.status_code, 200, response.text)
        return events

    def test_a_turn_resumed_after_an_approval_goes_on_with_the_time_it_had_left(self):
        events = self.ask_weather()
        pause = events[-1]
        self.assertIsInstance(pause.data["turn_ms"], int)  # the answer's time so far, the user's never counted
        conversation_id = events[0].data["conversation_id"]
        # as if the answer had used its whole limit before asking: the user's answer, however
        # quick or late, gives it no more time
        stored = (
            self.env["ai.conversation.event"]
            .sudo()
            .search([("conversation_id", "=", conversation_id), ("seq", "=", pause.id)])
        )
        stored.payload = {**stored.payload, "turn_ms": int(self.assistant.turn_timeout * 1000)}
        self.env.flush_all()
        self.assertEqual(self.conversation(conversation_id)._turn_spent(), self.assistant.turn_timeout)
        response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        self.assertEqual(response.status_code, 200, response.text)
        results = {e.data["id"]: e.data for e in resumed if e.event == "tool_result"}
        self.assertEqual(results["call_weather"]["error_code"], "MCP_TIMEOUT")
        self.assertIn("The answer's time limit (2 minutes) ran out", results["call_weather"]["error_message"])
        self.assertEqual((resumed[-1].event, resumed[-1].data["code"]), ("error", "LLM_TIMEOUT"))

    def test_approval_allowed_runs_the_call_and_the_answer_goes_on(self):
        events = self.ask_weather()
        self.assertEqual(types_of(events), ["start", "round", "tool_call", "tool_call", "approval_required"])
        pending = events[-1].data["calls"]
        self.assertEqual(
            [(c["id"], c["tool"], c["server"]) for c in pending], [("call_weather", "weather", "Test tools")]
        )
        conversation_id = events[0].data["conversation_id"]
        conversation = self.conversation(conversation_id)
        self.assertEqual(conversation.state, "awaiting_approval")
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "tool").sorted("seq").mapped("status"),
            ["pending", "pending"],
        )

        # a new message is refused while the question is open
        response = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "hm"},
        )
        self.assertEqual(response.status_code, 409)
        self.assertEqual(response.json()["error"]["code"], "CONVERSATION_BUSY")
        # and an answer of the wrong kind
        response = self.post("/ai_mcp/chat/resume", {"conversation_id": conversation_id, "go_on": True})
        self.assertEqual(response.status_code, 400)

        self.llm.queue(Turn(text="Paris: 21.5 °C; 1 + 1 = 2."))
        response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(types_of(resumed), ["start", "tool_result", "tool_result", "round", "text", "done"])
        self.assertEqual(resumed[0].id, events[-1].id + 1)
        results = {e.data["id"]: e.data for e in resumed if e.event == "tool_result"}
        self.assertTrue(results["call_weather"]["ok"])
        self.assertIn("Paris", results["call_weather"]["model_text"])
        self.assertTrue(results["call_add"]["ok"])
        self.assertEqual([e.data["n"] for e in resumed if e.event == "round"], [2])
        self.assertEqual(resumed[-1].data["rounds"], 2)
        sent = self.llm.requests[-1]["messages"]
        self.assertEqual([m["role"] for m in sent], ["system", "user", "assistant", "tool", "tool"])
        self.assertEqual([m["tool_call_id"] for m in sent[3:]], ["call_weather", "call_add"])

        conversation = self.conversation(conversation_id)
        self.assertEqual(conversation.state, "idle")
        tools = conversation.message_ids.filtered(lambda m: m.role == "tool").sorted("seq")
        self.assertEqual(tools.mapped("status"), ["done", "done"])
        stored = self.stored_events(conversation_id)
        self.assertEqual(stored.mapped("seq"), list(range(1, resumed[-1].id + 1)))

        # a second answer to the same question finds nothing waiting
        response = self.post(
            "/ai_mcp/chat/resume", {"conversation_id": conversation_id, "approvals": {"call_weather": True}}
        )
        self.assertEqual(response.status_code, 409)
        self.assertEqual(response.json()["error"]["code"], "NOT_WAITING")

    def test_approval_denied_tells_the_model(self):
        events = self.ask_weather()
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="I was not allowed to look up the weather."))
        _response, resumed = self.resume(conversation_id, approvals={"call_weather": False})
        results = {e.data["id"]: e.data for e in resumed if e.event == "tool_result"}
        self.assertFalse(results["call_weather"]["ok"])
        self.assertEqual(results["call_weather"]["error_code"], "TOOL_DENIED")
        self.assertTrue(results["call_add"]["ok"])
        self.assertEqual(resumed[-1].event, "done")
        tools = self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "tool").sorted("seq")
        self.assertEqual(tools.mapped("status"), ["denied", "done"])

    def test_resume_binds_the_tools_again(self):
        events = self.ask_weather()
        conversation_id = events[0].data["conversation_id"]
        # meanwhile an admin disables the tool: the approved call must not run
        self.tools["weather"].enabled = False
        self.llm.queue(Turn(text="The weather tool is gone."))
        _response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        results = {e.data["id"]: e.data for e in resumed if e.event == "tool_result"}
        self.assertFalse(results["call_weather"]["ok"])
        self.assertEqual(results["call_weather"]["error_code"], "MCP_TOOL_NOT_FOUND")
        self.assertTrue(results["call_add"]["ok"])

    def test_resume_of_an_assistant_the_user_lost_is_refused(self):
        events = self.ask_weather()
        conversation_id = events[0].data["conversation_id"]
        group = self.env["res.groups"].create({"name": "Weather people"})
        self.assistant.group_ids = group
        response = self.post(
            "/ai_mcp/chat/resume", {"conversation_id": conversation_id, "approvals": {"call_weather": True}}
        )
        self.assertEqual(response.status_code, 404)
        self.assertEqual(self.conversation(conversation_id).state, "awaiting_approval")

    def test_continue_question_yes_goes_on_with_tools(self):
        self.assistant.max_rounds = 2
        self.llm.queue(Turn(text="Adding.", tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_1"),)))
        _response, events = self.send("Add 2 and 3, then more.")
        self.assertEqual(types_of(events), ["start", "round", "text", "tool_call", "tool_result", "confirm_continue"])
        self.assertEqual(events[-1].data, {"type": "confirm_continue", "rounds_used": 1, "max_rounds": 2})
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual(self.conversation(conversation_id).state, "awaiting_confirmation")
        self.assertEqual(self.conversation(conversation_id).rounds_used, 1)
        response = self.post("/ai_mcp/chat/resume", {"conversation_id": conversation_id, "approvals": {}})
        self.assertEqual(response.status_code, 400)

        self.llm.queue(Turn(text="5, and that is all."))
        _response, resumed = self.resume(conversation_id, go_on=True)
        self.assertEqual(types_of(resumed), ["start", "round", "text", "done"])
        self.assertEqual(resumed[1].data, {"type": "round", "n": 2, "max": 2})
        self.assertTrue(self.llm.requests[-1].get("tools"), "going on offers the tools again")
        self.assertEqual(resumed[-1].data["rounds"], 2)
        self.assertEqual(self.conversation(conversation_id).state, "idle")

    def test_continue_question_no_answers_without_tools(self):
        self.assistant.max_rounds = 2
        self.llm.queue(Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_1"),)))
        _response, events = self.send("Add 2 and 3, then more.")
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="It is 5."))
        _response, resumed = self.resume(conversation_id, go_on=False)
        self.assertEqual(types_of(resumed), ["start", "text", "done"])
        self.assertEqual(text_of(resumed), "It is 5.")
        self.assertFalse(self.llm.requests[-1].get("tools"), "the last call is made without tools")
        self.assertEqual(self.conversation(conversation_id).state, "idle")
