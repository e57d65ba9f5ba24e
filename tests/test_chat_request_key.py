"""A chat start sent again: the browser names each message (request_key) and sends the same name
when it retries a start whose answer proved nothing (a full database pool, a proxy that lost its
node). A message stored after all is never stored, nor answered, twice."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase, text_of, types_of


@tagged("post_install", "-at_install")
class TestChatRequestKey(ChatCase):
    def user_messages(self, conversation_id):
        messages = self.conversation(conversation_id).message_ids.filtered(lambda m: m.role == "user")
        return messages.mapped("content")

    def test_a_new_conversation_started_again_is_not_answered_twice(self):
        self.login(self.user)
        self.llm.queue(Turn(text="Hello there."), Turn(text="A second answer nobody asked for."))
        response, events = self.send("hello", request_key="key-new-conversation-1")
        self.assertEqual(response.status_code, 200, response.text)
        conversation_id = events[0].data["conversation_id"]

        again = self.post(
            "/ai_mcp/chat/stream",
            {"assistant_id": self.assistant.id, "message": "hello", "request_key": "key-new-conversation-1"},
        )
        self.assertEqual(again.status_code, 409)
        error = again.json()["error"]
        self.assertEqual(error["code"], "ALREADY_RECEIVED")
        self.assertEqual(error["conversation_id"], conversation_id, "the browser is told where the answer is")
        self.assertEqual(self.user_messages(conversation_id), ["hello"])
        self.assertEqual(len(self.llm.requests), 1, "the model answered once")
        self.assertEqual(
            self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)]), 1, "no second conversation"
        )
        # what the browser reads instead: the answer it missed
        _response, replayed = self.replay(conversation_id, after=0)
        self.assertEqual(types_of(replayed), types_of(events))
        self.assertEqual(text_of(replayed), "Hello there.")

    def test_a_message_in_a_conversation_sent_again_is_stored_once(self):
        self.login(self.user)
        self.llm.queue(Turn(text="first answer"), Turn(text="second answer"), Turn(text="never"))
        _response, events = self.send("first")
        conversation_id = events[0].data["conversation_id"]
        body = {"conversation_id": conversation_id, "request_key": "key-second-message-2"}
        response, second = self.send("second", **body)
        self.assertEqual(text_of(second), "second answer")

        again = self.post("/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "second", **body})
        self.assertEqual(again.status_code, 409)
        self.assertEqual(again.json()["error"]["code"], "ALREADY_RECEIVED")
        self.assertEqual(self.user_messages(conversation_id), ["first", "second"])
        self.assertEqual(len(self.llm.requests), 2)

    def test_another_users_key_is_theirs_alone(self):
        self.login(self.other)
        self.llm.queue(Turn(text="for the other user"))
        self.send("mine", request_key="key-shared-by-chance")
        self.login(self.user)
        self.llm.queue(Turn(text="for the user"))
        response, events = self.send("mine too", request_key="key-shared-by-chance")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(text_of(events), "for the user", "another user's key neither refuses nor reveals anything")

    def test_a_malformed_key_is_refused_naming_it_and_nothing_is_stored(self):
        self.login(self.user)
        for key in ("short", "x" * 65, "with space in it", 12345678):
            with self.subTest(key=key):
                response = self.post(
                    "/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "hi", "request_key": key}
                )
                self.assertEqual(response.status_code, 400)
                error = response.json()["error"]
                self.assertEqual(error["code"], "INVALID_REQUEST")
                self.assertIn("request_key", error["message"])
        self.assertFalse(self.env["ai.conversation"].search([("user_id", "=", self.user.id)]))
        self.assertEqual(self.llm.requests, [])
