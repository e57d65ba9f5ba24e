"""Pace limits: how many messages a user may send to the assistants per minute and per hour (Settings
> AI). A message past a limit is refused before anything of it is stored, saying which limit and when
the next one can be sent (in the user's time zone); a start sent again, and the answers that resume a
paused turn, are not new messages.

The clock the limits are kept by is set by the tests (`_pace_now`), and the times the user's messages
were stored are set to known ones (`pin`): nothing depends on how long a test takes."""

from datetime import datetime, timedelta
from unittest.mock import patch

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import TransactionCase, new_test_user, tagged
from odoo.tools import html2plaintext

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase, text_of
from .test_chat_discuss import DiscussCase

# a time long past: a message stored and not pinned (stored at the wall clock's time) would count
# in every window the tests look at
T0 = datetime(2026, 3, 2, 14, 2, 12)


class PaceMixin:
    """Limits set as an administrator sets them, the clock, and the stored times of the messages."""

    def set_up_pace(self):
        self.now = T0
        clock = patch.object(self.registry["ai.conversation"], "_pace_now", lambda _self: self.now)
        clock.start()
        self.addCleanup(clock.stop)
        self.user.tz = "Asia/Shanghai"  # UTC+8, no daylight saving time
        self.env.flush_all()

    def limit(self, per_minute=0, per_hour=0):
        params = self.env["ir.config_parameter"].sudo()
        params.set_param("ai_mcp.turns_per_minute", per_minute)
        params.set_param("ai_mcp.turns_per_hour", per_hour)
        self.env.flush_all()

    def at(self, seconds):
        """Sets the clock `seconds` after T0."""
        self.now = T0 + timedelta(seconds=seconds)

    def user_messages(self):
        self.env.invalidate_all()
        return self.env["ai.message"].search(
            [("conversation_id.user_id", "=", self.user.id), ("role", "=", "user")], order="id"
        )

    def pin(self, *seconds):
        """Stores the user's messages, oldest first, as sent `seconds` after T0."""
        messages = self.user_messages()
        self.assertEqual(len(messages), len(seconds), messages.mapped("content"))
        self.env.flush_all()
        for message, offset in zip(messages, seconds, strict=True):
            self.env.cr.execute(
                "UPDATE ai_message SET create_date = %s WHERE id = %s", (T0 + timedelta(seconds=offset), message.id)
            )
        self.env.invalidate_all()


