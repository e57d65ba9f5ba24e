"""While a tool runs, the chat shows what its server says (progress, log messages) and the user can
stop that one call: the request reaches the running turn through the database, from any worker."""

import json
import time
from unittest.mock import patch

import requests

from odoo.exceptions import ValidationError
from odoo.tests import tagged

from odoo.addons.ai_mcp.services.loop.tool_runner import CANCELLED_BY_USER
from odoo.addons.ai_mcp.testing.mcp_servers import DEFAULTS_FORM_UNTOUCHED
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn
from odoo.addons.ai_mcp.turn import pacing

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatCallNotifications(ChatCase):
    mcp_options = ("--notifying",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # they change nothing: no approval card in the way of what these tests look at
        for name in ("progress", "chatty", "slow", "gate", "ask_preferences", "ask_visit", "ask_defaults"):
            cls.tools[name].requires_approval = False

    def stream_until(self, body, on_events, path="/ai_mcp/chat/stream"):
        """POST the stream route (or `path`) and read it to its final event, calling
        `on_events(events)` as they come."""
        final = {"done", "error", "approval_required", "confirm_continue"}

        def read_until(events):
            on_events(events)
            return any(e.event in final for e in events)

        sock, events = self.raw_stream(body, read_until, path)
        sock.close()
        return events

    def other_browser(self, user):
        """A session of its own, logged in over HTTP, as a request that reaches another worker would come."""
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

    def rpc(self, session, path, params):
        return session.post(
            f"{self.base_url()}{path}", json={"jsonrpc": "2.0", "method": "call", "params": params}, timeout=30
        ).json()

    def cancel(self, session, conversation_id, call_id):
        return session.post(
            f"{self.base_url()}/ai_mcp/chat/cancel_call",
            json={
                "jsonrpc": "2.0",
                "method": "call",
                "params": {"conversation_id": conversation_id, "call_id": call_id},
            },
            timeout=30,
        ).json()

    def test_progress_and_log_messages_are_streamed_and_stored_coalesced(self):
        self.login(self.user)
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("progress", {"steps": 300, "seconds": 1.5}, id="call_p"),
                    ToolCall("chatty", {"count": 2}, id="call_log"),
                )
            ),
            Turn(text="All done."),
        )
        response, events = self.send("Do the long thing.")
        self.assertEqual(events[-1].event, "done")
        progress = [e for e in events if e.event == "tool_progress"]
        self.assertTrue(2 <= len(progress) <= 6, f"{len(progress)} progress events for 300 notifications")
        self.assertEqual((progress[-1].data["progress"], progress[-1].data["total"]), (300, 300))
        self.assertEqual(progress[-1].data["message"], "step 300 of 300")
        results = [e.id for e in events if e.event == "tool_result" and e.data["id"] == "call_p"]
        self.assertLess(progress[-1].id, results[0], "the last progress comes before the result")
        conversation_id = events[0].data["conversation_id"]
        stored = self.stored_events(conversation_id)
        self.assertEqual([(e.seq, e.type) for e in stored], [(e.id, e.event) for e in events], "stored as streamed")
        # both calls ran at once on one pooled session: a log message cannot be told apart, so it
        # is not shown in either block (it is in Odoo's log)
        self.llm.queue(Turn(tool_calls=(ToolCall("chatty", {"count": 2}, id="call_alone"),)), Turn(text="Logged."))
        _response, events = self.send("Log something.", conversation_id=conversation_id)
        logs = [(e.data["id"], e.data["level"], e.data["message"]) for e in events if e.event == "tool_log"]
        self.assertEqual(
            logs,
            [
                ("call_alone", "info", "working on item 1"),
                ("call_alone", "warning", '{"items": 2, "note": "last one"}'),
            ],
        )

    def test_the_user_stops_one_call_from_another_worker_and_the_turn_goes_on(self):
        self.login(self.user)
        owner = self.other_browser(self.user)
        stranger = self.other_browser(self.other)
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("slow", {"seconds": 30}, id="call_slow"),
                    ToolCall("progress", {"steps": 6, "seconds": 3}, id="call_p"),
                )
            ),
            Turn(text="Went on without the slow one."),
        )
        answers = {}

        def on_events(events):
            if any(e.event == "tool_progress" for e in events) and "owner" not in answers:
                conversation_id = events[0].data["conversation_id"]
                answers["stranger"] = self.cancel(stranger, conversation_id, "call_slow")
                answers["owner"] = self.cancel(owner, conversation_id, "call_slow")

        events = self.stream_until({"assistant_id": self.assistant.id, "message": "Both, please."}, on_events)
        self.assertEqual(answers["stranger"]["error"]["code"], 404, "another user's conversation is not found")
        self.assertEqual(answers["owner"]["result"], {"cancelling": True})
        results = {e.data["id"]: e for e in events if e.event == "tool_result"}
        self.assertEqual(
            (results["call_slow"].data["ok"], results["call_slow"].data["error_code"]), (False, "CANCELLED")
        )
        self.assertTrue(results["call_p"].data["ok"])
        self.assertEqual(events[-1].event, "done")
        seen = {m["tool_call_id"]: m["content"] for m in self.llm.requests[1]["messages"] if m["role"] == "tool"}
        self.assertEqual(
            seen["call_slow"], f"Error CANCELLED: {CANCELLED_BY_USER}", "the model reads that the user stopped it"
        )
        conversation = self.conversation(events[0].data["conversation_id"])
        slow = conversation.message_ids.filtered(lambda m: m.tool_call_id == "call_slow")
        self.assertEqual((slow.status, slow.error_code), ("cancelled", "CANCELLED"))
        deadline = time.monotonic() + 10
        while not (self.mcp_state / "slow-cancelled").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertTrue((self.mcp_state / "slow-cancelled").exists(), "the MCP server was told to stop the call")
        self.assertFalse((self.mcp_state / "slow-finished").exists())

    def test_a_slow_call_shows_while_it_runs_and_a_fast_one_is_stored_with_its_result(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="call_echo"),)),
            Turn(tool_calls=(ToolCall("gate", {}, id="call_long"),)),
            Turn(text="Both ran."),
        )
        # the tool waits until the browser has its call: it can only end once the call was shown
        body = {"assistant_id": self.assistant.id, "message": "Echo, then wait."}
        events = self.stream_until(body, self.open_gate_on_call)
        self.assertEqual(events[-1].event, "done")
        results = {e.data["id"]: e for e in events if e.event == "tool_result"}
        self.assertEqual(results["call_long"].data["content"][0]["text"], "the gate was opened")
        transactions = self.event_transactions(events[0].data["conversation_id"])
        echo = results["call_echo"]
        if echo.data["duration_ms"] < 100:  # well within the time a call is held
            self.assertEqual(transactions[("call_echo", "tool_call")], transactions[("call_echo", "tool_result")])
        self.assertNotEqual(transactions[("call_long", "tool_call")], transactions[("call_long", "tool_result")])
        messages = self.conversation(events[0].data["conversation_id"]).message_ids
        self.assertEqual(messages.filtered(lambda m: m.role == "tool").mapped("status"), ["done", "done"])

    def test_a_calls_first_progress_shows_it_at_once(self):
        self.login(self.user)
        gate = ToolCall("gate", {"report": True, "limit": 20}, id="call_gate")
        self.llm.queue(Turn(tool_calls=(gate,)), Turn(text="Through."))
        # no idle tick within the test: only the call's own progress can release it
        with patch.object(pacing, "IDLE_TICK_SECONDS", 3600):
            body = {"assistant_id": self.assistant.id, "message": "Wait at the gate."}
            events = self.stream_until(body, self.open_gate_on_call)
        self.assertEqual(events[-1].event, "done")
        result = next(e for e in events if e.event == "tool_result")
        self.assertEqual(result.data["content"][0]["text"], "the gate was opened", "the call was shown while it ran")
        transactions = self.event_transactions(events[0].data["conversation_id"])
        self.assertEqual(transactions[("call_gate", "tool_call")], transactions[("call_gate", "tool_progress")])

    def open_gate_on_call(self, events):
        """Opens the test server's gate (its `gate` tool waits for it) once a call of it has arrived."""
        if any(e.event == "tool_call" and e.data["tool"] == "gate" for e in events):
            gate = self.mcp_state / "gate-open"
            gate.touch()
            self.addCleanup(gate.unlink, missing_ok=True)

    def event_transactions(self, conversation_id):
        """{(call id, event type): the transaction that stored its first such event}"""
        self.env.cr.execute(
            "SELECT payload->>'id', type, xmin::text FROM ai_conversation_event"
            " WHERE conversation_id = %s AND type IN ('tool_call', 'tool_progress', 'tool_result') ORDER BY seq",
            [conversation_id],
        )
        transactions = {}
        for call, kind, xmin in self.env.cr.fetchall():
            transactions.setdefault((call, kind), xmin)
        return transactions

    def test_a_call_that_is_not_running_cannot_be_cancelled(self):
        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="call_echo"),)), Turn(text="Said hi."))
        _response, events = self.send("Say hi.")
        answer = self.jsonrpc(
            "/ai_mcp/chat/cancel_call", {"conversation_id": events[0].data["conversation_id"], "call_id": "call_echo"}
        )
        self.assertEqual(answer["result"], {"cancelling": False})
        echo = self.conversation(events[0].data["conversation_id"]).message_ids.filtered(
            lambda m: m.tool_call_id == "call_echo"
        )
        self.assertEqual(echo.status, "done")

    def test_a_tool_the_server_adds_is_synced_at_once_and_held_for_review(self):
        self.login(self.user)
        self.tools["grow"].sudo().requires_approval = False
        self.llm.queue(Turn(tool_calls=(ToolCall("grow", {"name": "sprout"}, id="call_grow"),)), Turn(text="Grown."))
        _response, events = self.send("Grow a tool.")
        self.assertEqual(events[-1].event, "done")
        # the pooled session heard tools/list_changed; a background sync follows within seconds, not at the daily cron
        deadline = time.monotonic() + 15
        review_state = None
        while review_state is None and time.monotonic() < deadline:
            time.sleep(0.2)
            # on a test cursor, serialized with the sync's own: never in the middle of its transaction
            with self.registry.cursor() as cr:
                cr.execute(
                    "SELECT review_state FROM mcp_tool WHERE server_id = %s AND name = 'sprout'", (self.server.id,)
                )
                review_state = next(iter(cr.fetchall()), (None,))[0]
        self.assertIsNotNone(review_state, "the new tool was synced without waiting for the cron")
        self.assertEqual(review_state, "changed", "a tool nobody reviewed is set aside, as the cron does")
        self.env.invalidate_all()
        self.llm.queue(Turn(text="Fine."))
        self.send("Anything new?", conversation_id=events[0].data["conversation_id"])
        offered = [t["function"]["name"] for t in self.llm.requests[-1]["tools"]]
        self.assertNotIn("sprout", offered)
        self.assertIn("echo", offered)

    def test_a_servers_question_is_answered_from_another_worker_and_the_call_goes_on(self):
        self.login(self.user)
        owner = self.other_browser(self.user)
        stranger = self.other_browser(self.other)
        self.llm.queue(Turn(tool_calls=(ToolCall("ask_preferences", {}, id="call_ask"),)), Turn(text="Greeted."))
        answers = {}

        def on_events(events):
            question = next((e for e in events if e.event == "elicitation_required"), None)
            if question is None or "owner" in answers:
                return
            params = {
                "conversation_id": events[0].data["conversation_id"],
                "call_id": "call_ask",
                "elicitation": question.data["elicitation"],
            }
            answers["stranger"] = self.rpc(
                stranger, "/ai_mcp/chat/elicitation", {**params, "action": "accept", "content": {"name": "Mallory"}}
            )
            answers["invalid"] = self.rpc(
                owner, "/ai_mcp/chat/elicitation", {**params, "action": "accept", "content": {"color": "pink"}}
            )
            answers["owner"] = self.rpc(
                owner,
                "/ai_mcp/chat/elicitation",
                {**params, "action": "accept", "content": {"name": "Ann", "color": "red", "newsletter": False}},
            )

        events = self.stream_until({"assistant_id": self.assistant.id, "message": "Greet me."}, on_events)
        self.assertEqual(answers["stranger"]["error"]["code"], 404, "another user's conversation is not found")
        seen_by_stranger = stranger.get(
            f"{self.base_url()}/ai_mcp/chat/{events[0].data['conversation_id']}/events", timeout=30
        )
        self.assertEqual(seen_by_stranger.status_code, 404, "nor is its question")
        invalid = answers["invalid"]["result"]
        self.assertFalse(invalid["answered"])
        self.assertTrue(any("name" in error for error in invalid["errors"]), invalid["errors"])
        self.assertTrue(any("pink" in error for error in invalid["errors"]), invalid["errors"])
        self.assertEqual(answers["owner"]["result"], {"answered": True})
        question = next(e for e in events if e.event == "elicitation_required")
        self.assertEqual(question.data["mode"], "form")
        # the tool's inline icon (its remote one is dropped) goes with the call to the block
        call = next(e for e in events if e.event == "tool_call")
        self.assertTrue(call.data["icon"].startswith("data:image/png;base64,"))
        self.assertEqual(self.tools["ask_preferences"].icon, call.data["icon"])
        self.assertEqual(question.data["requested_schema"]["properties"]["color"]["enum"], ["red", "green", "blue"])
        done = next(e for e in events if e.event == "elicitation_done")
        self.assertEqual(done.data["action"], "accept")
        result = next(e for e in events if e.event == "tool_result")
        self.assertEqual(result.data["model_text"], "hello Ann, red")
        self.assertEqual(events[-1].event, "done")
        # answered once: the question is closed and a late answer says so
        late = self.rpc(
            owner,
            "/ai_mcp/chat/elicitation",
            {
                "conversation_id": events[0].data["conversation_id"],
                "call_id": "call_ask",
                "elicitation": question.data["elicitation"],
                "action": "decline",
            },
        )
        self.assertEqual(late["result"]["answered"], False)
        stored = self.stored_events(events[0].data["conversation_id"])
        self.assertEqual([(e.seq, e.type) for e in stored], [(e.id, e.event) for e in events], "stored as streamed")

    def test_a_question_left_unanswered_is_cancelled_at_the_servers_limit_and_the_call_says_so(self):
        fresh = self.env["mcp.server"].create({"name": "Defaults", "scope": "system", "url": self.mcp.url})
        self.assertEqual((fresh.call_time_cap, fresh.question_timeout), (600.0, 600.0), "ten minutes each by default")
        with self.assertRaisesRegex(ValidationError, "question timeout must be between 0 and 86400"):
            fresh.question_timeout = 0
        with self.assertRaisesRegex(ValidationError, "call time cap must be between 0 and 86400"):
            fresh.call_time_cap = 86401
        self.server.write({"question_timeout": 1.0, "call_time_cap": 900.0})
        spec = self.server._server_spec()
        self.assertEqual((spec.question_timeout, spec.call_time_cap), (1.0, 900.0))

        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("ask_preferences", {}, id="call_ask"),)), Turn(text="No answer."))
        events = self.stream_until({"assistant_id": self.assistant.id, "message": "Greet me."}, lambda events: None)
        lapse = "No answer within 1 second: the question was cancelled."
        done = next(e for e in events if e.event == "elicitation_done")
        self.assertEqual((done.data["action"], done.data["note"]), ("cancel", lapse))
        self.assertEqual(next(e for e in events if e.event == "tool_result").data["model_text"], "no answer: cancel")
        self.assertEqual(events[-1].event, "done")
        messages = self.conversation(events[0].data["conversation_id"]).message_ids
        call = messages.filtered(lambda m: m.tool_call_id == "call_ask")
        self.assertEqual((call.status, call.note), ("done", lapse))

    def test_an_answer_that_leaves_fields_out_reaches_the_server_with_their_defaults(self):
        self.login(self.user)
        owner = self.other_browser(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("ask_defaults", {}, id="call_defaults"),)), Turn(text="Checked."))
        answered = {"comment": "ring twice", "count": 5, "tags": []}
        replies = []

        def on_events(events):
            question = next((e for e in events if e.event == "elicitation_required"), None)
            if question is not None and not replies:
                replies.append(
                    self.rpc(
                        owner,
                        "/ai_mcp/chat/elicitation",
                        {
                            "conversation_id": events[0].data["conversation_id"],
                            "call_id": "call_defaults",
                            "elicitation": question.data["elicitation"],
                            "action": "accept",
                            "content": answered,
                        },
                    )
                )

        events = self.stream_until({"assistant_id": self.assistant.id, "message": "Check my order."}, on_events)
        self.assertEqual(replies[0]["result"], {"answered": True})
        result = next(e for e in events if e.event == "tool_result")
        received = json.loads(result.data["model_text"])
        # what the user gave is kept, each field left out has its default, a default the field refuses none
        self.assertEqual(received, {"action": "accept", "content": {**DEFAULTS_FORM_UNTOUCHED, **answered}})

    def test_a_call_that_ran_after_its_approval_can_be_stopped_too(self):
        self.stop_after_approval("tool_progress")

    def test_an_approved_call_can_be_stopped_as_soon_as_the_turn_goes_on(self):
        # the resumed turn's start is stored before it is shown: the call is running from then on
        self.stop_after_approval("start")

    def stop_after_approval(self, stop_on):
        """Approve a long call, and stop it from another worker once the resumed turn sends `stop_on`."""
        self.login(self.user)
        owner = self.other_browser(self.user)
        self.tools["progress"].sudo().requires_approval = True
        self.llm.queue(
            Turn(tool_calls=(ToolCall("progress", {"steps": 20, "seconds": 20}, id="call_p"),)),
            Turn(text="Stopped it."),
        )
        _response, events = self.send("Long job, please.")
        self.assertEqual(events[-1].event, "approval_required")
        conversation_id = events[0].data["conversation_id"]
        answers = {}

        def on_events(resumed):
            if any(e.event == stop_on for e in resumed) and "owner" not in answers:
                answers["owner"] = self.cancel(owner, conversation_id, "call_p")

        resumed = self.stream_until(
            {"conversation_id": conversation_id, "approvals": {"call_p": True}}, on_events, path="/ai_mcp/chat/resume"
        )
        self.assertEqual(answers["owner"]["result"], {"cancelling": True})
        result = next(e for e in resumed if e.event == "tool_result")
        self.assertEqual(result.data["error_code"], "CANCELLED")
        self.assertEqual(resumed[-1].event, "done")
        call = self.conversation(conversation_id).message_ids.filtered(lambda m: m.tool_call_id == "call_p")
        self.assertEqual(call.status, "cancelled")
