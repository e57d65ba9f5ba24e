"""The user's requests about running calls reach the turn running them: one look for all the
turns of a process, each turn handed its own (turn/call_requests.py)."""

import contextlib

from odoo.tests import tagged

from odoo.addons.ai_mcp.turn.call_requests import CallRequest, CallRequests

from .common import AiMcpCase


@tagged("post_install", "-at_install")
class TestCallRequests(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        provider = cls.env["ai.provider"].create(
            {"name": "P", "base_url": "http://127.0.0.1:9/v1", "default_model": "m"}
        )
        assistant = cls.env["ai.assistant"].create({"name": "A", "provider_id": provider.id})
        cls.mine, cls.theirs = (
            cls.env["ai.conversation"]
            .sudo()
            .create(
                [
                    {"assistant_id": assistant.id, "user_id": cls.user1.id},
                    {"assistant_id": assistant.id, "user_id": cls.user2.id},
                ]
            )
        )
        cls.calls = {}
        for conversation, call_id in (
            (cls.mine, "mine_1"),
            (cls.mine, "mine_2"),
            (cls.theirs, "theirs_1"),
            (cls.theirs, "theirs_old"),
        ):
            cls.calls[call_id] = (
                cls.env["ai.message"]
                .sudo()
                .create(
                    {
                        "conversation_id": conversation.id,
                        "role": "tool",
                        "tool_call_id": call_id,
                        "status": "running",
                    }
                )
            )

    def setUp(self):
        super().setUp()
        self.now = 100.0
        self.looks = 0
        self.requests = CallRequests(self.open_cursor, period=0.5, clock=lambda: self.now)

    @contextlib.contextmanager
    def open_cursor(self, _registry):
        self.looks += 1
        self.env.flush_all()
        yield self.env.cr

    def take(self, conversation, running):
        return self.requests.take(self.env.registry, conversation.id, set(running))

    def answer(self, call_id):
        self.calls[call_id].sudo().elicitation_answer = {
            "elicitation": f"q-{call_id}",
            "action": "accept",
            "content": {"ok": True},
        }

    def test_one_look_finds_the_requests_of_every_turn_and_hands_each_its_own(self):
        self.assertEqual(self.take(self.theirs, ["theirs_1"]), [])
        self.now += 0.1
        self.assertEqual(self.take(self.mine, ["mine_1", "mine_2"]), [], "a look less than a period ago: none now")
        self.assertEqual(self.looks, 1)

        self.calls["mine_2"].status = "cancelling"
        self.answer("theirs_1")
        self.calls["theirs_old"].status = "cancelling"  # a call their turn no longer runs
        self.now += 0.5
        self.assertEqual(self.take(self.mine, ["mine_1", "mine_2"]), [CallRequest("mine_2", True, None)])
        self.assertEqual(self.looks, 2, "one look for both turns")
        self.now += 0.1
        answer = {"elicitation": "q-theirs_1", "action": "accept", "content": {"ok": True}}
        self.assertEqual(self.take(self.theirs, ["theirs_1"]), [CallRequest("theirs_1", False, answer)])
        self.assertEqual(self.looks, 2, "theirs was found by the look of mine")
        self.calls["theirs_1"].invalidate_recordset(["elicitation_answer"])
        self.assertFalse(self.calls["theirs_1"].elicitation_answer, "an answer is handed over once")

        self.now += 0.5
        self.assertEqual(self.take(self.theirs, ["theirs_1"]), [], "the answer is not handed again")
        self.assertEqual(
            self.take(self.mine, ["mine_1", "mine_2"]),
            [CallRequest("mine_2", True, None)],
            "a stop is handed again until the call ends: the turn sends it once",
        )

    def test_a_turn_whose_calls_ended_is_no_longer_looked_for(self):
        self.take(self.mine, ["mine_1"])
        self.take(self.theirs, ["theirs_1"])
        self.requests.forget(self.env.registry, self.mine.id)
        self.answer("mine_1")
        self.now += 0.5
        self.assertEqual(self.take(self.theirs, ["theirs_1"]), [])
        self.calls["mine_1"].invalidate_recordset(["elicitation_answer"])
        self.assertTrue(self.calls["mine_1"].elicitation_answer, "not taken for a turn that was not looked for")
