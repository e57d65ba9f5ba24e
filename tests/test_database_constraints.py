"""The unique constraints are real PostgreSQL constraints on every series the addon runs on (Odoo 19
no longer reads `_sql_constraints`: odoo_compat.Constraint declares them for both)."""

from psycopg2 import IntegrityError

from odoo.tests import tagged
from odoo.tools import mute_logger

from .common import AiMcpCase

UNIQUE = {
    "mcp_tool_server_name_uniq": ("mcp_tool", "UNIQUE (server_id, name)"),
    "ai_tool_preset_assistant_tool_uniq": ("ai_tool_preset", "UNIQUE (assistant_id, tool_id)"),
    "ai_conversation_event_conversation_seq_uniq": ("ai_conversation_event", "UNIQUE (conversation_id, seq)"),
    "mcp_oauth_pending_state_hash_uniq": ("mcp_oauth_pending", "UNIQUE (state_hash)"),
    "ai_provider_model_provider_name_uniq": ("ai_provider_model", "UNIQUE (provider_id, name)"),
}


@tagged("post_install", "-at_install")
class TestDatabaseConstraints(AiMcpCase):
    def test_each_unique_constraint_is_in_postgresql(self):
        self.env.cr.execute(
            """SELECT c.conname, t.relname, pg_get_constraintdef(c.oid)
                 FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
                WHERE c.conname = ANY(%s)""",
            [list(UNIQUE)],
        )
        found = {name: (table, definition) for name, table, definition in self.env.cr.fetchall()}
        self.assertEqual(found, UNIQUE)

    def test_a_second_tool_of_the_same_name_on_a_server_is_refused_by_the_database(self):
        server = self.system_server()
        self.Tool.create({"server_id": server.id, "name": "echo"})
        with mute_logger("odoo.sql_db"), self.assertRaises(IntegrityError), self.env.cr.savepoint():
            self.Tool.create({"server_id": server.id, "name": "echo"})
            self.env.flush_all()
        self.assertEqual(self.Tool.search_count([("server_id", "=", server.id), ("name", "=", "echo")]), 1)
