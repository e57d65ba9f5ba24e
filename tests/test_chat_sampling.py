"""A tool's server asks the assistant's model for a completion (sampling): the user sees the
request, may edit it, approves or declines it from any worker; the approved one is answered by the
assistant's model as a model call of the answer (its usage row and cost), and a server the admin
did not allow sampling is not offered it. The same with MCP's own reference server
(@modelcontextprotocol/server-everything, package.json's devDependencies) run over stdio by node."""

import requests

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase
from .common import node_or_skip, reference_server


class SamplingCase(ChatCase):
    """A user's turn whose tool call asks for sampling, answered through the chat's sampling route."""

    def stream_until(self, body, on_events):
        final = {"done", "error", "approval_required", "confirm_continue"}

        def read_until(events):
            on_events(events)
            return any(e.event in final for e in events)

        sock, events = self.raw_stream(body, read_until)
        sock.close()
        return events

    def other_browser(self, user):
        """A session of its own, as a request that reaches another worker would come."""
        session = requests.Session()
        answer = session.post(
            f"{self.base_url()}/web/session/authenticate",
            json={
                "jsonrpc": "2.0",
                "method": "call",
                "params": {"db": self.env.cr.dbname, "login": user.login, "password": user.login},
            },
            timeout=30,
        ).json()
        self.assertEqual(answer["result"]["uid"], user.id)
        return session

    def rpc(self, session, params):
        return session.post(
            f"{self.base_url()}/ai_mcp/chat/sampling",
            json={"jsonrpc": "2.0", "method": "call", "params": params},
            timeout=30,
        ).json()

    def ask(self, answers, tool="ask_model", arguments=None, assistant=None):
        """A turn calling `tool` (ask_model); the first sampling_required gets each of `answers`
        (session, action, content) in turn, their replies kept in `replies`. Returns (events, replies)."""
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall(tool, arguments or {"question": "Capital of France?"}, id="call_ask"),)),
            Turn(text="Brussels."),
            Turn(text="Done."),
        )
        replies = []

        def on_events(events):
            asked = next((e for e in events if e.event == "sampling_required"), None)
            if asked is None or replies:
                return
            for session, action, content in answers:
                params = {
                    "conversation_id": events[0].data["conversation_id"],
                    "call_id": "call_ask",
                    "sampling": asked.data["sampling"],
                    "action": action,
                    "content": content,
                }
                replies.append(self.rpc(session, params))

        assistant = assistant or self.assistant
        events = self.stream_until({"assistant_id": assistant.id, "message": "Ask it."}, on_events)
        return events, replies


