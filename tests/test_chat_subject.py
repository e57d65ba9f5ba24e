"""A conversation about a record ("Ask AI" on a form), through the chat's routes: it starts only
about a record the user may read, keeps the record, tells the model which one it is at every turn
and shows it in the chat; the record is read with the user's rights, never more."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase, text_of

NOT_FOUND = "werkzeug.exceptions.NotFound"


@tagged("post_install", "-at_install")
class TestChatSubject(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.partner = cls.env["res.partner"].create({"name": "Azure Interior"})

    def system_prompt(self, request):
        return request["messages"][0]["content"]

    def test_a_conversation_about_a_record_keeps_it_and_the_model_is_told_at_every_turn(self):
        self.login(self.user)
        card = self.jsonrpc("/ai_mcp/subject", {"res_model": "res.partner", "res_id": self.partner.id})["result"]
        self.assertEqual(
            card,
            {
                "res_model": "res.partner",
                "res_id": self.partner.id,
                "model_name": "Contact",
                "display_name": "Azure Interior",
                "url": f"/odoo/res.partner/{self.partner.id}",
            },
        )
        self.llm.queue(Turn(text="It is a company."), Turn(text="Still it."))
        _response, first = self.send("Who is this?", res_model="res.partner", res_id=self.partner.id)
        conversation_id = first[0].data["conversation_id"]
        _response, second = self.send("And now?", conversation_id=conversation_id)
        self.assertEqual((text_of(first), text_of(second)), ("It is a company.", "Still it."))
        conversation = self.conversation(conversation_id)
        self.assertEqual((conversation.res_model, conversation.res_id), ("res.partner", self.partner.id))
        told = f'Contact "Azure Interior" (model res.partner, id {self.partner.id}'
        for request in self.llm.requests:
            self.assertIn("Be brief.", self.system_prompt(request))
            self.assertIn(told, self.system_prompt(request))
        history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
        self.assertEqual(history["conversation"]["subject"], card, "the chat's header links to the record")

    def test_a_conversation_about_nothing_tells_the_model_nothing(self):
        self.login(self.user)
        self.llm.queue(Turn(text="Hi."))
        _response, events = self.send("Hello")
        self.assertNotIn("This conversation is about", self.system_prompt(self.llm.requests[0]))
        history = self.jsonrpc(f"/ai_mcp/conversation/{events[0].data['conversation_id']}/history")["result"]
        self.assertIsNone(history["conversation"]["subject"])

    def test_a_record_the_user_cannot_read_or_that_does_not_exist_is_refused_alike(self):
        secret = self.env["ir.config_parameter"].sudo().search([], limit=1)
        refused = [
            ("ir.config_parameter", secret.id),  # closed to an internal user
            ("res.partner", self.partner.id + 100000),
            ("no.such.model", 1),
            ("res.partner", "x"),
            ("res.partner", 0),
            ("base", 1),  # an abstract model
        ]
        self.login(self.user)
        for res_model, res_id in refused:
            with self.subTest(res_model=res_model, res_id=res_id):
                answer = self.jsonrpc("/ai_mcp/subject", {"res_model": res_model, "res_id": res_id})
                self.assertEqual(answer["error"]["data"]["name"], NOT_FOUND)
                response, events = self.send("Tell me about it", res_model=res_model, res_id=res_id)
                self.assertEqual((response.status_code, events), (404, []))
        self.assertEqual(self.llm.requests, [], "no turn started")
        self.assertFalse(self.env["ai.conversation"].search([("user_id", "=", self.user.id)]))

    def test_only_users_of_the_assistant_may_ask_about_a_record(self):
        self.login(self.outsider)
        answer = self.jsonrpc("/ai_mcp/subject", {"res_model": "res.partner", "res_id": self.partner.id})
        self.assertEqual(answer["error"]["data"]["name"], NOT_FOUND)

    def test_a_started_conversation_keeps_its_record(self):
        self.login(self.user)
        self.llm.queue(Turn(text="Hi."))
        _response, events = self.send("Hello")
        response, _events = self.send(
            "Now about this", conversation_id=events[0].data["conversation_id"], res_model="res.partner", res_id=1
        )
        self.assertEqual(response.status_code, 400)

    def test_a_record_the_user_can_no_longer_read_is_no_subject_to_her_or_the_model(self):
        self.login(self.user)
        self.llm.queue(Turn(text="Noted."), Turn(text="About what?"))
        _response, events = self.send("Who is this?", res_model="res.partner", res_id=self.partner.id)
        conversation_id = events[0].data["conversation_id"]
        # the record is now one she may not read: the conversation's link stays, its content is not told
        self.conversation(conversation_id).sudo().write({"res_model": "ir.config_parameter", "res_id": 1})
        self.send("And now?", conversation_id=conversation_id)
        self.assertNotIn("This conversation is about", self.system_prompt(self.llm.requests[-1]))
        history = self.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history")["result"]
        self.assertIsNone(history["conversation"]["subject"])
