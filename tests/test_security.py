"""Access rights and record rules, each tested as the user it restricts."""

from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.ai_mcp.odoo_compat import USER_GROUPS
from odoo.addons.ai_mcp.services.errors import ConfigError

from .common import PUBLIC_URL, AiMcpCase

# AccessError and ValidationError (both UserErrors) say "you may not"; which one depends on where Odoo stops it
REFUSED = UserError


@tagged("post_install", "-at_install")
class TestSecurity(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.service1 = cls.service_of(cls.user1, "Service 1", members=[cls.member])
        cls.service2 = cls.service_of(cls.user2, "Service 2")
        cls.mine = cls.user_server(cls.service1, "User 1 server")
        cls.mine_tool = cls.tool(cls.mine, "mine_tool")
        cls.system = cls.system_server("System server")
        cls.system_tool = cls.tool(cls.system, "system_tool")
        cls.provider = cls.env["ai.provider"].create({"name": "Provider", "api_key": "sk-provider"})
        cls.group_x = cls.env["res.groups"].create({"name": "Group X"})
        cls.open_assistant = cls.env["ai.assistant"].create({"name": "Open", "provider_id": cls.provider.id})
        cls.restricted_assistant = cls.env["ai.assistant"].create(
            {"name": "Restricted", "provider_id": cls.provider.id, "group_ids": [(6, 0, cls.group_x.ids)]}
        )

    def as_(self, user, record):
        return record.with_user(user)

    def visible(self, user, candidates):
        """Which of `candidates` `user` finds by searching (scoped: demo data may exist too)."""
        Model = candidates.env[candidates._name].with_context(active_test=False).with_user(user)
        return Model.search([("id", "in", candidates.ids)])

    # -- groups ----------------------------------------------------------------------------------

    def test_groups(self):
        self.assertTrue(self.manager.has_group("ai_mcp.group_ai_user"), "managers are AI users")
        self.assertTrue(self.admin.has_group("ai_mcp.group_ai_manager"), "system administrators are AI managers")
        self.assertFalse(self.outsider.has_group("ai_mcp.group_ai_user"), "internal users are not AI users by default")

    # -- servers ---------------------------------------------------------------------------------

    def test_user_servers_are_visible_to_their_owner_and_managers_only(self):
        servers = self.mine | self.system
        self.assertEqual(self.visible(self.user1, servers), self.mine)
        self.assertFalse(self.visible(self.user2, servers))
        self.assertFalse(self.visible(self.member, servers), "members use the tools, they do not see the servers")
        self.assertEqual(self.visible(self.manager, servers), servers)
        for user in (self.user2, self.member):
            with self.assertRaises(AccessError, msg=user.login):
                self.as_(user, self.mine).read(["name"])
        with self.assertRaises(AccessError):
            self.Server.with_user(self.outsider).search([])

    def test_users_do_not_see_system_servers(self):
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.system).read(["name"])
        self.assertFalse(self.Server.with_user(self.user1).search([("scope", "=", "system")]))

    def test_user_servers_are_editable_by_their_owner_and_managers_only(self):
        self.as_(self.user1, self.mine).write({"description": "by the owner"})
        self.as_(self.manager, self.mine).write({"description": "by a manager"})
        for user in (self.user2, self.member):
            with self.assertRaises(AccessError):
                self.as_(user, self.mine).write({"description": "hijack"})
            with self.assertRaises(AccessError):
                self.as_(user, self.mine).unlink()
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.system).write({"description": "no"})

    def test_users_cannot_create_system_servers(self):
        Server = self.Server.with_user(self.user1)
        self.assertEqual(Server.default_get(["scope"])["scope"], "user")
        self.assertEqual(self.Server.with_user(self.manager).default_get(["scope"])["scope"], "system")
        with self.assertRaises(REFUSED):
            Server.create({"name": "sneaky", "scope": "system", "url": PUBLIC_URL})
        with self.assertRaises(REFUSED):
            self.as_(self.user1, self.mine).write({"scope": "system", "cloud_service_id": False})
        self.assertEqual(self.mine.scope, "user")

    def test_users_cannot_attach_servers_to_services_they_do_not_own(self):
        with self.assertRaises(REFUSED):
            self.Server.with_user(self.user1).create(
                {"name": "into 2", "scope": "user", "cloud_service_id": self.service2.id, "url": PUBLIC_URL}
            )
        with self.assertRaises(REFUSED):
            self.Server.with_user(self.member).create(
                {"name": "member's", "scope": "user", "cloud_service_id": self.service1.id, "url": PUBLIC_URL}
            )
        with self.assertRaises(REFUSED):
            self.as_(self.user1, self.mine).write({"cloud_service_id": self.service2.id})
        self.assertEqual(self.mine.cloud_service_id, self.service1)

    def test_owner_creates_servers_from_the_service(self):
        self.as_(self.user1, self.service1).write(
            {"user_mcp_server_ids": [(0, 0, {"name": "From the form", "url": "https://93.184.216.35/mcp"})]}
        )
        created = self.service1.user_mcp_server_ids.filtered(lambda s: s.name == "From the form")
        self.assertEqual((created.scope, created.owner_id), ("user", self.user1))

    def test_user_server_owner_follows_the_service(self):
        self.service1.owner_id = self.user2
        self.assertEqual(self.mine.owner_id, self.user2)
        self.assertEqual(self.mine_tool.owner_id, self.user2)

    # -- tools -----------------------------------------------------------------------------------

    def test_tools_follow_their_server(self):
        tools = self.mine_tool | self.system_tool
        self.assertEqual(self.visible(self.user1, tools), self.mine_tool)
        self.assertFalse(self.visible(self.user2, tools))
        self.assertEqual(self.visible(self.manager, tools), tools)
        self.as_(self.user1, self.mine_tool).write({"enabled": False})
        self.as_(self.user1, self.mine_tool).action_accept_change()
        for user in (self.user2, self.member):
            with self.assertRaises(AccessError):
                self.as_(user, self.mine_tool).write({"enabled": True})
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.system_tool).write({"enabled": False})
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.system_tool).action_accept_change()
        with self.assertRaises(REFUSED):
            self.as_(self.user1, self.mine_tool).write({"server_id": self.system.id})

    # -- cloud services --------------------------------------------------------------------------

    def test_cloud_services_are_read_by_owner_and_members_changed_by_owner(self):
        services = self.service1 | self.service2
        self.assertEqual(self.visible(self.user1, services), self.service1)
        self.assertEqual(self.visible(self.member, services), self.service1)
        self.assertEqual(self.visible(self.user2, services), self.service2)
        self.assertEqual(self.visible(self.manager, services), services)
        self.as_(self.member, self.service1).read(["name", "owner_id", "member_ids"])
        with self.assertRaises(AccessError):
            self.as_(self.user2, self.service1).read(["name"])

        self.as_(self.user1, self.service1).write({"name": "Renamed by owner"})
        with self.assertRaises(AccessError):
            self.as_(self.member, self.service1).write({"name": "member"})
        with self.assertRaises(AccessError):
            self.as_(self.member, self.service1).unlink()
        with self.assertRaises(AccessError):
            self.as_(self.user2, self.service1).write({"name": "stranger"})
        self.as_(self.manager, self.service1).write({"name": "manager"})

    def test_owner_cannot_hand_a_service_to_someone_else(self):
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.service1).write({"owner_id": self.user2.id})
        with self.assertRaises(AccessError):
            self.Service.with_user(self.user1).create({"name": "for 2", "owner_id": self.user2.id})

    # -- providers and assistants ----------------------------------------------------------------

    def test_users_cannot_read_providers(self):
        for user in (self.user1, self.member):
            with self.assertRaises(AccessError):
                self.as_(user, self.provider).read(["name"])
            with self.assertRaises(AccessError):
                self.env["ai.provider"].with_user(user).create({"name": "mine"})
        self.as_(self.manager, self.provider).write({"name": "Renamed"})

    def test_assistants_are_read_by_allowed_ai_users_only(self):
        assistants = self.open_assistant | self.restricted_assistant
        self.assertEqual(self.visible(self.user1, assistants), self.open_assistant)
        self.assertTrue(self.open_assistant._user_may_use(self.user1))
        self.assertFalse(self.restricted_assistant._user_may_use(self.user1))
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.restricted_assistant).read(["name"])
        self.user1[USER_GROUPS] = [(4, self.group_x.id)]
        self.assertEqual(self.visible(self.user1, assistants), assistants)
        self.assertTrue(self.restricted_assistant._user_may_use(self.user1))
        self.assertEqual(self.visible(self.manager, assistants), assistants)
        with self.assertRaises(AccessError):
            self.as_(self.user1, self.open_assistant).write({"name": "mine"})
        with self.assertRaises(AccessError):
            self.env["ai.assistant"].with_user(self.outsider).search([])
        self.assertFalse(self.open_assistant._user_may_use(self.outsider))

    # -- stdio -----------------------------------------------------------------------------------

    def stdio_values(self, **values):
        return {"name": "stdio", "transport": "stdio", "command": "/bin/true", **values}

    def test_stdio_needs_a_system_administrator(self):
        self.set_param("ai_mcp.allow_stdio", "True")
        with self.assertRaises(AccessError):
            self.Server.with_user(self.manager).create(self.stdio_values())
        with self.assertRaises(REFUSED):
            self.Server.with_user(self.user1).create(self.stdio_values(scope="user", cloud_service_id=self.service1.id))
        server = self.Server.with_user(self.admin).create(self.stdio_values())
        with self.assertRaises(AccessError):
            self.as_(self.manager, server).write({"command": "/bin/sh"})
        with self.assertRaises(AccessError):
            self.as_(self.manager, server).write({"env_vars": '{"A": "b"}'})
        with self.assertRaises(AccessError):
            self.as_(self.manager, self.system).write({"transport": "stdio", "command": "/bin/sh"})

    def test_stdio_needs_the_system_parameter(self):
        self.assertEqual(self.env["ir.config_parameter"].sudo().get_param("ai_mcp.allow_stdio"), "False")
        with self.assertRaises(ValidationError) as info:
            self.Server.with_user(self.admin).create(self.stdio_values())
        self.assertIn("ai_mcp.allow_stdio", str(info.exception))
        self.set_param("ai_mcp.allow_stdio", "True")
        server = self.Server.with_user(self.admin).create(self.stdio_values())
        self.set_param("ai_mcp.allow_stdio", "False")
        with self.assertRaises(ConfigError):
            server._server_spec()
        server.action_test_connection()
        self.assertEqual((server.state, server.last_error_code), ("error", "CONFIG_INVALID"))
        self.assertIn("ai_mcp.allow_stdio", server.last_error)

    def test_stdio_is_off_by_default_in_a_fresh_database(self):
        param = self.env.ref("ai_mcp.param_allow_stdio")
        self.assertEqual(param.key, "ai_mcp.allow_stdio")
        self.assertFalse(self.Server._stdio_enabled())

    # -- URL guard -------------------------------------------------------------------------------

    def user_url_values(self, url):
        return {"name": "local", "scope": "user", "cloud_service_id": self.service1.id, "url": url}

    def test_user_url_to_loopback_is_refused_at_save_unless_allowed(self):
        Server = self.Server.with_user(self.user1)
        for url in ("http://127.0.0.1:8069/mcp", "http://[::1]/mcp", "http://10.0.0.8/mcp", "http://169.254.169.254/"):
            with self.assertRaises(ValidationError, msg=url) as info:
                Server.create(self.user_url_values(url))
            self.assertIn("metadata" if "169.254" in url else "ai_mcp.allowed_hosts", str(info.exception))
        with self.assertRaises(ValidationError):
            self.as_(self.user1, self.mine).write({"url": "http://127.0.0.1/mcp"})
        with self.assertRaises(ValidationError):
            Server.create(self.user_url_values("ftp://93.184.216.34/"))

        self.set_param("ai_mcp.allowed_hosts", "mcp.intranet, 127.0.0.1")
        server = Server.create(self.user_url_values("http://127.0.0.1:8069/mcp"))
        self.assertEqual(server._server_spec().url, "http://127.0.0.1:8069/mcp")
        with self.assertRaises(ValidationError, msg="metadata stays closed"):
            self.set_param("ai_mcp.allowed_hosts", "169.254.169.254")
            Server.create(self.user_url_values("http://169.254.169.254/"))

    def test_url_refusal_is_a_sentence_in_the_users_language(self):
        Server = self.Server.with_user(self.user1)
        with self.assertRaises(ValidationError) as info:
            Server.with_context(lang="en_US").create(self.user_url_values("http://0.0.0.0/mcp"))
        self.assertEqual(
            str(info.exception),
            "local: URL: 0.0.0.0 is an unspecified address, which servers added by users may not reach. "
            "If this server must be reachable, ask an administrator to add 0.0.0.0 to the system parameter "
            "ai_mcp.allowed_hosts.",
        )
        self.env["res.lang"]._activate_lang("zh_TW")
        with self.assertRaises(ValidationError) as info:
            Server.with_context(lang="zh_TW").create(self.user_url_values("http://0.0.0.0/mcp"))
        self.assertIn(
            "0.0.0.0 是未指定位址，使用者新增的伺服器不能存取它。"
            "如果必須能存取此伺服器，請管理員將 0.0.0.0 加入系統參數 "
            "ai_mcp.allowed_hosts。",
            str(info.exception),
        )

    def test_system_servers_may_use_internal_urls(self):
        server = self.Server.with_user(self.manager).create({"name": "intranet", "url": "http://127.0.0.1:8069/mcp"})
        self.assertEqual(server.scope, "system")

    def test_user_url_is_checked_again_at_connect(self):
        self.set_param("ai_mcp.allowed_hosts", "127.0.0.1")
        server = self.Server.with_user(self.user1).create(self.user_url_values("http://127.0.0.1:9/mcp"))
        self.set_param("ai_mcp.allowed_hosts", False)
        with self.assertRaises(ConfigError) as info:
            server._server_spec()
        self.assertEqual(info.exception.field, "url")
        with mute_logger("odoo.addons.ai_mcp.models.server.mcp_server"):
            action = server.action_test_connection()
        self.assertEqual(action["params"]["type"], "danger")
        self.assertIn("ai_mcp.allowed_hosts", action["params"]["message"])
        self.assertEqual((server.state, server.last_error_code), ("error", "CONFIG_INVALID"))
