"""The widget's JSON routes: who sees which assistants, cloud services and conversations."""

from datetime import timedelta

from odoo import fields
from odoo.exceptions import AccessError, UserError
from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatJson(ChatCase):
    def test_assistants_and_cloud_services_the_user_may_use(self):
        group = self.env["res.groups"].create({"name": "VIP"})
        vip = self.assistant.copy({"name": "VIP", "group_ids": [(6, 0, group.ids)]})
        owned = self.env["cloud.service"].create({"name": "Owned", "owner_id": self.user.id})
        joined = self.env["cloud.service"].create(
            {"name": "Joined", "owner_id": self.other.id, "member_ids": [(6, 0, self.user.ids)]}
        )
        self.env["cloud.service"].create({"name": "Not mine", "owner_id": self.other.id})
        self.login(self.user)
        assistants = self.jsonrpc("/ai_mcp/assistants")["result"]
        by_id = {a["id"]: a for a in assistants}
        self.assertIn(self.assistant.id, by_id)
        self.assertNotIn(vip.id, by_id)
        self.assertEqual(by_id[self.assistant.id]["name"], "Helper")
        self.assertEqual(
            sorted(s["id"] for s in by_id[self.assistant.id]["cloud_services"]), sorted((owned | joined).ids)
        )
        self.login(self.outsider)
        self.assertEqual(self.jsonrpc("/ai_mcp/assistants")["result"], [])

    def test_conversations_are_the_users_own_newest_first_and_history_is_what_the_widget_rebuilds(self):
        self.login(self.user)
        self.llm.queue(Turn(text="one"), Turn(text="two"))
        _response, first = self.send("first chat")
        _response, second = self.send("second chat")
        self.login(self.other)
        self.llm.queue(Turn(text="theirs"))
        self.send("their chat")

        self.login(self.user)
        conversations = self.jsonrpc("/ai_mcp/conversations")["result"]
        self.assertEqual([c["name"] for c in conversations], ["second chat", "first chat"])
        self.assertEqual(
            set(conversations[0]),
            {"id", "name", "assistant_id", "cloud_service_id", "state", "write_date", "last_seq", "rounds_used"},
        )
        self.assertEqual(conversations[0]["assistant_id"], self.assistant.id)
        self.assertEqual(conversations[0]["state"], "idle")
        filtered = self.jsonrpc("/ai_mcp/conversations", {"assistant_id": self.assistant.id + 100000})["result"]
        self.assertEqual(filtered, [])

        history = self.jsonrpc(f"/ai_mcp/conversation/{first[0].data['conversation_id']}/history")["result"]
        self.assertEqual(history["conversation"]["id"], first[0].data["conversation_id"])
        self.assertEqual(history["messages"], [{"role": "user", "text": "first chat", "seq": 0}])
        self.assertEqual(history["events"], [{**e.data, "seq": e.id} for e in first])

    def test_a_conversation_can_be_renamed_and_archived_but_not_forced(self):
        self.login(self.user)
        self.llm.queue(Turn(text="one"))
        _response, events = self.send("hello")
        conversation = self.conversation(events[0].data["conversation_id"]).with_user(self.user)
        conversation.write({"name": "Renamed", "active": False})
        with self.assertRaises(AccessError):
            conversation.write({"state": "idle"})
        with self.assertRaises(AccessError):
            conversation.with_user(self.other).read(["name"])
        with self.assertRaises(AccessError):
            self.env["ai.conversation"].with_user(self.user).create({"assistant_id": self.assistant.id})
        self.assertEqual(
            self.env["ai.conversation.event"]
            .with_user(self.other)
            .search([("conversation_id", "=", conversation.id)])
            .ids,
            [],
        )
        self.assertTrue(
            self.env["ai.conversation.event"].with_user(self.user).search([("conversation_id", "=", conversation.id)])
        )

    def test_a_conversation_answering_cannot_be_deleted(self):
        self.login(self.user)
        self.llm.queue(Turn(text="one"))
        _response, events = self.send("hello")
        conversation = self.conversation(events[0].data["conversation_id"])
        conversation.sudo().write({"state": "running", "turn_heartbeat": fields.Datetime.now()})
        with self.assertRaises(UserError):
            conversation.with_user(self.user).unlink()
        conversation.sudo().turn_heartbeat = fields.Datetime.now() - timedelta(minutes=10)
        conversation.with_user(self.user).unlink()
        self.assertFalse(conversation.exists())
