"""POST /ai_mcp/chat/stream end to end: the scripted LLM, a real MCP server, the SSE wire, and
everything the turn stored."""

import socket
import threading
import time
from datetime import timedelta
from unittest.mock import patch

from odoo import fields
from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase, text_of, types_of


@tagged("post_install", "-at_install")
class TestChatStream(ChatCase):
    def two_rounds(self):
        """Round 1 asks for two tools, round 2 answers."""
        self.llm.queue(
            Turn(
                text="Let me check.",
                tool_calls=(
                    ToolCall("add", {"a": 2, "b": 3}, id="call_add"),
                    ToolCall("echo", {"text": "hi"}, id="call_echo"),
                ),
            ),
            Turn(
                text="2 + 3 = 5, and the echo said hi.",
                usage={"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            ),
        )

    def test_two_rounds_two_tool_calls_stream_and_store_everything(self):
        self.login(self.user)
        self.two_rounds()
        response, events = self.send("What is 2 + 3? And echo hi.")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertTrue(response.headers["Content-Type"].startswith("text/event-stream"))
        self.assertEqual(response.headers["Cache-Control"], "no-cache")
        self.assertEqual(response.headers["X-Accel-Buffering"], "no")

        self.assertEqual(
            types_of(events),
            ["start", "round", "text", "tool_call", "tool_call", "tool_result", "tool_result", "round", "text", "done"],
        )
        self.assertEqual([e.id for e in events], list(range(1, len(events) + 1)), "ids are the sequence 1..n")
        start, done = events[0], events[-1]
        conversation_id = start.data["conversation_id"]
        self.assertTrue(conversation_id)
        self.assertEqual(start.data["assistant"], "Helper")
        self.assertEqual(start.data["max_rounds"], 5)
        calls = [e.data for e in events if e.event == "tool_call"]
        self.assertEqual(
            [(c["id"], c["tool"], c["server"], c["arguments"]) for c in calls],
            [
                ("call_add", "add", "Test tools", {"a": 2, "b": 3}),
                ("call_echo", "echo", "Test tools", {"text": "hi"}),
            ],
        )
        results = {e.data["id"]: e.data for e in events if e.event == "tool_result"}
        self.assertTrue(results["call_add"]["ok"])
        self.assertTrue(results["call_add"]["model_text"].startswith("5"))
        self.assertEqual(results["call_echo"]["model_text"], "hi")
        self.assertEqual([e.data["n"] for e in events if e.event == "round"], [1, 2])
        self.assertEqual(text_of(events), "Let me check.2 + 3 = 5, and the echo said hi.")
        self.assertEqual(done.data["rounds"], 2)
        self.assertTrue(done.data["message_id"])

        # every streamed event is stored with the id it was sent with
        conversation = self.conversation(conversation_id)
        stored = self.stored_events(conversation_id)
        self.assertEqual(stored.mapped("seq"), [e.id for e in events])
        self.assertEqual(stored.mapped("type"), [e.event for e in events])
        self.assertEqual([s.payload for s in stored], [e.data for e in events])
        self.assertEqual(conversation.state, "idle")
        self.assertEqual(conversation.last_seq, len(events))
        self.assertEqual(conversation.rounds_used, 2)
        self.assertEqual(conversation.user_id, self.user)
        self.assertEqual(conversation.name, "What is 2 + 3? And echo hi.")

        messages = conversation.message_ids.sorted(lambda m: (m.seq, m.id))
        self.assertEqual(messages.mapped("role"), ["user", "assistant", "tool", "tool", "assistant"])
        user_message, reply, add, echo, answer = messages
        self.assertEqual((user_message.content, user_message.seq), ("What is 2 + 3? And echo hi.", 0))
        self.assertEqual(reply.content, "Let me check.")
        self.assertEqual([c["id"] for c in reply.tool_calls], ["call_add", "call_echo"])
        self.assertEqual(
            (add.tool_name, add.server_name, add.status, add.arguments), ("add", "Test tools", "done", {"a": 2, "b": 3})
        )
        self.assertEqual(echo.content, "hi")
        self.assertGreaterEqual(add.duration_ms, 0)
        self.assertEqual(answer.id, done.data["message_id"])
        self.assertEqual(answer.content, "2 + 3 = 5, and the echo said hi.")
        self.assertEqual(answer.rounds, 2)
        self.assertEqual(answer.usage, done.data["usage"])
        self.assertGreaterEqual(answer.usage.get("total_tokens"), 60, "both model calls count")

        # the model's second call saw the first round, as the loop sent it
        second = self.llm.requests[1]["messages"]
        self.assertEqual([m["role"] for m in second], ["system", "user", "assistant", "tool", "tool"])

    def test_next_message_continues_the_sequence_and_history_comes_from_the_stored_events(self):
        self.login(self.user)
        self.two_rounds()
        _response, first = self.send("What is 2 + 3? And echo hi.")
        conversation_id = first[0].data["conversation_id"]
        self.llm.queue(Turn(text="You asked about 2 + 3."))
        response, second = self.send("What did I ask?", conversation_id=conversation_id)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(types_of(second), ["start", "round", "text", "done"])
        self.assertEqual(second[0].id, first[-1].id + 1)
        self.assertEqual(second[0].data["conversation_id"], conversation_id)
        sent = self.llm.requests[-1]["messages"]
        self.assertEqual(
            [m["role"] for m in sent], ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
        )
        self.assertEqual(sent[1]["content"], "What is 2 + 3? And echo hi.")
        self.assertEqual([c["id"] for c in sent[2]["tool_calls"]], ["call_add", "call_echo"])
        self.assertEqual(sent[5]["content"], "2 + 3 = 5, and the echo said hi.")
        self.assertEqual(sent[6]["content"], "What did I ask?")
        history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
        self.assertEqual(
            [(m["text"], m["seq"]) for m in history["messages"]],
            [("What is 2 + 3? And echo hi.", 0), ("What did I ask?", first[-1].id)],
        )
        self.assertEqual([e["seq"] for e in history["events"]], list(range(1, second[-1].id + 1)))
        self.assertEqual(history["events"][0], {**first[0].data, "seq": 1})

    def test_replay_after_n_and_last_event_id(self):
        self.login(self.user)
        self.two_rounds()
        _response, events = self.send("What is 2 + 3? And echo hi.")
        conversation_id = events[0].data["conversation_id"]
        response, replayed = self.replay(conversation_id, after=3)
        self.assertEqual(response.status_code, 200)
        self.assertTrue(response.headers["Content-Type"].startswith("text/event-stream"))
        self.assertEqual([(e.id, e.event, e.data) for e in replayed], [(e.id, e.event, e.data) for e in events[3:]])
        _response, from_header = self.replay(conversation_id, last_event_id=5)
        self.assertEqual([e.id for e in from_header], [e.id for e in events[5:]])
        _response, everything = self.replay(conversation_id)
        self.assertEqual(len(everything), len(events))
        _response, nothing = self.replay(conversation_id, after=len(events))
        self.assertEqual(nothing, [])
        response, _events = self.replay(conversation_id, after="x")
        self.assertEqual(response.status_code, 400)

    def test_an_app_tools_arguments_stream_to_the_browser_without_being_stored(self):
        self.tools["echo"].app_uri = "ui://echo/view"
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("echo", {"text": "hello app"}, id="call_app"),), arg_chunks=4),
            Turn(text="Shown."),
        )
        _response, events = self.send("Show hello.")
        conversation_id = events[0].data["conversation_id"]
        inputs = [e for e in events if e.event == "tool_input"]
        # the model's first piece goes out at once; the next ones as time passes
        self.assertTrue(inputs)
        self.assertEqual(
            (inputs[0].id, inputs[0].data),
            (
                None,
                {
                    "type": "tool_input",
                    "id": "call_app",
                    "name": "echo",
                    "tool": "echo",
                    "title": self.tools["echo"].title or "echo",
                    "server": "Test tools",
                    "app": "ui://echo/view",
                    "arguments": {},
                },
            ),
        )
        call = next(e for e in events if e.event == "tool_call")
        self.assertLess(events.index(inputs[-1]), events.index(call))
        self.assertEqual((call.data["app"], call.data["arguments"]), ("ui://echo/view", {"text": "hello app"}))

        # what is stored, and replayed, is the turn without them: the call carries its arguments
        sent = [e for e in events if e.event != "tool_input"]
        self.assertEqual([e.id for e in sent], list(range(1, len(sent) + 1)))
        stored = self.stored_events(conversation_id)
        self.assertEqual([(s.seq, s.type) for s in stored], [(e.id, e.event) for e in sent])
        self.assertEqual(self.conversation(conversation_id).last_seq, len(sent))
        _response, replayed = self.replay(conversation_id)
        self.assertEqual([(e.id, e.event, e.data) for e in replayed], [(e.id, e.event, e.data) for e in sent])

    def test_someone_elses_conversation_is_refused_like_a_missing_one(self):
        self.login(self.user)
        self.llm.queue(Turn(text="hello"))
        _response, events = self.send("hi")
        mine = events[0].data["conversation_id"]
        missing = mine + 100000

        self.login(self.other)
        answers = []
        for conversation_id in (mine, missing):
            replay, _events = self.replay(conversation_id)
            stream = self.post(
                "/ai_mcp/chat/stream",
                {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "x"},
            )
            resume = self.post("/ai_mcp/chat/resume", {"conversation_id": conversation_id, "go_on": True})
            history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")
            answers.append(
                [
                    (replay.status_code, replay.json()),
                    (stream.status_code, stream.json()),
                    (resume.status_code, resume.json()),
                    history["error"]["code"],
                ]
            )
        self.assertEqual(answers[0], answers[1])
        self.assertEqual(answers[0][0][0], 404)
        self.assertEqual(answers[0][3], 404)
        self.assertEqual(self.conversation(mine).last_seq, len(events), "nothing was added to it")

    def test_assistant_the_user_may_not_use_is_refused_like_a_missing_one(self):
        group = self.env["res.groups"].create({"name": "Chat VIP"})
        restricted = self.assistant.copy({"name": "VIP", "group_ids": [(6, 0, group.ids)]})
        self.login(self.user)
        refused = self.post("/ai_mcp/chat/stream", {"assistant_id": restricted.id, "message": "hi"})
        missing = self.post("/ai_mcp/chat/stream", {"assistant_id": restricted.id + 100000, "message": "hi"})
        self.assertEqual((refused.status_code, refused.json()), (missing.status_code, missing.json()))
        self.assertEqual(refused.json()["error"]["code"], "NOT_FOUND")
        self.assertFalse(self.env["ai.conversation"].search([("assistant_id", "=", restricted.id)]))
        self.login(self.outsider)
        response = self.post("/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "hi"})
        self.assertEqual(response.status_code, 404)

    def test_a_cloud_service_the_user_may_not_use_is_refused(self):
        service = self.env["cloud.service"].create({"name": "Theirs", "owner_id": self.other.id})
        self.login(self.user)
        response = self.post(
            "/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "cloud_service_id": service.id, "message": "hi"}
        )
        self.assertEqual(response.status_code, 404)
        self.assertEqual(response.json()["error"]["code"], "NOT_FOUND")

    def test_csrf_token_is_required(self):
        self.login(self.user)
        response = self.post("/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "hi"}, csrf=False)
        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.json()["error"]["code"], "CSRF_INVALID")
        response = self.post("/ai_mcp/chat/resume", {"conversation_id": 1, "go_on": True}, csrf=False)
        self.assertEqual(response.status_code, 403)
        self.assertFalse(self.env["ai.conversation"].search([("user_id", "=", self.user.id)]))

    def test_bad_requests(self):
        self.login(self.user)
        for body in ({"assistant_id": self.assistant.id, "message": "   "}, {"assistant_id": self.assistant.id}):
            response = self.post("/ai_mcp/chat/stream", body)
            self.assertEqual(response.status_code, 400, body)
            self.assertEqual(response.json()["error"]["code"], "INVALID_REQUEST")
        response = self.opener.post(
            self.base_url() + "/ai_mcp/chat/stream",
            data="not json",
            headers={"Content-Type": "application/json", "X-CSRF-Token": self.csrf},
        )
        self.assertEqual(response.status_code, 400)

    def test_a_record_id_that_is_not_a_number_is_refused_400_naming_it(self):
        """A 500 would be taken for a full database pool and the message sent again 8 times; a
        malformed id must not pass for "none" either (an empty array would start a conversation
        without the service asked for)."""
        self.login(self.user)
        self.llm.queue(Turn(text="first"))
        _response, events = self.send("first")
        conversation_id = events[0].data["conversation_id"]
        conversations = self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)])
        for field, value in [
            ("cloud_service_id", {"id": 1}),
            ("cloud_service_id", []),
            ("cloud_service_id", [1]),
            ("cloud_service_id", "abc"),
            ("cloud_service_id", "1"),
            ("cloud_service_id", True),
            ("conversation_id", {"id": conversation_id}),
            ("assistant_id", [self.assistant.id]),
        ]:
            for conversation in ({}, {"conversation_id": conversation_id}):
                body = {"assistant_id": self.assistant.id, "message": "hi", **conversation, field: value}
                with self.subTest(field=field, value=value, conversation=conversation):
                    response = self.post("/ai_mcp/chat/stream", body)
                    self.assertEqual(response.status_code, 400, response.text[:300])
                    error = response.json()["error"]
                    self.assertEqual(error["code"], "INVALID_REQUEST")
                    self.assertIn(field, error["message"])
        response = self.post("/ai_mcp/chat/resume", {"conversation_id": [conversation_id], "go_on": True})
        self.assertEqual(response.status_code, 400, response.text[:300])
        self.assertIn("conversation_id", response.json()["error"]["message"])
        self.assertEqual(
            self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)]), conversations, "nothing stored"
        )
        users = self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "user")
        self.assertEqual(users.mapped("content"), ["first"])
        self.assertEqual(len(self.llm.requests), 1, "the model was never asked again")

    def test_text_the_database_cannot_store_or_json_nested_too_deep_is_refused_400_naming_it(self):
        """A 500 would be taken for a full database pool and sent again 8 times: the user is told
        at once what is wrong with the message, and nothing is stored."""
        self.login(self.user)
        conversations = self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)])
        cases = [
            ('{"assistant_id": %d, "message": "a\\u0000b"}', "NUL"),
            ('{"assistant_id": %d, "message": "a\\ud800b"}', "surrogate"),
            ('{"assistant_id": %d, "message": "hi", "request_key": "key\\udfffkey"}', "surrogate"),
            ('{"assistant_id": %d, "message": "hi", "x": ' + "[" * 100000 + "]" * 100000 + "}", "nested"),
            ('{"assistant_id": %d, "message": "hi", "x": ' + "[" * 200 + "]" * 200 + "}", "nested"),
        ]
        for body, problem in cases:
            for path in ("/ai_mcp/chat/stream", "/ai_mcp/chat/resume"):
                response = self.opener.post(
                    self.base_url() + path,
                    data=body % self.assistant.id if "%d" in body else body,
                    headers={"Content-Type": "application/json", "X-CSRF-Token": self.csrf},
                    timeout=30,
                )
                self.assertEqual(response.status_code, 400, f"{path} {problem}: {response.text[:200]}")
                error = response.json()["error"]
                self.assertEqual(error["code"], "INVALID_REQUEST")
                self.assertIn(problem, error["message"])
        self.assertEqual(
            self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)]), conversations, "nothing stored"
        )
        self.assertFalse(self.llm.requests, "the model was never asked")

    def test_second_send_while_answering_is_refused_409(self):
        self.login(self.user)
        self.llm.queue(Turn(text="first"))
        _response, events = self.send("first")
        conversation_id = events[0].data["conversation_id"]
        # the model takes its time: the first tab is still being answered when the second sends
        self.llm.queue(Turn(text="slow answer", latency=2.0))
        first = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "tab 1"},
            stream=True,
        )
        self.assertEqual(first.status_code, 200)
        stream = first.iter_content(chunk_size=None)
        self.assertIn(b"event: start", next(stream))
        second = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "tab 2"},
        )
        self.assertEqual(second.status_code, 409)
        self.assertEqual(second.json()["error"]["code"], "CONVERSATION_BUSY")
        rest = self.events_of_bytes(b"".join(stream))
        self.assertEqual(rest[-1].event, "done")
        self.assertEqual(text_of(rest), "slow answer")
        conversation = self.conversation(conversation_id)
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "user").mapped("content"), ["first", "tab 1"]
        )
        self.assertEqual(self.stored_events(conversation_id).mapped("seq"), list(range(1, conversation.last_seq + 1)))

    def test_two_sends_at_the_same_moment_one_is_refused(self):
        self.login(self.user)
        self.llm.queue(Turn(text="first"))
        _response, events = self.send("first")
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="one answer", latency=1.0), Turn(text="another answer", latency=1.0))
        statuses = []

        def send(text):
            response = self.post(
                "/ai_mcp/chat/stream",
                {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": text},
            )
            statuses.append((response.status_code, self.events_of(response)))

        threads = [threading.Thread(target=send, args=(f"tab {i}",)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual(sorted(code for code, _events in statuses), [200, 409])
        served = next(events for code, events in statuses if code == 200)
        self.assertEqual(served[-1].event, "done")
        stored = self.stored_events(conversation_id)
        self.assertEqual(stored.mapped("seq"), list(range(1, len(stored) + 1)), "never interleaved")
        self.assertEqual(stored.mapped("type").count("start"), 2)

    def test_disconnect_mid_stream_cancels_the_turn_and_keeps_history_consistent(self):
        self.login(self.user)
        self.llm.queue(
            Turn(text="Working on it.", tool_calls=(ToolCall("slow", {"seconds": 20}, id="call_slow"),)),
            Turn(text="never asked"),
        )
        self.tools["slow"].sudo().requires_approval = False
        body = {"assistant_id": self.assistant.id, "message": "Take your time."}
        sock, events = self.raw_stream(body, lambda events: any(e.event == "tool_call" for e in events))
        started = time.monotonic()
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        conversation_id = events[0].data["conversation_id"]
        self.wait_for_state(conversation_id, "idle")
        self.assertLess(time.monotonic() - started, 10, "the turn was cancelled, not waited for")
        stored = self.stored_events(conversation_id)
        self.assertEqual(stored.mapped("seq"), list(range(1, len(stored) + 1)))
        self.assertEqual(
            [e.id for e in events], stored.mapped("seq")[: len(events)], "what was shown is stored as shown"
        )
        self.assertEqual(stored[-1].type, "error")
        self.assertEqual(stored[-1].payload["code"], "CANCELLED")
        self.assertNotIn("tool_result", stored.mapped("type"))
        conversation = self.conversation(conversation_id)
        self.assertEqual(conversation.state, "idle")
        slow = conversation.message_ids.filtered(lambda m: m.tool_call_id == "call_slow")
        self.assertEqual((slow.status, slow.error_code), ("error", "CANCELLED"))
        self.assertEqual(len(self.llm.requests), 1, "no model call after the cancel")
        deadline = time.monotonic() + 10
        while not (self.mcp_state / "slow-cancelled").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertTrue((self.mcp_state / "slow-cancelled").exists(), "the MCP server was told to stop the call")
        self.assertFalse((self.mcp_state / "slow-finished").exists())

        # the conversation goes on, and the model never sees the interrupted call unanswered
        self.llm.queue(Turn(text="Back again."))
        response, more = self.send("Still there?", conversation_id=conversation_id)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(more[-1].event, "done")
        sent = self.llm.requests[-1]["messages"]
        self.assertEqual([m["role"] for m in sent], ["system", "user", "assistant", "tool", "user"])
        self.assertEqual(sent[3]["tool_call_id"], "call_slow")

    def test_provider_not_configured_says_where(self):
        provider = self.env["ai.provider"].create({"name": "Unset", "base_url": "https://api.openai.com/v1"})
        assistant = self.assistant.copy({"name": "Unconfigured", "provider_id": provider.id})
        self.login(self.user)
        response, events = self.send("hi", assistant_id=assistant.id)
        self.assertEqual(response.status_code, 200)
        self.assertEqual(types_of(events), ["start", "error"])
        self.assertEqual(events[-1].data["code"], "LLM_AUTH_FAILED")
        self.assertIn("AI > Configuration > Providers", events[-1].data["message"])
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).state, "idle")

    def test_unreachable_provider_says_where(self):
        provider = self.env["ai.provider"].create({"name": "Down", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"})
        assistant = self.assistant.copy({"name": "Down", "provider_id": provider.id})
        self.login(self.user)
        _response, events = self.send("hi", assistant_id=assistant.id)
        self.assertEqual(events[-1].event, "error")
        self.assertEqual(events[-1].data["code"], "LLM_UNREACHABLE")
        self.assertIn("AI > Configuration > Providers", events[-1].data["message"])

    def test_a_server_left_out_is_a_warning_and_the_turn_goes_on(self):
        dead = self.env["mcp.server"].create(
            {"name": "Dead", "scope": "system", "url": "http://127.0.0.1:9/mcp", "state": "connected"}
        )
        self.env["mcp.tool"].create(
            {
                "name": "ghost",
                "server_id": dead.id,
                "content_hash": "h",
                "approved_hash": "h",
                "requires_approval": False,
                "input_schema": '{"type": "object", "properties": {}}',
            }
        )
        assistant = self.assistant.copy({"name": "Half", "mcp_server_ids": [(6, 0, (self.server | dead).ids)]})
        self.login(self.user)
        self.llm.queue(Turn(text="fine"))
        _response, events = self.send("hi", assistant_id=assistant.id)
        self.assertEqual(types_of(events), ["start", "warning", "round", "text", "done"])
        self.assertEqual(events[1].data["code"], "MCP_UNREACHABLE")
        offered = {tool["function"]["name"] for tool in self.llm.requests[-1]["tools"]}
        self.assertIn("add", offered)
        self.assertNotIn("ghost", offered)

    def test_a_turn_whose_process_died_is_taken_over(self):
        self.login(self.user)
        self.llm.queue(Turn(text="first"))
        _response, events = self.send("first")
        conversation_id = events[0].data["conversation_id"]
        conversation = self.conversation(conversation_id)
        conversation.sudo().write({"state": "running", "turn_heartbeat": fields.Datetime.now()})
        # the call the dead process was running, audited when it started
        running = self.env["ai.tool.call"].create(
            {"conversation_id": conversation_id, "call_id": "call_lost", "tool_name": "slow", "status": "running"}
        )
        response = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "again"},
        )
        self.assertEqual(response.status_code, 409, "a live turn is not taken over")
        # silent for 30 s: alive by the default limit (90 s), dead by a limit of 12 s
        conversation.sudo().turn_heartbeat = fields.Datetime.now() - timedelta(seconds=30)
        response = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "again"},
        )
        self.assertEqual(response.status_code, 409, "30 s of silence is within the default limit")
        self.llm.queue(Turn(text="second"))
        with patch("odoo.addons.ai_mcp.hub_process.config_section", return_value={"turn_stale_after": "12"}):
            response, more = self.send("again", conversation_id=conversation_id)
        self.assertEqual(response.status_code, 200, response.text)
        stored = self.stored_events(conversation_id)
        self.assertEqual(stored.mapped("seq"), list(range(1, len(stored) + 1)))
        interrupted = stored.filtered(lambda e: e.seq == len(events) + 1)
        self.assertEqual((interrupted.type, interrupted.payload["code"]), ("error", "CANCELLED"))
        running.invalidate_recordset()
        self.assertEqual((running.status, running.error_code), ("interrupted", "CANCELLED"))
        self.assertEqual(more[0].id, len(events) + 2)
        self.assertEqual(more[-1].event, "done")