@tagged("post_install", "-at_install")
class TestChatPace(PaceMixin, ChatCase):
    def setUp(self):
        super().setUp()
        self.set_up_pace()
        self.login(self.user)

    def answered(self, message, **body):
        self.llm.queue(Turn(text=f"Answer to {message}."))
        response, events = self.send(message, **body)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(text_of(events), f"Answer to {message}.")
        return events[0].data["conversation_id"]

    def refused(self, message, **body):
        requests = len(self.llm.requests)
        response = self.post("/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": message, **body})
        self.assertEqual(response.status_code, 429, response.text)
        self.assertEqual(len(self.llm.requests), requests, "the model is not asked")
        return response

    def test_under_the_limit_messages_are_answered_past_it_refused_until_a_minute_went_by(self):
        self.limit(per_minute=2)
        conversation_id = self.answered("one")
        self.answered("two", conversation_id=conversation_id)
        self.pin(0, 10)
        self.at(20)

        response = self.refused("three", conversation_id=conversation_id)
        error = response.json()["error"]
        self.assertEqual(error["code"], "PACE_LIMITED")
        # 14:03:12 UTC is 22:03:12 in Shanghai
        self.assertEqual(
            error["message"],
            "You have sent 2 messages in the last minute, the limit set by your administrator. "
            "You can send the next one at 22:03:12.",
        )
        self.assertEqual((error["window"], error["limit"], error["retry_after"]), ("minute", 2, 40))
        self.assertEqual(response.headers["Retry-After"], "40")
        self.refused("three, a new conversation")
        self.assertEqual(self.user_messages().mapped("content"), ["one", "two"], "a refused message is not stored")
        self.assertEqual(self.env["ai.conversation"].search_count([("user_id", "=", self.user.id)]), 1)
        self.assertEqual(self.conversation(conversation_id).state, "idle")

        self.at(59)
        self.refused("three", conversation_id=conversation_id)
        self.at(60)  # the first message left the minute; the refused ones never counted
        self.answered("three", conversation_id=conversation_id)

    def test_the_hourly_limit_counts_the_last_hour(self):
        self.limit(per_minute=5, per_hour=3)
        conversation_id = self.answered("one")
        self.answered("two", conversation_id=conversation_id)
        self.answered("three")
        self.pin(0, 600, 1200)
        self.at(1300)
        error = self.refused("four").json()["error"]
        self.assertEqual(error["code"], "PACE_LIMITED")
        self.assertEqual(
            error["message"],
            "You have sent 3 messages in the last hour, the limit set by your administrator. "
            "You can send the next one at 23:02:12.",
        )
        self.at(3599)
        self.refused("four")
        self.at(3600)
        self.answered("four", conversation_id=conversation_id)

    def test_without_limits_nothing_is_counted(self):
        for message in ("one", "two", "three"):
            self.answered(message)
        self.pin(0, 0, 0)
        self.answered("four")

    def test_a_start_sent_again_is_one_message(self):
        self.limit(per_minute=2)
        conversation_id = self.answered("one", request_key="pace-key-one")
        # the browser sends the same start again (it could not tell the first was stored)
        again = self.post(
            "/ai_mcp/chat/stream", {"assistant_id": self.assistant.id, "message": "one", "request_key": "pace-key-one"}
        )
        self.assertEqual(again.status_code, 409, again.text)
        self.assertEqual(again.json()["error"]["code"], "ALREADY_RECEIVED")
        self.pin(0)
        self.at(1)
        self.answered("two", conversation_id=conversation_id, request_key="pace-key-two")
        self.pin(0, 1)
        self.at(2)
        # with the limit reached, a start sent again is still told where its answer is
        again = self.post(
            "/ai_mcp/chat/stream",
            {
                "assistant_id": self.assistant.id,
                "conversation_id": conversation_id,
                "message": "two",
                "request_key": "pace-key-two",
            },
        )
        self.assertEqual(again.status_code, 409, again.text)
        self.assertEqual(again.json()["error"]["conversation_id"], conversation_id)
        self.assertEqual(self.user_messages().mapped("content"), ["one", "two"])

    def test_answering_an_approval_or_continue_is_no_new_message(self):
        self.limit(per_minute=2)
        self.llm.queue(Turn(tool_calls=(ToolCall("weather", {"city": "Paris"}, id="call_weather"),)))
        _response, events = self.send("Weather in Paris?")
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual(events[-1].event, "approval_required")
        self.pin(0)
        self.at(1)
        self.llm.queue(Turn(text="21.5 °C."))
        response, resumed = self.resume(conversation_id, approvals={"call_weather": True})
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(text_of(resumed), "21.5 °C.")

        self.assistant.max_rounds = 2
        self.llm.queue(Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),)))
        _response, events = self.send("Add 2 and 3, then more.", conversation_id=conversation_id)
        self.assertEqual(events[-1].event, "confirm_continue")
        self.pin(0, 2)
        self.at(3)
        # the limit is reached: a new message is refused, the answer to "continue?" is not
        self.assertEqual(self.refused("more").json()["error"]["code"], "PACE_LIMITED")
        self.llm.queue(Turn(text="It is 5."))
        response, resumed = self.resume(conversation_id, go_on=False)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(text_of(resumed), "It is 5.")
        self.assertEqual(self.user_messages().mapped("content"), ["Weather in Paris?", "Add 2 and 3, then more."])