@tagged("post_install", "-at_install")
class TestChatSampling(SamplingCase):
    mcp_options = ("--sampling",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tools["ask_model"].requires_approval = False
        cls.server.sampling_enabled = True

    def test_a_new_server_offers_sampling_until_an_admin_turns_it_off(self):
        fresh = self.env["mcp.server"].create({"name": "Defaults", "scope": "system", "url": self.mcp.url})
        self.assertTrue(fresh.sampling_enabled)
        self.assertTrue(fresh._server_spec().sampling)
        fresh.sampling_enabled = False
        self.assertFalse(fresh._server_spec().sampling)
        self.assertNotIn("sampling_enabled", self.env["mcp.server"].with_user(self.user).fields_get())

    def test_the_user_approves_an_edited_request_and_the_model_answers_the_server(self):
        owner = self.other_browser(self.user)
        stranger = self.other_browser(self.other)
        edited = {"messages": [{"role": "user", "text": "Capital of Belgium?"}], "max_tokens": 40}
        events, replies = self.ask(
            [
                (stranger, "accept", edited),
                (owner, "accept", {"max_tokens": 0}),
                (owner, "accept", edited),
            ]
        )
        self.assertEqual(replies[0]["error"]["code"], 404, "another user's conversation is not found")
        self.assertFalse(replies[1]["result"]["answered"])
        self.assertIn("between 1 and", replies[1]["result"]["errors"][0])
        self.assertEqual(replies[2]["result"], {"answered": True})
        asked = next(e for e in events if e.event == "sampling_required")
        self.assertEqual((asked.data["server"], asked.data["max_tokens"]), ("Test tools", 200))
        self.assertEqual(asked.data["messages"], [{"role": "user", "text": "Capital of France?"}])
        sampled = self.llm.requests[1]
        self.assertEqual(sampled["messages"][-1], {"role": "user", "content": "Capital of Belgium?"})
        self.assertEqual(sampled.get("max_tokens", sampled.get("max_completion_tokens")), 40)
        done = next(e for e in events if e.event == "sampling_done")
        self.assertEqual((done.data["action"], done.data["answer"]), ("accept", "Brussels."))
        result = next(e for e in events if e.event == "tool_result")
        self.assertEqual(result.data["model_text"], "scripted-model said: Brussels.")
        self.assertEqual(events[-1].event, "done")
        conversation_id = events[0].data["conversation_id"]
        stored = self.stored_events(conversation_id)
        self.assertEqual([(e.seq, e.type) for e in stored], [(e.id, e.event) for e in events], "stored as streamed")
        usage = self.env["ai.usage"].search([("conversation_id", "=", conversation_id)], order="id")
        self.assertEqual(usage.mapped("sampling"), [False, True, False], "the sampling call has its usage row")
        self.assertEqual(usage[1].user_id, self.user)
        self.assertGreater(usage[1].total_tokens, 0)
        late = self.rpc(
            owner,
            {
                "conversation_id": conversation_id,
                "call_id": "call_ask",
                "sampling": asked.data["sampling"],
                "action": "decline",
            },
        )
        self.assertFalse(late["result"]["answered"], "answered once: the request is closed")

    def test_a_declined_request_is_refused_and_the_model_is_not_asked(self):
        events, replies = self.ask([(self.other_browser(self.user), "decline", None)])
        self.assertEqual(replies[0]["result"], {"answered": True})
        done = next(e for e in events if e.event == "sampling_done")
        self.assertEqual(done.data["action"], "decline")
        result = next(e for e in events if e.event == "tool_result")
        self.assertIn("User rejected sampling request", result.data["model_text"])
        self.assertEqual(len(self.llm.requests), 2, "the turn's two rounds, no sampling call")
        conversation_id = events[0].data["conversation_id"]
        usage = self.env["ai.usage"].search([("conversation_id", "=", conversation_id)])
        self.assertFalse(any(usage.mapped("sampling")))

    def test_a_server_without_sampling_is_refused(self):
        self.server.sampling_enabled = False
        events, _replies = self.ask([])
        self.assertFalse([e for e in events if e.event.startswith("sampling")])
        result = next(e for e in events if e.event == "tool_result")
        self.assertIn("Sampling not supported", result.data["model_text"])


@tagged("post_install", "-at_install")
class TestReferenceServerSampling(SamplingCase):
    """MCP's reference server, registered by an administrator as a stdio server run by node."""

    @classmethod
    def setUpClass(cls):
        node_or_skip()
        super().setUpClass()
        cls.everything = reference_server(cls.env)
        cls.servers_closed_at_end = (cls.everything,)
        cls.assistant.mcp_server_ids = [(4, cls.everything.id)]

    def test_the_reference_server_gets_the_answer_its_user_approved(self):
        tool = self.everything.tool_ids.filtered(lambda t: t.name == "trigger-sampling-request")
        self.assertTrue(tool, "the reference server offers its sampling tool to a client that samples")
        tool.requires_approval = False
        events, replies = self.ask(
            [(self.other_browser(self.user), "accept", None)],
            tool="trigger-sampling-request",
            arguments={"prompt": "Capital of Belgium?", "maxTokens": 50},
        )
        self.assertEqual(replies[0].get("result"), {"answered": True}, replies)
        asked = next(e for e in events if e.event == "sampling_required")
        self.assertEqual((asked.data["server"], asked.data["max_tokens"]), ("Everything", 50))
        self.assertEqual(
            asked.data["messages"],
            [{"role": "user", "text": "Resource trigger-sampling-request context: Capital of Belgium?"}],
        )
        sampled = self.llm.requests[1]
        self.assertEqual(sampled["messages"][0], {"role": "system", "content": "You are a helpful test server."})
        self.assertEqual(sampled["messages"][-1]["content"], asked.data["messages"][0]["text"])
        done = next(e for e in events if e.event == "sampling_done")
        self.assertEqual((done.data["action"], done.data["answer"]), ("accept", "Brussels."))
        result = next(e for e in events if e.event == "tool_result")
        self.assertIn("LLM sampling result", result.data["model_text"])
        self.assertIn('"text": "Brussels."', result.data["model_text"], "the server got the answer and returned it")
        self.assertEqual(events[-1].event, "done")
        usage = self.env["ai.usage"].search([("conversation_id", "=", events[0].data["conversation_id"])], order="id")
        self.assertEqual(usage.mapped("sampling"), [False, True, False], "the sampling call has its usage row")
        self.assertEqual(usage[1].user_id, self.user)
