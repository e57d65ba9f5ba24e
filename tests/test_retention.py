"""Retention of conversations (Settings > AI, per company): the cron removes the idle
conversations without activity for longer than their company keeps them, in batches, with their
messages and events; their usage rows stay, so the reports keep what they cost. The clock is
injected: every date is set relative to the `now` the cron is given."""

from datetime import datetime, timedelta

from odoo import SUPERUSER_ID, api, fields, sql_db
from odoo.exceptions import ValidationError
from odoo.tests import TransactionCase, new_test_user, tagged

NOW = datetime(2026, 6, 30, 12, 0)


@tagged("post_install", "-at_install")
class TestRetention(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True))
        cls.company_a = cls.env["res.company"].create({"name": "Keeps 30 days", "ai_conversation_retention_days": 30})
        cls.company_b = cls.env["res.company"].create({"name": "Keeps 90 days", "ai_conversation_retention_days": 90})
        groups = "base.group_user,ai_mcp.group_ai_user"
        cls.user_a = new_test_user(cls.env, "keep_a", groups=groups, company_id=cls.company_a.id)
        cls.user_b = new_test_user(cls.env, "keep_b", groups=groups, company_id=cls.company_b.id)
        provider = cls.env["ai.provider"].create(
            {
                "name": "Nowhere",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key": "sk-x",
                "default_model": "m",
                "company_id": False,
            }
        )
        cls.assistant = cls.env["ai.assistant"].create(
            {"name": "Keeper", "provider_id": provider.id, "company_id": False}
        )

    def conversation(self, user, idle_days, state="idle"):
        """A conversation of `user` in their company with a message and an event, all last touched
        `idle_days` ago, and the usage row of its answer."""
        conversation = self.env["ai.conversation"].create(
            {
                "name": f"{idle_days} days",
                "assistant_id": self.assistant.id,
                "user_id": user.id,
                "company_id": user.company_id.id,
            }
        )
        message = self.env["ai.message"].create({"conversation_id": conversation.id, "role": "user", "content": "hi"})
        event = self.env["ai.conversation.event"].create(
            {"conversation_id": conversation.id, "seq": 1, "type": "done", "payload": {"rounds": 1}}
        )
        usage = self.env["ai.usage"].create(
            {
                "user_id": user.id,
                "company_id": user.company_id.id,
                "currency_id": user.company_id.currency_id.id,
                "conversation_id": conversation.id,
                "total_tokens": 100,
                "cost": 0.25,
            }
        )
        self.env.flush_all()
        at = NOW - timedelta(days=idle_days)
        self.env.cr.execute(
            "UPDATE ai_conversation SET write_date = %s, state = %s WHERE id = %s", (at, state, conversation.id)
        )
        self.env.cr.execute("UPDATE ai_message SET create_date = %s WHERE id = %s", (at, message.id))
        self.env.cr.execute("UPDATE ai_conversation_event SET create_date = %s WHERE id = %s", (at, event.id))
        self.env.invalidate_all()
        return conversation, usage

    def gc(self, **options):
        return self.env["ai.conversation"]._gc_conversations(now=NOW, **options)

    def test_each_company_keeps_its_conversations_as_long_as_it_says(self):
        old_a, usage_a = self.conversation(self.user_a, 31)
        recent_a, _usage = self.conversation(self.user_a, 29)
        same_age_b, _usage = self.conversation(self.user_b, 31)
        old_b, _usage = self.conversation(self.user_b, 91)
        self.assertEqual(self.gc(), 2)
        self.assertFalse(old_a.exists())
        self.assertFalse(old_b.exists())
        self.assertTrue(recent_a.exists())
        self.assertTrue(same_age_b.exists(), "company B keeps 90 days")
        self.assertFalse(self.env["ai.message"].search([("conversation_id", "=", old_a.id)]))
        self.assertFalse(self.env["ai.conversation.event"].search([("conversation_id", "=", old_a.id)]))
        # what it cost stays in the reports
        self.assertTrue(usage_a.exists())
        self.assertFalse(usage_a.conversation_id)
        self.assertEqual((usage_a.total_tokens, usage_a.cost), (100, 0.25))

    def test_a_conversation_held_before_companies_follows_its_users_company(self):
        kept_by_b, _usage = self.conversation(self.user_b, 40)
        shared_a, _usage = self.conversation(self.user_a, 40)
        shared_b, _usage = self.conversation(self.user_b, 40)
        # as the update left them: no company, their last activity untouched
        self.env.cr.execute(
            "UPDATE ai_conversation SET company_id = NULL WHERE id IN %s", ((shared_a.id, shared_b.id),)
        )
        self.env.invalidate_all()
        self.assertEqual(self.gc(), 1)
        self.assertFalse(shared_a.exists(), "its user's company A keeps 30 days")
        self.assertTrue(shared_b.exists() and kept_by_b.exists(), "company B keeps 90 days")

    def test_a_recent_message_or_event_is_activity(self):
        with_message, _usage = self.conversation(self.user_a, 40)
        with_event, _usage = self.conversation(self.user_a, 40)
        self.env.cr.execute(
            "UPDATE ai_message SET create_date = %s WHERE conversation_id = %s",
            (NOW - timedelta(days=2), with_message.id),
        )
        self.env.cr.execute(
            "UPDATE ai_conversation_event SET create_date = %s WHERE conversation_id = %s",
            (NOW - timedelta(days=2), with_event.id),
        )
        self.assertEqual(self.gc(), 0)
        self.assertTrue((with_message | with_event).exists())

    def test_answering_or_waiting_conversations_stay(self):
        states = ("running", "awaiting_approval", "awaiting_confirmation", "awaiting_auth")
        waiting = [self.conversation(self.user_a, 400, state=state)[0] for state in states]
        self.assertEqual(self.gc(), 0)
        self.assertEqual(len(self.env["ai.conversation"].browse([c.id for c in waiting]).exists()), 4)

    def test_zero_keeps_forever(self):
        self.company_a.ai_conversation_retention_days = 0
        kept, _usage = self.conversation(self.user_a, 5000)
        self.assertEqual(self.gc(), 0)
        self.assertTrue(kept.exists())

    def test_batches_go_on_in_the_next_run_the_cron_is_told_to_make(self):
        old = [self.conversation(self.user_a, 60)[0] for _i in range(5)]
        cron = self.env.ref("ai_mcp.ir_cron_ai_conversation_gc")
        progress = self.env["ir.cron.progress"].create({"cron_id": cron.id, "remaining": 0, "done": 0})
        Conversation = self.env["ai.conversation"].with_context(ir_cron_progress_id=progress.id, cron_id=cron.id)
        self.assertEqual(Conversation._gc_conversations(batch=2, batches=1, now=NOW), 2)
        self.assertEqual((progress.done, progress.remaining), (2, 3), "the cron runs again for the rest")
        self.assertEqual(Conversation._gc_conversations(batch=2, batches=2, now=NOW), 3)
        self.assertEqual((progress.done, progress.remaining), (3, 0))
        self.assertFalse(self.env["ai.conversation"].browse([c.id for c in old]).exists())

    def test_the_daily_cron_runs_the_retention(self):
        # dated before NOW, which is in the past: at least as old when the cron reads the clock
        old, _usage = self.conversation(self.user_a, 60)
        kept, _usage = self.conversation(self.user_b, 60)
        self.company_b.ai_conversation_retention_days = 0
        cron = self.env.ref("ai_mcp.ir_cron_ai_conversation_gc")
        self.assertEqual((cron.interval_number, cron.interval_type), (1, "days"))
        # what the scheduler runs, in this transaction (19's method_direct_trigger opens its own)
        cron.ir_actions_server_id.run()
        self.assertFalse(old.exists())
        self.assertTrue(kept.exists())

    def test_a_negative_retention_is_refused(self):
        with self.assertRaisesRegex(ValidationError, "negative number of days"):
            self.company_a.ai_conversation_retention_days = -1

    def test_the_setting_is_the_current_companys(self):
        settings = self.env["res.config.settings"].with_company(self.company_b).create({})
        self.assertEqual(settings.ai_conversation_retention_days, 90)
        settings.ai_conversation_retention_days = 45
        settings.execute()
        self.assertEqual(self.company_b.ai_conversation_retention_days, 45)
        self.assertEqual(self.company_a.ai_conversation_retention_days, 30)