@tagged("post_install", "-at_install")
class TestDiscussPace(PaceMixin, DiscussCase):
    def setUp(self):
        super().setUp()
        self.set_up_pace()

    def test_a_message_past_the_limit_is_answered_by_the_assistant_saying_when(self):
        self.limit(per_minute=2)
        self.llm.queue(Turn(text="Hello."), Turn(text="Hello again."))
        self.say("hi")
        self.assertIn("Hello again.", str(self.say("hi again")[-1].body))
        self.pin(0, 10)
        self.at(30)
        replies = self.say("and again")
        self.assertEqual(len(replies), 3)
        self.assertIn(
            "You have sent 2 messages in the last minute, the limit set by your administrator. "
            "You can send the next one at 22:03:12.",
            str(replies[-1].body),
        )
        self.assertEqual(self.user_messages().mapped("content"), ["hi", "hi again"], "the refused message is no turn")
        posted = self.env["mail.message"].search(
            [
                ("model", "=", "discuss.channel"),
                ("res_id", "=", self.channel.id),
                ("author_id", "=", self.user.partner_id.id),
            ],
            order="id",
        )
        self.assertEqual(
            [html2plaintext(body) for body in posted.mapped("body")],
            ["hi", "hi again", "and again"],
            "the user's message stays in the chat",
        )

        self.at(60)
        self.llm.queue(Turn(text="Here again."))
        self.assertIn("Here again.", str(self.say("and again")[-1].body))


@tagged("post_install", "-at_install")
class TestPaceSettings(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ai_user = new_test_user(cls.env, "pace_user", groups=AI_USER_GROUPS)
        cls.ai_manager = new_test_user(cls.env, "pace_manager", groups="base.group_user,ai_mcp.group_ai_manager")
        cls.admin = new_test_user(cls.env, "pace_admin", groups="base.group_user,base.group_system")

    def params(self):
        params = self.env["ir.config_parameter"].sudo()
        return params.get_param("ai_mcp.turns_per_minute"), params.get_param("ai_mcp.turns_per_hour")

    def test_the_limits_are_off_until_an_administrator_sets_them(self):
        self.assertEqual(self.params(), (False, False))
        self.assertFalse(self.env["ai.conversation"]._pace_limits().any)
        settings = self.env["res.config.settings"].with_user(self.admin).create({})
        self.assertEqual((settings.ai_mcp_turns_per_minute, settings.ai_mcp_turns_per_hour), (0, 0))
        settings.write({"ai_mcp_turns_per_minute": 10, "ai_mcp_turns_per_hour": 200})
        settings.execute()
        self.assertEqual(self.params(), ("10", "200"))
        limits = self.env["ai.conversation"]._pace_limits()
        self.assertEqual((limits.per_minute, limits.per_hour), (10, 200))
        shown = self.env["res.config.settings"].with_user(self.admin).create({})
        self.assertEqual((shown.ai_mcp_turns_per_minute, shown.ai_mcp_turns_per_hour), (10, 200))

        settings = self.env["res.config.settings"].with_user(self.admin).create({"ai_mcp_turns_per_minute": 0})
        settings.execute()
        self.assertEqual(self.params(), (False, "200"), "0 is no limit")

    def test_an_administrator_finds_them_in_the_ai_section_of_settings(self):
        views = self.env["res.config.settings"].with_user(self.admin).get_views([(False, "form")])
        arch = views["views"]["form"]["arch"]
        self.assertIn('name="ai_mcp"', arch)
        self.assertIn('name="ai_mcp_turns_per_minute"', arch)
        self.assertIn('name="ai_mcp_turns_per_hour"', arch)
        menu = self.env.ref("ai_mcp.menu_ai_settings").id
        self.assertIn(menu, self.env["ir.ui.menu"].with_user(self.admin)._visible_menu_ids())
        self.assertNotIn(menu, self.env["ir.ui.menu"].with_user(self.ai_manager)._visible_menu_ids())

    def test_users_and_managers_without_settings_rights_cannot_change_them(self):
        for user in (self.ai_user, self.ai_manager):
            with self.subTest(user=user.login), self.assertRaises(AccessError):
                self.env["res.config.settings"].with_user(user).create({"ai_mcp_turns_per_minute": 1000})
            with self.subTest(user=user.login), self.assertRaises(AccessError):
                self.env["ir.config_parameter"].with_user(user).set_param("ai_mcp.turns_per_minute", 1000)
        self.assertEqual(self.params(), (False, False))

    def test_a_negative_limit_is_refused(self):
        with self.assertRaises(ValidationError) as refused:
            self.env["res.config.settings"].with_user(self.admin).create({"ai_mcp_turns_per_hour": -1})
        self.assertIn("cannot be negative", str(refused.exception))
