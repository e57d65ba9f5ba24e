"""Two requests remembering the same approval at once, each in a transaction of its own, as when an
app's calls that waited for one dialog are sent again together: both go on, one row is stored, and
no query fails in the log. Real PostgreSQL connections, outside the test's own transaction."""

from odoo import SUPERUSER_ID, api
from odoo.sql_db import db_connect
from odoo.tests import TransactionCase, tagged

APP_URI = "ui://race/app.html"


@tagged("post_install", "-at_install")
class TestApprovalRace(TransactionCase):
    def setUp(self):
        super().setUp()
        self.connection = db_connect(self.env.cr.dbname)
        with self.connection.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            provider = env["ai.provider"].create({"name": "Race provider", "base_url": "http://127.0.0.1:9/v1"})
            assistant = env["ai.assistant"].create({"name": "Race assistant", "provider_id": provider.id})
            server = env["mcp.server"].create(
                {"name": "Race server", "scope": "system", "url": "http://127.0.0.1:9/mcp"}
            )
            tool = env["mcp.tool"].create({"name": "poll", "server_id": server.id})
            conversation = env["ai.conversation"].create({"assistant_id": assistant.id})
            cr.commit()
            self.ids = {"provider": provider.id, "server": server.id, "conversation": conversation.id, "tool": tool.id}
        self.addCleanup(self._drop)

    def _drop(self):
        with self.connection.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            env["ai.conversation"].browse(self.ids["conversation"]).unlink()
            env["mcp.server"].browse(self.ids["server"]).unlink()
            env["ai.assistant"].search([("provider_id", "=", self.ids["provider"])]).unlink()
            env["ai.provider"].browse(self.ids["provider"]).unlink()
            cr.commit()

    def remember(self, cr):
        env = api.Environment(cr, SUPERUSER_ID, {})
        conversation = env["ai.conversation"].browse(self.ids["conversation"])
        tool = env["mcp.tool"].browse(self.ids["tool"])
        env["ai.conversation.approval"]._remember(conversation, tool, "app", APP_URI)

    def test_two_requests_remembering_the_same_approval_at_once_both_go_on(self):
        with self.connection.cursor() as first, self.connection.cursor() as second:
            # the second request's snapshot is taken before the first one stores the row
            second.execute("SELECT 1")
            self.remember(first)
            first.commit()
            with self.assertNoLogs("odoo.sql_db", "ERROR"):
                self.remember(second)
            # its transaction is still usable: the call it was made for goes on
            second.execute(
                "SELECT count(*) FROM ai_conversation_approval WHERE conversation_id = %s", [self.ids["conversation"]]
            )
            self.assertEqual(second.fetchone()[0], 0, "the row the first request stored is not in this snapshot")
            second.commit()
        with self.connection.cursor() as cr:
            cr.execute(
                "SELECT scope, app_uri FROM ai_conversation_approval WHERE conversation_id = %s",
                [self.ids["conversation"]],
            )
            self.assertEqual(cr.fetchall(), [("app", APP_URI)])
