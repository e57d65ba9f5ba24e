"""The assistant: the tools it binds for whom, its preview, its limits and 'Test provider'."""

from odoo.exceptions import ValidationError
from odoo.tests import tagged

from odoo.addons.ai_mcp.services.loop import AssistantSettings
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM, Turn

from .common import AiMcpCase


@tagged("post_install", "-at_install")
class TestAssistant(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.provider = cls.env["ai.provider"].create(
            {
                "name": "Scripted",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key": "sk-right",
                "default_model": "scripted-model",
            }
        )
        cls.crm = cls.system_server("CRM", state="connected")
        cls.docs = cls.system_server("Docs", state="connected")
        cls.down = cls.system_server("Down", state="error")
        cls.search_crm = cls.tool(cls.crm, "search")
        cls.delete_crm = cls.tool(cls.crm, "delete", requires_approval=True)
        cls.disabled_crm = cls.tool(cls.crm, "disabled_globally", enabled=False)
        cls.blacklisted_crm = cls.tool(cls.crm, "blacklisted")
        cls.changed_crm = cls.tool(cls.crm, "changed", content_hash="h-new")
        cls.gone_crm = cls.tool(cls.crm, "gone", active=False)
        cls.search_docs = cls.tool(cls.docs, "search")
        cls.down_tool = cls.tool(cls.down, "unreachable")
        cls.assistant = cls.env["ai.assistant"].create(
            {
                "name": "Helper",
                "provider_id": cls.provider.id,
                "mcp_server_ids": [(6, 0, (cls.crm | cls.docs | cls.down).ids)],
                "mcp_tool_disabled_ids": [(6, 0, cls.blacklisted_crm.ids)],
            }
        )
        cls.service = cls.service_of(cls.user1, "Service", members=[cls.member])
        cls.user_srv = cls.user_server(cls.service, "Mine")
        cls.user_srv.sudo().state = "connected"
        cls.user_tool = cls.tool(cls.user_srv, "my_tool")
        cls.user_changed = cls.tool(cls.user_srv, "my_changed", content_hash="h-new")
        cls.user_disabled = cls.tool(cls.user_srv, "my_disabled", enabled=False)

    def bound(self, user=None, cloud_service=None, warnings=None):
        assistant = self.assistant.with_user(user) if user else self.assistant
        service = cloud_service.with_user(user) if (cloud_service and user) else cloud_service
        return {(b.server.name, b.tool.name): b for b in assistant._tool_bindings(service, warnings=warnings)}

    # -- the bound tools -------------------------------------------------------------------------

    def test_system_tools_minus_disabled_changed_inactive_and_unconnected(self):
        bound = self.bound()
        self.assertEqual(set(bound), {("CRM", "search"), ("CRM", "delete"), ("Docs", "search")})
        self.assertTrue(bound[("CRM", "delete")].requires_approval)
        self.assertFalse(bound[("CRM", "search")].requires_approval)
        self.assertEqual(bound[("CRM", "search")].server.key, self.crm._server_key())
        self.assertEqual(bound[("CRM", "search")].tool.description, "search tool")

    def test_an_ai_user_gets_the_system_tools_they_cannot_see(self):
        self.assertEqual(set(self.bound(self.user2)), set(self.bound()))

    def test_cloud_service_tools_for_its_owner_and_members_only(self):
        expected_user = {("Mine", "my_tool")}
        for user in (self.user1, self.member):
            bound = self.bound(user, self.service)
            self.assertEqual(set(bound) - set(self.bound()), expected_user, user.name)
        warnings = []
        self.assertEqual(set(self.bound(self.user2, self.service.sudo(), warnings)), set(self.bound()))
        self.assertTrue(warnings)
        self.assertNotIn(("Mine", "my_tool"), self.bound(self.user1))

    def test_archived_or_failing_servers_are_left_out(self):
        self.docs.active = False
        self.user_srv.state = "error"
        bound = self.bound(self.user1, self.service)
        self.assertEqual(set(bound), {("CRM", "search"), ("CRM", "delete")})

    def test_server_that_cannot_connect_now_is_left_out_with_a_warning(self):
        self.user_srv.write({"auth_type": "bearer"})  # no token: the spec cannot be built
        self.user_srv.state = "connected"
        warnings = []
        bound = self.bound(self.user1, self.service, warnings)
        self.assertNotIn(("Mine", "my_tool"), bound)
        self.assertIn("Mine", warnings[0])

    def test_preview_lists_model_names_and_why_tools_are_missing(self):
        preview = self.assistant.tool_preview
        self.assertIn("CRM__search  <- CRM / search", preview, "two 'search' tools get server-prefixed names")
        self.assertIn("Docs__search  <- Docs / search", preview)
        self.assertIn("delete  <- CRM / delete", preview)
        self.assertNotIn("blacklisted", preview)
        self.assertNotIn("disabled_globally", preview)
        self.assertNotIn("gone", preview)
        self.assertIn("Down is not connected", preview)
        self.assertIn("changed of CRM changed since it was approved", preview)
        self.assertEqual(self.assistant.tool_count, 3)

        self.assistant.mcp_tool_disabled_ids = [(4, self.search_docs.id)]
        self.assertIn("search  <- CRM / search", self.assistant.tool_preview.splitlines())
        self.assertEqual(self.assistant.tool_count, 2)

    # -- constraints -----------------------------------------------------------------------------

    def test_at_most_ten_servers(self):
        servers = self.Server.browse([self.system_server(f"S{i}").id for i in range(11)])
        self.assistant.mcp_server_ids = [(6, 0, servers[:10].ids)]
        with self.assertRaises(ValidationError):
            self.assistant.mcp_server_ids = [(6, 0, servers.ids)]

    def test_only_system_servers(self):
        with self.assertRaises(ValidationError):
            self.assistant.mcp_server_ids = [(4, self.user_srv.id)]

    def test_limits_are_checked(self):
        for field, value in [
            ("max_rounds", 0),
            ("max_calls_per_round", 0),
            ("call_timeout", 0),
            ("turn_timeout", -1),
            ("temperature", 3),
            ("tool_search_threshold", 0),
            ("tool_search_threshold", 501),
        ]:
            with self.assertRaises(ValidationError, msg=field):
                self.assistant.write({field: value})

    # -- settings and provider -------------------------------------------------------------------

    def test_assistant_settings(self):
        settings = self.assistant.with_user(self.user1)._assistant_settings()
        self.assertIsInstance(settings, AssistantSettings)
        self.assertEqual(settings.llm.model, "scripted-model", "no model: the provider's default")
        self.assertEqual(settings.llm.api_key.get_secret_value(), "sk-right")
        self.assertEqual(settings.limits.max_rounds, 5)
        self.assertEqual(settings.limits.max_calls_per_round, 10)
        self.assertEqual((settings.limits.call_timeout, settings.limits.turn_timeout), (30, 120))
        self.assertEqual(settings.limits.tool_search_threshold, 30)
        self.assistant.write({"model": "other-model", "max_rounds": 3, "temperature": 0.7})
        settings = self.assistant._assistant_settings()
        self.assertEqual(
            (settings.llm.model, settings.limits.max_rounds, settings.llm.temperature), ("other-model", 3, 0.7)
        )

    def test_test_provider_ok_and_refused_key(self):
        with ScriptedLLM(api_key="sk-right") as llm:
            self.provider.base_url = llm.base_url
            llm.queue(Turn(text="OK"))
            action = self.assistant.action_test_provider()
            self.assertEqual(action["params"]["type"], "success", action["params"]["message"])
            self.assertRegex(action["params"]["message"], r"scripted-model answered in \d+ ms")

            self.provider.api_key = "sk-wrong"
            action = self.provider.action_test_provider()
            self.assertEqual(action["params"]["type"], "danger")
            self.assertIn("LLM_AUTH_FAILED", action["params"]["message"])
            self.assertIn("401", action["params"]["message"])
            self.assertEqual(len(llm.requests), 2)
            # the call a turn makes: streamed, with a tool offered
            self.assertTrue(llm.requests[0]["stream"])
            self.assertEqual(len(llm.requests[0]["tools"]), 1)

    def test_test_provider_unreachable(self):
        action = self.provider.action_test_provider()
        self.assertEqual(action["params"]["type"], "danger")
        self.assertIn("LLM_UNREACHABLE", action["params"]["message"])
