"""The fault matrix: every failure a chat can meet, driven through POST /ai_mcp/chat/stream
against real MCP servers and the scripted LLM. Each test checks what the user sees (the event and
its code), that the conversation is intact afterwards (stored events consecutive and equal to what
was streamed, messages consistent, state idle), and that the next turn in the same conversation
works: the model is asked again, calls a tool, and answers.

MCP side: a server killed mid-call, a call that never answers, malformed JSON-RPC, a 10 MB result,
401, 403, DNS failure, connection refused, invalid tool schemas and duplicate names.
LLM side: 500, 429 with Retry-After, timeout, the stream cut mid-answer and mid-tool-call, truncated
arguments (finish_reason=length), a call to a tool that was not offered.
Client side: the browser leaving mid-turn, two tabs sending at once.
"""

import json
import socket
import threading
import time
from unittest.mock import patch

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer, free_port
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn
from odoo.addons.ai_mcp.turn import pacing

from .chat_common import ChatCase, text_of, types_of

FINAL = ("done", "error")


@tagged("post_install", "-at_install")
class TestFaultMatrix(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # the tools these faults use run without asking (unannotated tools need approval by default)
        cls.server.tool_ids.write({"requires_approval": False})
        # a server requiring a token: "good" is accepted, "banned" is known and refused (403), others 401
        cls.auth_mcp = HttpServer("streamable-http", "--token", "good", "--forbidden-token", "banned").start()
        cls.addClassCleanup(cls.auth_mcp.stop)
        # a server whose tool list holds echo twice and a tool whose schema no model accepts
        cls.bad_mcp = HttpServer("streamable-http", "--bad-tools").start()
        cls.addClassCleanup(cls.bad_mcp.stop)
        # a server listing a tool whose arguments are not an object, against the protocol
        cls.non_object_mcp = HttpServer("streamable-http", "--non-object-tool").start()
        cls.addClassCleanup(cls.non_object_mcp.stop)
        # a server the tests kill (its `die` tool) and start again on the same port
        cls.victim_mcp = HttpServer("streamable-http").start()
        cls.addClassCleanup(cls.victim_mcp.stop)

    def setUp(self):
        super().setUp()
        for marker in self.mcp_state.iterdir():
            marker.unlink()
        self.login(self.user)

    # -- helpers ---------------------------------------------------------------------------------

    def add_server(self, name, url, sync=True, **values):
        server = self.env["mcp.server"].create({"name": name, "scope": "system", "url": url, **values})
        self.addCleanup(self._close_session, server._server_key())
        if sync:
            result = server._sync_tools()
            self.assertFalse(result.get("error"), result)
            server.tool_ids.write({"requires_approval": False})
        return server

    @staticmethod
    def _close_session(key):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(key))

    def assistant_with(self, *servers, **values):
        return self.assistant.copy(
            {"name": f"Faults {servers[0].name}", "mcp_server_ids": [(6, 0, [s.id for s in servers])], **values}
        )

    def chat(self, message, *turns, conversation_id=None, assistant=None):
        """Queue the model's answers, send, and return the streamed events (status 200 checked)."""
        self.llm.queue(*turns)
        body = {"assistant_id": (assistant or self.assistant).id}
        if conversation_id:
            body["conversation_id"] = conversation_id
        response, events = self.send(message, **body)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[0].event, "start")
        self.assertIn(events[-1].event, FINAL, "every turn ends on done or error")
        return events

    def result_of(self, events, call_id):
        results = [e.data for e in events if e.event == "tool_result" and e.data["id"] == call_id]
        self.assertEqual(len(results), 1, f"one result for {call_id}: {types_of(events)}")
        return results[0]

    def assert_intact(self, conversation_id, streamed=()):
        """Stored events 1..n with no gap, equal to what was streamed; idle; messages consistent."""
        conversation = self.conversation(conversation_id)
        stored = self.stored_events(conversation_id)
        seqs = stored.mapped("seq")
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)), "stored events are consecutive")
        self.assertEqual(conversation.last_seq, len(seqs))
        self.assertEqual(conversation.state, "idle")
        by_seq = {event.seq: event for event in stored}
        for event in streamed:
            self.assertIn(event.id, by_seq, f"streamed event {event.id} ({event.event}) is stored")
            self.assertEqual((by_seq[event.id].type, by_seq[event.id].payload), (event.event, event.data))
        # every turn starts with `start` and ends with done or error before the next one starts
        kinds = stored.mapped("type")
        starts = [i for i, kind in enumerate(kinds) if kind == "start"]
        for index, begin in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else len(kinds)
            self.assertIn(kinds[end - 1], FINAL, f"turn at seq {begin + 1} ends on done/error: {kinds[begin:end]}")
            self.assertFalse([k for k in kinds[begin : end - 1] if k in FINAL], "one final event per turn")
        # one user message per turn, stored at the seq just before its `start`
        messages = conversation.message_ids
        users = messages.filtered(lambda m: m.role == "user").sorted("seq")
        self.assertEqual([m.seq + 1 for m in users], [i + 1 for i in starts])
        # tool messages are settled and match the calls of the assistant messages one to one
        tools = messages.filtered(lambda m: m.role == "tool")
        self.assertFalse(tools.filtered(lambda m: m.status not in ("done", "error", "denied")), "no call left running")
        calls = [
            call["id"] for m in messages.filtered(lambda m: m.role == "assistant") for call in (m.tool_calls or [])
        ]
        self.assertEqual(sorted(calls), sorted(tools.mapped("tool_call_id")))
        stored_calls = [e.payload["id"] for e in stored if e.type == "tool_call"]
        self.assertEqual(sorted(stored_calls), sorted(calls))
        # in the log's own order (seq, id), each call comes before its result
        asked = set()
        for message in messages:  # ai.message _order
            asked.update(call["id"] for call in (message.tool_calls or []))
            if message.role == "tool":
                self.assertIn(
                    message.tool_call_id, asked, f"the result of {message.tool_call_id} is listed before its call"
                )
        # the chat widget can rebuild it
        history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
        self.assertEqual([e["seq"] for e in history["events"]], seqs)
        self.assertEqual(history["conversation"]["state"], "idle")
        return conversation

    def assert_next_turn_works(self, conversation_id, assistant=None, tool="echo"):
        """The same conversation goes on: the model calls a tool that answers, then replies; what
        the model is sent is a valid chat (every call it made before has its result)."""
        before = self.conversation(conversation_id).last_seq
        events = self.chat(
            "Once more, please.",
            Turn(tool_calls=(ToolCall(tool, {"text": "again"}, id=f"call_next_{conversation_id}"),)),
            Turn(text="All good again."),
            conversation_id=conversation_id,
            assistant=assistant,
        )
        self.assertEqual(events[0].id, before + 1, "the sequence goes on without a gap")
        self.assertEqual(events[-1].event, "done", types_of(events))
        result = self.result_of(events, f"call_next_{conversation_id}")
        self.assertTrue(result["ok"], result)
        self.assertEqual(result["model_text"], "again")
        self.assertEqual(text_of(events), "All good again.")
        for request in self.llm.requests[-2:]:
            self.assert_valid_chat(request["messages"])
        self.assert_intact(conversation_id, events)
        return events

    def assert_valid_chat(self, messages):
        """What OpenAI would accept: each assistant tool call answered by a tool message before the
        next assistant or user message, and no tool message without its call."""
        open_calls = set()
        for message in messages:
            role = message["role"]
            if role == "tool":
                self.assertIn(message["tool_call_id"], open_calls, f"tool message without its call: {messages}")
                open_calls.discard(message["tool_call_id"])
                continue
            self.assertFalse(open_calls, f"calls left without a result: {open_calls} in {messages}")
            if role == "assistant":
                open_calls = {call["id"] for call in message.get("tool_calls") or []}

    def audit_rows(self, call_id):
        self.env.invalidate_all()
        return self.env["ai.tool.call"].search([("call_id", "=", call_id)])

    def assert_incomplete_usage(self, conversation_id, output=True):
        """The model call whose stream did not complete has its usage row, marked incomplete, with
        tokens estimated: the request's, and the output's when some came."""
        self.env.invalidate_all()
        usage = self.env["ai.usage"].search([("conversation_id", "=", conversation_id)], order="id", limit=1)
        self.assertTrue(usage.incomplete, "one usage row, incomplete")
        self.assertGreater(usage.input_tokens, 0)
        if output:
            self.assertGreater(usage.output_tokens, 0)
        return usage

    def assert_told_interrupted(self, partial):
        """The next turn gives the model the interrupted answer as the user saw it, saying it was cut."""
        told = next(m for m in self.llm.requests[-2]["messages"] if m["role"] == "assistant")
        self.assertTrue(told["content"].startswith(partial), told["content"])
        self.assertIn("interrupted", told["content"][len(partial) :])

    def offered(self, request_index=-1):
        return {tool["function"]["name"] for tool in self.llm.requests[request_index].get("tools") or []}

    def tool_message(self, conversation_id, call_id):
        return self.conversation(conversation_id).message_ids.filtered(lambda m: m.tool_call_id == call_id)

    def wait_for_marker(self, name, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not (self.mcp_state / name).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return (self.mcp_state / name).exists()

    # == MCP side ================================================================================

    def test_mcp_server_killed_mid_call(self):
        victim = self.add_server("Victim", self.victim_mcp.url)
        assistant = self.assistant_with(victim)
        events = self.chat(
            "Break it.",
            Turn(tool_calls=(ToolCall("die", {}, id="call_die"),)),
            Turn(text="The tool server went away."),
            assistant=assistant,
        )
        self.assertEqual(types_of(events), ["start", "round", "tool_call", "tool_result", "round", "text", "done"])
        result = self.result_of(events, "call_die")
        self.assertFalse(result["ok"])
        self.assertEqual(result["error_code"], "MCP_UNREACHABLE")
        self.assertIn("lost", result["error_message"])
        self.assertEqual(self.victim_mcp.process.wait(5), 3, "the server really died")
        conversation_id = events[0].data["conversation_id"]
        message = self.tool_message(conversation_id, "call_die")
        self.assertEqual((message.status, message.error_code), ("error", "MCP_UNREACHABLE"))
        self.assert_intact(conversation_id, events)
        # the server comes back on the same address: the next turn reconnects on its own
        self.victim_mcp.start()
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    def test_mcp_call_that_never_answers_times_out(self):
        # the same server under another record whose calls may take 1 s
        hasty = self.add_server("Hasty", self.mcp.url, call_timeout=1.0)
        assistant = self.assistant_with(hasty)
        started = time.monotonic()
        events = self.chat(
            "Take forever.",
            Turn(tool_calls=(ToolCall("slow", {"seconds": 30}, id="call_slow"),)),
            Turn(text="The tool took too long."),
            assistant=assistant,
        )
        self.assertLess(time.monotonic() - started, 10, "the server's 1 s call timeout applies, not 30 s")
        self.assertEqual(events[-1].event, "done")
        result = self.result_of(events, "call_slow")
        self.assertEqual((result["ok"], result["error_code"]), (False, "MCP_TIMEOUT"))
        self.assertLess(result["duration_ms"], 5000)
        self.assertTrue(self.wait_for_marker("slow-cancelled"), "the server was told to cancel the call")
        self.assertFalse((self.mcp_state / "slow-finished").exists())
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual(self.tool_message(conversation_id, "call_slow").error_code, "MCP_TIMEOUT")
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    def test_mcp_server_that_accepts_and_never_answers_at_connect(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)  # the kernel accepts the connections; nobody ever answers them
        self.addCleanup(listener.close)
        mute = self.add_server(
            "Mute",
            f"http://127.0.0.1:{listener.getsockname()[1]}/mcp",
            sync=False,
            state="connected",
            connect_timeout=1.0,
        )
        self.env["mcp.tool"].create(
            {
                "name": "ghost",
                "server_id": mute.id,
                "content_hash": "h",
                "approved_hash": "h",
                "requires_approval": False,
                "input_schema": '{"type": "object", "properties": {}}',
            }
        )
        assistant = self.assistant_with(self.server, mute)
        started = time.monotonic()
        events = self.chat("Reach it.", Turn(text="That server does not answer."), assistant=assistant)
        # three attempts of 1 s, 1 s and 2 s apart
        self.assertLess(time.monotonic() - started, 12, "the server's 1 s connect timeout applies")
        self.assertEqual(types_of(events), ["start", "warning", "round", "text", "done"])
        self.assertEqual(events[1].data["code"], "MCP_TIMEOUT")
        self.assertIn("Mute is unavailable", events[1].data["message"])
        self.assertNotIn("ghost", self.offered(0))
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    def test_mcp_malformed_json_rpc(self):
        started = time.monotonic()
        # the MCP SDK logs the unreadable answer as an error of its own, and fails the call at once
        with self.assertLogs("mcp.client.streamable_http", "ERROR"):
            events = self.chat(
                "Garble.",
                Turn(tool_calls=(ToolCall("garble", {}, id="call_garble"),)),
                Turn(text="The server answered nonsense."),
            )
        self.assertLess(time.monotonic() - started, 10, "not the 30 s call timeout")
        self.assertEqual(events[-1].event, "done")
        result = self.result_of(events, "call_garble")
        self.assertEqual((result["ok"], result["error_code"]), (False, "MCP_PARSE_ERROR"))
        self.assertIn("not valid JSON-RPC", result["error_message"])
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def test_mcp_ten_megabyte_result_is_cut_for_the_model_and_the_user(self):
        self.llm.queue(
            Turn(tool_calls=(ToolCall("big", {"chars": 10_000_000}, id="call_big"),)),
            Turn(text="That was long."),
        )
        response = self.post("/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "Big."})
        self.assertEqual(response.status_code, 200)
        self.assertLess(len(response.content), 300_000, "what the browser receives stays small")
        events = self.events_of_bytes(response.content)
        self.assertEqual(events[-1].event, "done")
        result = self.result_of(events, "call_big")
        self.assertTrue(result["ok"])
        self.assertLess(len(result["model_text"]), 21_000)
        self.assertIn("truncated", result["model_text"])
        self.assertTrue(all(len(json.dumps(part)) < 110_000 for part in result["content"]))
        self.assertIn("truncated", result["content"][0]["text"])
        self.assertLess(len(json.dumps(self.llm.requests[-1])), 50_000, "the model is sent the cut text")
        conversation_id = events[0].data["conversation_id"]
        stored = self.stored_events(conversation_id).filtered(lambda e: e.type == "tool_result")
        self.assertLess(len(json.dumps(stored.payload)), 250_000, "the stored event stays small")
        self.assertLess(len(self.tool_message(conversation_id, "call_big").content), 21_000)
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def _auth_turn(self, token, status):
        guarded = self.add_server("Guarded", self.auth_mcp.url, auth_type="bearer", api_key="good")
        assistant = self.assistant_with(guarded)
        # the server stops accepting what the record sends (a revoked or replaced token); the record
        # itself still says connected, as it would until its next test or sync
        guarded.with_context(ai_mcp_keep_state=True).api_key = token
        self.assertEqual(guarded.state, "connected")
        events = self.chat("Use the guarded tools.", Turn(text="I cannot use those tools now."), assistant=assistant)
        self.assertEqual(types_of(events), ["start", "warning", "round", "text", "done"])
        warning = events[1].data
        self.assertEqual(warning["code"], "MCP_AUTH_FAILED")
        self.assertIn(f"HTTP {status}", warning["message"])
        self.assertIn("Guarded", warning["message"])
        self.assertFalse(self.offered(), "its tools are left out of the model request")
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        # the token is put right: the next turn uses the server's tools
        guarded.with_context(ai_mcp_keep_state=True).api_key = "good"
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    def test_mcp_401(self):
        self._auth_turn("wrong", 401)

    def test_mcp_403(self):
        self._auth_turn("banned", 403)

    def _unreachable_turn(self, url, expected):
        dead = self.add_server("Gone", url, sync=False, state="connected")
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
        assistant = self.assistant_with(self.server, dead)
        events = self.chat(
            "Reach it.",
            Turn(tool_calls=(ToolCall("ghost", {}, id="call_ghost"),)),
            Turn(text="That server is not reachable."),
            assistant=assistant,
        )
        # the model insists on the tool it was not given: no failed call is shown, the warning says why
        self.assertEqual(types_of(events), ["start", "warning", "round", "round", "text", "done"])
        warning = events[1].data
        self.assertEqual(warning["code"], "MCP_UNREACHABLE")
        self.assertIn("Gone is unavailable", warning["message"])
        self.assertIn(expected, warning["message"])
        self.assertNotIn("ghost", self.offered(0))
        self.assertIn("echo", self.offered(0), "the other server's tools are still offered")
        # and the model is told the server could not be reached, in a chat OpenAI accepts
        told = next(m for m in self.llm.requests[1]["messages"] if m.get("tool_call_id") == "call_ghost")
        self.assertIn("Error MCP_UNREACHABLE: Not run: Gone could not be reached", told["content"])
        self.assert_valid_chat(self.llm.requests[1]["messages"])
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        events = self.assert_next_turn_works(conversation_id, assistant=assistant)
        # the next turn is not held up by the same connection retries: the server is left out at once
        warning = next(e.data for e in events if e.event == "warning")
        self.assertEqual(warning["code"], "MCP_UNREACHABLE")
        self.assertIn("Gone is unavailable", warning["message"])
        self.assertIn("tried again in", warning["message"])

    def test_mcp_dns_failure(self):
        self._unreachable_turn("http://mcp.no-such-host.invalid/mcp", "Cannot connect")

    def test_mcp_connection_refused(self):
        self._unreachable_turn(f"http://127.0.0.1:{free_port()}/mcp", "Cannot connect")

    def test_mcp_invalid_schemas_and_duplicate_names(self):
        messy = self.env["mcp.server"].create({"name": "Messy", "scope": "system", "url": self.bad_mcp.url})
        self.addCleanup(self._close_session, messy._server_key())
        with self.assertLogs("odoo.addons.ai_mcp.services.mcp.session", "WARNING") as logged:
            result = messy._sync_tools()
        self.assertIn("lists the tool 'echo' twice", logged.output[0])
        self.assertFalse(result.get("error"), result)
        self.assertIn("lists the tool 'echo' twice; the first one is kept", result["summary"])
        self.assertEqual(messy.tool_ids.filtered(lambda t: t.name == "echo").description, "Return the text unchanged.")
        self.assertIn("bad_schema", messy.tool_ids.mapped("name"))
        messy.tool_ids.write({"requires_approval": False})
        assistant = self.assistant_with(messy)
        events = self.chat(
            "Echo hi.",
            Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="call_echo"),)),
            Turn(text="It said hi."),
            assistant=assistant,
        )
        self.assertEqual(events[-1].event, "done")
        warnings = {w.data["message"]: w.data["code"] for w in events if w.event == "warning"}
        self.assertEqual(set(warnings.values()), {"MCP_PROTOCOL_ERROR"})
        self.assertTrue(any("'bad_schema' is left out" in message for message in warnings), warnings)
        offered = self.offered(0)
        self.assertNotIn("bad_schema", offered)
        self.assertIn("echo", offered)
        self.assertEqual(sorted(offered), sorted(set(offered)))
        self.assertEqual(self.result_of(events, "call_echo")["model_text"], "hi")
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    def test_mcp_tool_list_against_the_protocol_is_refused_with_where_and_nothing_is_lost(self):
        server = self.add_server("Strict", self.bad_mcp.url)
        before = sorted(server.tool_ids.mapped("name"))
        server.url = self.non_object_mcp.url
        result = server._sync_tools()
        self.assertIn("sent an answer that is not valid MCP: tools[", result["error"])
        self.assertIn("].inputSchema.type: Input should be 'object' (it is 'string')", result["error"])
        self.assertIn("The server has to be fixed", result["error"])
        self.assertEqual(sorted(server.tool_ids.mapped("name")), before)

    # == LLM side ================================================================================

    def test_llm_500(self):
        # the first round works; the model fails on the round after the tool result (twice: the
        # client retries once)
        events = self.chat(
            "Echo and answer.",
            Turn(tool_calls=(ToolCall("echo", {"text": "x"}, id="call_x"),)),
            Turn(status=500),
            Turn(status=500),
        )
        self.assertEqual(types_of(events), ["start", "round", "tool_call", "tool_result", "round", "error"])
        error = events[-1].data
        self.assertEqual(error["code"], "LLM_BAD_RESPONSE")
        self.assertIn("HTTP 500", error["message"])
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def test_llm_429_says_when_to_retry(self):
        started = time.monotonic()
        events = self.chat("Hello?", Turn(status=429, retry_after=2), Turn(status=429, retry_after=2))
        self.assertEqual(types_of(events), ["start", "round", "error"])
        error = events[-1].data
        self.assertEqual(error["code"], "LLM_RATE_LIMITED")
        self.assertIn("429", error["message"])
        self.assertIn("retry in 2 s", error["message"])
        self.assertLess(time.monotonic() - started, 10)
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def test_llm_timeout(self):
        self.provider.timeout = 1.0
        started = time.monotonic()
        events = self.chat("Hello?", Turn(text="too late", latency=4), Turn(text="too late", latency=4))
        self.assertLess(time.monotonic() - started, 8, "the provider's 1 s timeout applies (one retry)")
        self.assertEqual(types_of(events), ["start", "round", "error"])
        self.assertEqual(events[-1].data["code"], "LLM_TIMEOUT")
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        # the provider read the request though it sent nothing back in time
        self.assertEqual(self.assert_incomplete_usage(conversation_id, output=False).output_tokens, 0)
        self.provider.timeout = 60.0
        self.assert_next_turn_works(conversation_id)

    def test_llm_stream_cut_mid_answer(self):
        # role chunk, then 6 text chunks: cut after the third text chunk
        text = "".join(f"part{i} " for i in range(6))
        events = self.chat("Tell me.", Turn(text=text, chunks=6, disconnect_after=4))
        self.assertEqual(types_of(events), ["start", "round", "text", "error"])
        self.assertEqual(text_of(events), "part0 part1 part2 ")
        error = events[-1].data
        self.assertEqual(error["code"], "LLM_BAD_RESPONSE")
        self.assertIn("cut off", error["message"])
        conversation_id = events[0].data["conversation_id"]
        conversation = self.assert_intact(conversation_id, events)
        # what the user saw is kept as the (partial) reply
        reply = conversation.message_ids.filtered(lambda m: m.role == "assistant")
        self.assertEqual((reply.content, reply.interrupted), ("part0 part1 part2 ", True))
        # providers bill what they streamed: the call is charged, its tokens estimated
        self.assert_incomplete_usage(conversation_id)
        self.assert_next_turn_works(conversation_id)
        self.assert_told_interrupted("part0 part1 part2 ")

    def test_llm_stream_cut_mid_tool_call(self):
        # role chunk, a text chunk, the call's opening chunk, then one of its 3 argument fragments
        events = self.chat(
            "Sleep a bit.",
            Turn(
                text="Sure.",
                chunks=1,
                tool_calls=(ToolCall("slow", {"seconds": 0.1}, id="call_cut"),),
                disconnect_after=4,
            ),
        )
        self.assertEqual(types_of(events), ["start", "round", "text", "error"])
        self.assertEqual(events[-1].data["code"], "LLM_BAD_RESPONSE")
        self.assertIn("cut off", events[-1].data["message"])
        self.assertNotIn("tool_call", [e.event for e in events], "a call the stream did not finish is never shown")
        time.sleep(0.3)
        self.assertFalse((self.mcp_state / "slow-started").exists(), "nor run")
        conversation_id = events[0].data["conversation_id"]
        self.assertFalse(self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "tool"))
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def test_llm_truncated_arguments_are_not_run(self):
        events = self.chat(
            "Sleep a bit.",
            # the output limit cut the JSON off; a lenient parser would read {"seconds": 0.1}
            Turn(tool_calls=(ToolCall("slow", '{"seconds": 0.1, "no', id="call_cut"),), finish_reason="length"),
            Turn(text="My call was cut off, sorry."),
        )
        self.assertEqual(types_of(events), ["start", "round", "tool_call", "tool_result", "round", "text", "done"])
        result = self.result_of(events, "call_cut")
        self.assertEqual((result["ok"], result["error_code"]), (False, "LLM_BAD_RESPONSE"))
        self.assertIn("Not run", result["error_message"])
        time.sleep(0.3)
        self.assertFalse((self.mcp_state / "slow-started").exists(), "the call was never run")
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual(self.tool_message(conversation_id, "call_cut").status, "error")
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id)

    def test_llm_calls_a_tool_that_was_not_offered(self):
        assistant = self.assistant_with(self.server, mcp_tool_disabled_ids=[(6, 0, self.tools["slow"].ids)])
        events = self.chat(
            "Sleep a bit.",
            Turn(tool_calls=(ToolCall("slow", {"seconds": 0.1}, id="call_slow"),)),
            Turn(text="I may not use that tool."),
            assistant=assistant,
        )
        self.assertNotIn("slow", self.offered(0))
        self.assertEqual(types_of(events), ["start", "round", "tool_call", "tool_result", "round", "text", "done"])
        result = self.result_of(events, "call_slow")
        self.assertEqual((result["ok"], result["error_code"]), (False, "MCP_TOOL_NOT_FOUND"))
        self.assertIn("not offered", result["error_message"])
        time.sleep(0.3)
        self.assertFalse((self.mcp_state / "slow-started").exists(), "refused, never called")
        conversation_id = events[0].data["conversation_id"]
        self.assert_intact(conversation_id, events)
        self.assert_next_turn_works(conversation_id, assistant=assistant)

    # == client side =============================================================================

    def test_browser_disconnects_mid_turn(self):
        self.llm.queue(
            Turn(text="Working on it.", tool_calls=(ToolCall("slow", {"seconds": 20}, id="call_slow"),)),
            Turn(text="never asked"),
        )
        body = {"assistant_id": self.assistant.id, "message": "Take your time."}
        sock, events = self.raw_stream(body, lambda events: any(e.event == "tool_call" for e in events))
        self.assertTrue(self.wait_for_marker("slow-started"), "the call is running on the server")
        # audited from its start: a process that dies now leaves the row saying the call ran
        self.assertEqual(self.audit_rows("call_slow").mapped("status"), ["running"])
        started = time.monotonic()
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        conversation_id = events[0].data["conversation_id"]
        self.wait_for_state(conversation_id, "idle")
        self.assertLess(time.monotonic() - started, 10, "the turn was cancelled, not waited for")
        self.assertTrue(self.wait_for_marker("slow-cancelled"), "the MCP server was told to cancel")
        self.assertFalse((self.mcp_state / "slow-finished").exists())
        stored = self.stored_events(conversation_id)
        self.assertEqual((stored[-1].type, stored[-1].payload["code"]), ("error", "CANCELLED"))
        self.assertEqual(len(self.llm.requests), 1, "nothing goes on in the background")
        self.assertEqual(self.tool_message(conversation_id, "call_slow").error_code, "CANCELLED")
        audit = self.audit_rows("call_slow")
        self.assertEqual((audit.status, audit.error_code), ("interrupted", "CANCELLED"))
        self.assertGreater(audit.duration_ms, 0, "how long it ran before the browser left")
        self.assert_intact(conversation_id, events)
        self.llm._turns.clear()  # the answer the cancelled turn never asked for
        self.assert_next_turn_works(conversation_id)
        # the model is not told the call did not run: it ran on the server until it was stopped
        told = next(m for m in self.llm.requests[-2]["messages"] if m.get("tool_call_id") == "call_slow")
        self.assertIn("may have run", told["content"])
        self.assertNotIn("Not run", told["content"])

    def test_a_call_is_audited_before_its_server_runs_it(self):
        """A process may die at any moment of a call, its first instant included: the call's audit
        row is committed before the call is sent, so a call that reached its server always has its
        row (saying it runs, then how it ended), whatever the turn still holds back from the tab."""
        self.llm.queue(Turn(tool_calls=(ToolCall("slow", {"seconds": 2}, id="call_first"),)), Turn(text="Slept."))
        finished = {}
        # no idle tick within the test: the turn holds the call back until its result comes
        with patch.object(pacing, "IDLE_TICK_SECONDS", 3600):
            sending = threading.Thread(target=lambda: finished.update(events=self.send("Sleep a bit.")[1]))
            sending.start()
            self.assertTrue(self.wait_for_marker("slow-started"), "the call reached the server")
            with self.registry.cursor() as cr:
                cr.execute("SELECT status FROM ai_tool_call WHERE call_id = 'call_first'")
                at_start = [row[0] for row in cr.fetchall()]
            sending.join(30)
        self.assertEqual(at_start, ["running"], "the row was there when the server started the call")
        events = finished["events"]
        self.assertEqual(events[-1].event, "done", types_of(events))
        audit = self.audit_rows("call_first")
        self.assertEqual((audit.status, audit.error_code), ("ok", False), "one row, saying how the call ended")
        self.assert_intact(events[0].data["conversation_id"], events)

    def test_browser_disconnects_mid_answer(self):
        text = "".join(f"word{i} " for i in range(40))
        self.llm.queue(Turn(text=text, chunks=40, chunk_delay=0.2))
        body = {"assistant_id": self.assistant.id, "message": "Tell me slowly."}
        sock, events = self.raw_stream(body, lambda events: len([e for e in events if e.event == "text"]) >= 3)
        shown = text_of(events)
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        conversation_id = events[0].data["conversation_id"]
        self.wait_for_state(conversation_id, "idle")
        conversation = self.assert_intact(conversation_id, events)
        stored_text = "".join(e.payload["delta"] for e in self.stored_events(conversation_id) if e.type == "text")
        self.assertTrue(stored_text.startswith(shown), "what was shown is stored")
        reply = conversation.message_ids.filtered(lambda m: m.role == "assistant")
        self.assertEqual((reply.content, reply.interrupted), (stored_text, True))
        self.assert_incomplete_usage(conversation_id)
        self.assert_next_turn_works(conversation_id)
        self.assert_told_interrupted(stored_text)

    def test_two_tabs_send_at_once(self):
        first = self.chat("First.", Turn(text="first"))
        conversation_id = first[0].data["conversation_id"]
        # both answers are slow, so whichever tab is second finds the turn running
        self.llm.queue(Turn(text="one answer", latency=1.0), Turn(text="another answer", latency=1.0))
        barrier = threading.Barrier(2)
        outcomes = {}

        def tab(name):
            barrier.wait()
            response = self.post(
                "/ai_mcp/chat/stream",
                {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": name},
            )
            outcomes[name] = (response.status_code, response.headers.get("Content-Type", ""), response.content)

        threads = [threading.Thread(target=tab, args=(name,)) for name in ("tab 1", "tab 2")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual(sorted(status for status, _type, _body in outcomes.values()), [200, 409])
        served = next(name for name, outcome in outcomes.items() if outcome[0] == 200)
        refused = next(name for name, outcome in outcomes.items() if outcome[0] == 409)
        _status, content_type, body = outcomes[refused]
        self.assertTrue(content_type.startswith("application/json"))
        self.assertEqual(json.loads(body)["error"]["code"], "CONVERSATION_BUSY")
        events = self.events_of_bytes(outcomes[served][2])
        self.assertEqual(types_of(events), ["start", "round", "text", "done"])
        self.assertEqual(events[0].id, first[-1].id + 1, "never interleaved: the served turn follows the first")
        conversation = self.assert_intact(conversation_id, [*first, *events])
        users = conversation.message_ids.filtered(lambda m: m.role == "user").sorted("seq")
        self.assertEqual(users.mapped("content"), ["First.", served], "the refused message is not stored")
        self.assertEqual(len(self.llm.requests), 2, "the refused tab never reached the model")
        self.llm._turns.clear()  # the refused tab's scripted answer
        self.assert_next_turn_works(conversation_id)