@tagged("post_install", "-at_install")
class TestRetentionConnections(TransactionCase):
    """The cron and a turn on connections of their own, as in a running Odoo: what they do is
    committed, and seen by the other only once committed. The records are made and removed on
    those connections (the test's own transaction would hide them)."""

    def setUp(self):
        super().setUp()
        self.connection = sql_db.db_connect(self.env.cr.dbname)
        self.now = fields.Datetime.now()
        with self.connection.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {"tracking_disable": True})
            company = env.ref("base.main_company")
            self.kept_days = company.ai_conversation_retention_days
            company.ai_conversation_retention_days = 30
            provider = env["ai.provider"].create(
                {"name": "Nowhere", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x", "default_model": "m"}
            )
            assistant = env["ai.assistant"].create({"name": "Keeper", "provider_id": provider.id})
            conversations = env["ai.conversation"].create(
                [
                    {"name": f"old {i}", "assistant_id": assistant.id, "user_id": env.ref("base.user_admin").id}
                    for i in range(3)
                ]
            )
            env.flush_all()
            cr.execute(
                "UPDATE ai_conversation SET write_date = %s WHERE id IN %s",
                (self.now - timedelta(days=60), tuple(conversations.ids)),
            )
            self.conversation_ids, self.provider_id, self.assistant_id = conversations.ids, provider.id, assistant.id
        self.addCleanup(self._remove)

    def _remove(self):
        with self.connection.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            env["ai.conversation"].browse(self.conversation_ids).exists().unlink()
            env["ai.assistant"].browse(self.assistant_id).unlink()
            env["ai.provider"].browse(self.provider_id).unlink()
            env.ref("base.main_company").ai_conversation_retention_days = self.kept_days

    def remaining(self):
        with self.connection.cursor() as cr:
            cr.execute("SELECT id FROM ai_conversation WHERE id IN %s ORDER BY id", (tuple(self.conversation_ids),))
            return [row[0] for row in cr.fetchall()]

    def test_a_conversation_a_turn_holds_is_skipped_and_each_batch_is_committed(self):
        held = self.conversation_ids[0]
        with self.connection.cursor() as turn, self.connection.cursor() as cron:
            # a turn claiming the conversation holds its row (models/conversation/claim.py)
            turn.execute("SELECT state FROM ai_conversation WHERE id = %s FOR UPDATE NOWAIT", (held,))
            env = api.Environment(cron, SUPERUSER_ID, {})
            removed = env["ai.conversation"]._gc_conversations(batch=1, batches=5, now=self.now, commit=True)
            self.assertEqual(removed, 2, "the held conversation is skipped, not waited for")
            # seen gone by another connection while the cron's transaction is still open: committed
            self.assertEqual(self.remaining(), [held])
            cron.rollback()
            turn.rollback()
        self.assertEqual(self.remaining(), [held], "each batch stood on its own")
        # once the turn let go, the next run removes it
        with self.connection.cursor() as cron:
            env = api.Environment(cron, SUPERUSER_ID, {})
            self.assertEqual(env["ai.conversation"]._gc_conversations(now=self.now, commit=True), 1)
        self.assertEqual(self.remaining(), [])
