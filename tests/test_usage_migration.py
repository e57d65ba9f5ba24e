"""migrations/1.9.0/post-past_usage.py on the database of this test: answers given before usage rows
existed get one row each, a turn already recorded gets none, and running it again adds nothing."""

from datetime import datetime

from odoo.tests import TransactionCase, new_test_user, tagged

from .migration_script import migration_module


def migrate(cr):
    migration_module("1.9.0", "post-past_usage").migrate(cr, "1.8.0")


@tagged("post_install", "-at_install")
class TestUsageMigration(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True))
        cls.user = new_test_user(cls.env, "migrated_user", groups="base.group_user,ai_mcp.group_ai_user")
        cls.provider = cls.env["ai.provider"].create(
            {"name": "Past", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x", "default_model": "old-model"}
        )
        cls.assistant = cls.env["ai.assistant"].create({"name": "Past helper", "provider_id": cls.provider.id})

    def answered(self, usage, asked_at, answered_at, rounds=2):
        conversation = self.env["ai.conversation"].create({"assistant_id": self.assistant.id, "user_id": self.user.id})
        Message = self.env["ai.message"]
        asked = Message.create({"conversation_id": conversation.id, "role": "user", "content": "?"})
        answer = Message.create(
            {"conversation_id": conversation.id, "role": "assistant", "content": "!", "usage": usage, "rounds": rounds}
        )
        self.env.flush_all()
        self.env.cr.execute("UPDATE ai_message SET create_date = %s WHERE id = %s", (asked_at, asked.id))
        self.env.cr.execute("UPDATE ai_message SET create_date = %s WHERE id = %s", (answered_at, answer.id))
        self.env.invalidate_all()
        return conversation, answer

    def rows(self, conversation):
        return self.env["ai.usage"].search([("conversation_id", "=", conversation.id)])

    def test_each_past_answer_gets_its_row_once(self):
        past, answer = self.answered(
            {"input_tokens": 120, "output_tokens": 9, "total_tokens": 129},
            datetime(2025, 1, 3, 10, 0),
            datetime(2025, 1, 3, 10, 1),
        )
        nothing, _answer = self.answered({}, datetime(2025, 1, 4), datetime(2025, 1, 4, 0, 1))
        migrate(self.env.cr)
        self.env.invalidate_all()
        row = self.rows(past)
        self.assertEqual(len(row), 1)
        self.assertEqual(
            (row.date, row.user_id, row.company_id, row.assistant_id, row.provider_id, row.model_name, row.round),
            (answer.create_date, self.user, self.user.company_id, self.assistant, self.provider, "old-model", 2),
        )
        self.assertEqual((row.input_tokens, row.output_tokens, row.total_tokens, row.cost), (120, 9, 129, 0))
        self.assertEqual(row.currency_id, self.user.company_id.currency_id)
        self.assertFalse(self.rows(nothing), "an answer without usage counts nothing")
        self.assertEqual(answer.usage, {"input_tokens": 120, "output_tokens": 9, "total_tokens": 129})
        migrate(self.env.cr)
        self.env.invalidate_all()
        self.assertEqual(len(self.rows(past)), 1, "the update run again adds nothing")

    def test_a_turn_recorded_as_it_ran_is_not_counted_twice(self):
        recorded, _answer = self.answered(
            {"input_tokens": 500, "output_tokens": 50}, datetime(2026, 11, 1, 9, 0), datetime(2026, 11, 1, 9, 2)
        )
        self.env["ai.usage"].create(
            {
                "date": datetime(2026, 11, 1, 9, 1),
                "user_id": self.user.id,
                "company_id": self.user.company_id.id,
                "currency_id": self.user.company_id.currency_id.id,
                "conversation_id": recorded.id,
                "input_tokens": 500,
                "output_tokens": 50,
                "total_tokens": 550,
                "cost": 0.01,
            }
        )
        migrate(self.env.cr)
        self.env.invalidate_all()
        self.assertEqual(len(self.rows(recorded)), 1)

    def test_odd_counts_are_read_as_none(self):
        odd, _answer = self.answered(
            {"input_tokens": "many", "output_tokens": -4, "total_tokens": 7},
            datetime(2025, 2, 1),
            datetime(2025, 2, 1, 0, 1),
        )
        migrate(self.env.cr)
        self.env.invalidate_all()
        self.assertEqual([(r.input_tokens, r.output_tokens, r.total_tokens) for r in self.rows(odd)], [(0, 0, 7)])
