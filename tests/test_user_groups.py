"""'AI User' makes an internal user, as Odoo's own application user roles do, and the
18.0.1.1.0 migration keeps portal users out of that role instead of making them internal too."""

from odoo import Command
from odoo.tests import HttpCase, tagged

from odoo.addons.ai_mcp.odoo_compat import USER_GROUPS

from .migration_script import migration_module


@tagged("post_install", "-at_install")
class TestAiUserIsInternal(HttpCase):
    def create_user(self, login, groups):
        # as an integration or an import sets groups: only the ones named, no default template
        return self.env["res.users"].create(
            {"name": login, "login": login, "password": f"{login}-pw-1234", USER_GROUPS: [Command.set(groups.ids)]}
        )

    def test_a_user_given_only_ai_user_logs_in_and_opens_the_assistant(self):
        user = self.create_user("only_ai_user", self.env.ref("ai_mcp.group_ai_user"))
        self.assertTrue(user.has_group("base.group_user"))
        self.assertFalse(user.share)

        self.authenticate("only_ai_user", "only_ai_user-pw-1234")
        action = self.make_jsonrpc_request("/web/action/load", {"action_id": "ai_mcp.action_ai_chat"})
        self.assertEqual(action["tag"], "ai_mcp.chat_action")
        assistants = self.make_jsonrpc_request("/ai_mcp/assistants", {})
        self.assertIsInstance(assistants, list)
        page = self.url_open("/odoo/action-ai_mcp.action_ai_chat")
        self.assertEqual(page.status_code, 200)
        self.assertNotIn("/web/login", page.url)

    def test_ai_manager_keeps_implying_ai_user(self):
        manager = self.create_user("only_ai_manager", self.env.ref("ai_mcp.group_ai_manager"))
        self.assertTrue(manager.has_group("ai_mcp.group_ai_user"))
        self.assertTrue(manager.has_group("base.group_user"))


@tagged("post_install", "-at_install")
class TestMigrationKeepsPortalUsersPortal(HttpCase):
    def migrate(self):
        module = migration_module("18.0.1.1.0", "pre-migrate")
        with self.assertLogs(module.__name__, "WARNING") as logs:
            module.migrate(self.env.cr, "18.0.1.0.0")
        return logs.output

    def test_portal_users_lose_the_role_and_internal_users_keep_it(self):
        ai_user = self.env.ref("ai_mcp.group_ai_user")
        portal = self.env["res.users"].create(
            {"name": "Portal", "login": "portal_ai", USER_GROUPS: [Command.set(self.env.ref("base.group_portal").ids)]}
        )
        internal = self.create_internal("internal_ai")
        # as a database of 18.0.1.0.0 may hold it: the role given to a portal user directly
        self.env.cr.execute("INSERT INTO res_groups_users_rel (gid, uid) VALUES (%s, %s)", (ai_user.id, portal.id))
        self.env.invalidate_all()

        output = self.migrate()
        self.env.invalidate_all()
        self.assertFalse(portal.has_group("ai_mcp.group_ai_user"))
        self.assertTrue(portal.has_group("base.group_portal"))
        self.assertTrue(internal.has_group("ai_mcp.group_ai_user"))
        self.assertIn(f"[{portal.id}]", output[0])

    def create_internal(self, login):
        groups = self.env.ref("ai_mcp.group_ai_user") | self.env.ref("base.group_user")
        return self.env["res.users"].create({"name": login, "login": login, USER_GROUPS: [Command.set(groups.ids)]})
