"""A turn whose process died (or whose database restarted) while it answered: what the routes the
widget uses do with it, and the sequence numbers a tab was sent before the turn stored them.

The process that dies is stood for by a turn whose heartbeat the test makes stale (with a stale
limit of 6 s) while its stream is open or after it: the request that takes the turn over is real,
and so is the turn, which may still run and try to write."""

from datetime import timedelta
from unittest.mock import patch

from odoo import fields
from odoo.tests import tagged

from odoo.addons.ai_mcp.services.events import RoundEvent, TextEvent
from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase, text_of

STALE_AFTER = {"turn_stale_after": "6"}


def stale_after_six_seconds():
    return patch("odoo.addons.ai_mcp.hub_process.config_section", return_value=STALE_AFTER)


@tagged("post_install", "-at_install")
class TestTurnTakeover(ChatCase):
    def setUp(self):
        super().setUp()
        self.login(self.user)

    def answered(self, text="first"):
        self.llm.queue(Turn(text=text))
        _response, events = self.send(text)
        return events[0].data["conversation_id"], events

    def died(self, conversation_id, heartbeat):
        """The conversation's turn runs, its last heartbeat at `heartbeat`: as its process left it."""
        self.conversation(conversation_id).sudo().write({"state": "running", "turn_heartbeat": heartbeat})

    def postgres_started(self):
        self.env.cr.execute("SELECT pg_postmaster_start_time() AT TIME ZONE 'UTC'")
        return self.env.cr.fetchone()[0]

    def test_the_events_route_a_tab_polls_ends_a_dead_turn(self):
        conversation_id, events = self.answered()
        self.died(conversation_id, fields.Datetime.now() - timedelta(seconds=7))
        with stale_after_six_seconds():
            _response, replayed = self.replay(conversation_id, after=len(events))
        self.assertEqual([(e.event, e.data["code"]) for e in replayed], [("error", "CANCELLED")])
        self.assertGreater(replayed[0].id, len(events))
        self.assertIn("the server running it stopped", replayed[0].data["message"])
        self.assertEqual(self.conversation(conversation_id).state, "idle")

    def test_stop_ends_a_dead_turn_and_leaves_a_live_one_running(self):
        conversation_id, events = self.answered()
        self.died(conversation_id, fields.Datetime.now())
        with stale_after_six_seconds():
            live = self.jsonrpc("/ai_mcp/chat/stop", {"conversation_id": conversation_id})["result"]
        self.assertEqual(live, {"stopped": False})
        self.assertEqual(self.conversation(conversation_id).state, "running")

        self.died(conversation_id, fields.Datetime.now() - timedelta(seconds=7))
        with stale_after_six_seconds():
            dead = self.jsonrpc("/ai_mcp/chat/stop", {"conversation_id": conversation_id})["result"]
        self.assertEqual(dead, {"stopped": True})
        self.assertEqual(self.conversation(conversation_id).state, "idle")
        ended = self.stored_events(conversation_id)[-1]
        self.assertEqual((ended.type, ended.payload["code"]), ("error", "CANCELLED"))
        self.assertGreater(ended.seq, len(events))

        self.login(self.other)
        refused = self.jsonrpc("/ai_mcp/chat/stop", {"conversation_id": conversation_id})
        self.assertNotIn("result", refused, "someone else's conversation is not theirs to stop")

    def test_a_turn_that_lost_its_database_says_so(self):
        conversation_id, _events = self.answered()
        # its last heartbeat before PostgreSQL started: the database restarted under the turn
        self.died(conversation_id, self.postgres_started() - timedelta(seconds=1))
        with stale_after_six_seconds():
            history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
        message = history["events"][-1]["message"]
        self.assertIn("lost its database connection", message)
        self.assertNotIn("server", message)

    def test_the_numbers_a_dead_turn_sent_are_never_given_again(self):
        """The model stalls after the answer's first words: they were sent, not yet stored (text is
        written in batches), when the turn is taken over; the takeover's error and the next answer
        come after them, and the turn, still running, stores nothing more."""
        conversation_id, first = self.answered()
        # the batch waits for more than the test lasts: what was sent is not stored yet
        with patch("odoo.addons.ai_mcp.turn.pacing.TEXT_FLUSH_SECONDS", 3600):
            self.llm.queue(Turn(text="Hello there, friend", chunks=2, chunk_delay=3.0))
            response = self.post(
                "/ai_mcp/chat/stream",
                {"assistant_id": self.assistant.id, "conversation_id": conversation_id, "message": "second"},
                stream=True,
            )
            self.assertEqual(response.status_code, 200)
            sent = []
            chunks = response.iter_content(chunk_size=None)
            while not any(e.event == "text" for e in sent):
                sent += self.events_of_bytes(next(chunks))
            self.conversation(conversation_id).sudo().turn_heartbeat = fields.Datetime.now() - timedelta(seconds=7)
            with stale_after_six_seconds():
                # a reload: the history ends the turn
                history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
                sent += self.events_of_bytes(b"".join(chunks))
        ended = history["events"][-1]
        self.assertEqual((ended["type"], ended["code"]), ("error", "CANCELLED"))
        taken_over = ended["seq"]
        self.assertGreater(taken_over, max(e.id for e in sent if e.id is not None), "a number sent is not given again")
        self.assertNotIn("done", [e.event for e in sent], "the turn taken over ends without an answer of its own")

        self.llm.queue(Turn(text="third answer"))
        _response, third = self.send("third", conversation_id=conversation_id)
        self.assertEqual(third[-1].event, "done")
        self.assertEqual(text_of(third), "third answer")
        self.assertGreater(third[0].id, taken_over)
        stored = self.stored_events(conversation_id)
        numbers = [e.id for e in first + sent + third if e.id is not None] + [taken_over]
        self.assertEqual(len(numbers), len(set(numbers)), "every number a tab was sent names one event")
        self.assertEqual(stored.mapped("seq"), [e.id for e in first] + [taken_over] + [e.id for e in third])

    def test_the_reply_a_dead_turn_was_streaming_is_kept_and_the_model_told_it_was_cut_off(self):
        conversation_id, events = self.answered()
        # the dead process had stored the round it started and two pieces of its reply
        Event = self.env["ai.conversation.event"].sudo()
        streamed = [RoundEvent(n=1, max=5), TextEvent(delta="Your orders: "), TextEvent(delta="seven so")]
        for offset, event in enumerate(streamed, start=1):
            Event.create(
                {
                    "conversation_id": conversation_id,
                    "seq": len(events) + offset,
                    "type": event.type,
                    "payload": event.data(),
                }
            )
        self.conversation(conversation_id).sudo().write({"last_seq": len(events) + 3 + 64})
        self.died(conversation_id, fields.Datetime.now() - timedelta(seconds=7))
        self.llm.queue(Turn(text="second"))
        with stale_after_six_seconds():
            response, _more = self.send("and now?", conversation_id=conversation_id)
        self.assertEqual(response.status_code, 200, response.text)
        kept = self.env["ai.message"].search(
            [("conversation_id", "=", conversation_id), ("role", "=", "assistant"), ("interrupted", "=", True)]
        )
        self.assertEqual(kept.mapped("content"), ["Your orders: seven so"])
        sent = [m for m in self.llm.requests[-1]["messages"] if m["role"] == "assistant"]
        self.assertTrue(sent[-1]["content"].startswith("Your orders: seven so\n\n[This answer was interrupted here"))
