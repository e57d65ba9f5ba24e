"""The screens: every action's views load, menus show what each group may use, and the forms
show the fields that apply (transport-specific fields, write-only secrets)."""

from lxml import etree

from odoo.tests import Form, TransactionCase, new_test_user, tagged

ACTIONS = {
    "ai_mcp.action_ai_provider": "ai.provider",
    "ai_mcp.action_ai_assistant": "ai.assistant",
    "ai_mcp.action_mcp_server": "mcp.server",
    "ai_mcp.action_mcp_tool": "mcp.tool",
    "ai_mcp.action_cloud_service": "cloud.service",
}


@tagged("post_install", "-at_install")
class TestViews(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True))
        cls.manager = new_test_user(
            cls.env, "views_manager", groups="base.group_user,ai_mcp.group_ai_manager", name="Views Manager"
        )
        cls.user = new_test_user(
            cls.env, "views_user", groups="base.group_user,ai_mcp.group_ai_user", name="Views User"
        )
        cls.env["ir.config_parameter"].sudo().set_param("ai_mcp.allow_stdio", "False")

    def test_every_action_has_list_form_and_search_views(self):
        for xmlid, model in ACTIONS.items():
            with self.subTest(action=xmlid):
                action = self.env.ref(xmlid)
                self.assertEqual(action.res_model, model)
                self.assertEqual(action.view_mode, "list,form")
                self.assertTrue(action.search_view_id, "a search view of our own")
                views = (
                    self.env[model]
                    .with_user(self.manager)
                    .get_views([(False, "list"), (False, "form"), (False, "search")])
                )
                for kind in ("list", "form", "search"):
                    arch = etree.fromstring(views["views"][kind]["arch"])
                    self.assertEqual(arch.tag, kind)

    def test_chatter_where_an_admin_wants_history(self):
        for model in ("ai_provider", "ai_assistant", "mcp_server", "cloud_service"):
            with self.subTest(model=model):
                arch = etree.fromstring(self.env.ref(f"ai_mcp.view_{model}_form").arch)
                self.assertEqual(len(arch.xpath("/form/chatter")), 1)

    def test_menus_per_group(self):
        root = self.env.ref("ai_mcp.menu_ai_root")
        self.assertEqual(root.web_icon, "ai_mcp,static/description/icon.png")
        config = self.env.ref("ai_mcp.menu_ai_config")
        config_children = {
            self.env.ref(f"ai_mcp.{name}")
            for name in ("menu_ai_provider", "menu_ai_assistant", "menu_mcp_server", "menu_mcp_tool")
        }
        self.assertTrue(all(menu.parent_id == config for menu in config_children))

        def visible(user):
            menus = self.env["ir.ui.menu"].with_user(user).load_menus(debug=False)
            return {menu["xmlid"] for menu in menus.values() if isinstance(menu, dict) and menu.get("xmlid")}

        for_manager = visible(self.manager)
        self.assertTrue(
            {
                "ai_mcp.menu_ai_root",
                "ai_mcp.menu_cloud_service",
                "ai_mcp.menu_ai_config",
                "ai_mcp.menu_mcp_tool",
                "ai_mcp.menu_mcp_server_import",
            }
            <= for_manager
        )
        for_user = visible(self.user)
        self.assertIn("ai_mcp.menu_cloud_service", for_user, "AI users see their cloud services")
        self.assertNotIn("ai_mcp.menu_ai_config", for_user, "configuration is for AI managers")
        outsider = new_test_user(self.env, "views_outsider", groups="base.group_user")
        self.assertNotIn("ai_mcp.menu_ai_root", visible(outsider))
        # AI > Reporting: everyone's usage for AI managers, their own for AI users
        self.assertTrue(
            {"ai_mcp.menu_ai_usage", "ai_mcp.menu_ai_usage_report", "ai_mcp.menu_ai_usage_mine"} <= for_manager
        )
        self.assertIn("ai_mcp.menu_ai_usage_mine", for_user)
        self.assertNotIn("ai_mcp.menu_ai_usage_report", for_user)

    def test_usage_reports_open_with_cost_and_tokens_by_month_and_day(self):
        for xmlid, user in (("ai_mcp.action_ai_usage", self.manager), ("ai_mcp.action_ai_usage_mine", self.user)):
            with self.subTest(action=xmlid):
                action = self.env.ref(xmlid)
                self.assertEqual(action.view_mode, "pivot,graph,list,form")
                views = (
                    self.env["ai.usage"]
                    .with_user(user)
                    .get_views([(False, kind) for kind in ("pivot", "graph", "list", "form", "search")])
                )
                pivot = etree.fromstring(views["views"]["pivot"]["arch"])
                self.assertEqual(
                    [(f.get("name"), f.get("interval")) for f in pivot.xpath("//field[@type='row']")],
                    [("date", "month"), ("date", "day")],
                )
                measures = {f.get("name") for f in pivot.xpath("//field[@type='measure']")}
                # the cost in one currency: rows billed in different ones are never added up as they are
                self.assertTrue({"report_cost", "total_tokens", "cached_input_tokens", "reasoning_tokens"} <= measures)
                self.assertNotIn("cost", measures)
                search = etree.fromstring(views["views"]["search"]["arch"])
                group_bys = {f.get("name") for f in search.xpath("//group/filter")}
                self.assertTrue(
                    {"groupby_user", "groupby_assistant", "groupby_provider", "groupby_model", "groupby_day"}
                    <= group_bys
                )
        mine = self.env.ref("ai_mcp.action_ai_usage_mine")
        self.assertIn("search_default_filter_this_month", mine.context)
        self.assertEqual(mine.domain, "[('user_id', '=', uid)]")

    def test_server_form_shows_only_the_fields_of_its_transport(self):
        form = Form(self.env["mcp.server"].with_user(self.manager))
        form.name = "Docs"
        self.assertEqual(form.transport, "streamable_http")
        form.url = "https://mcp.example.com/mcp"
        for field in ("command", "args", "cwd", "env_vars", "command_preview"):
            self.assertTrue(form._get_modifier(field, "invisible"), f"{field} is for stdio servers")
        self.assertTrue(form._get_modifier("api_key", "invisible"), "no token field without token authentication")
        form.auth_type = "bearer"
        self.assertFalse(form._get_modifier("api_key", "invisible"))
        self.assertTrue(form._get_modifier("headers", "invisible"))
        form.api_key = "s3cret-token"
        form.auth_type = "headers"
        self.assertFalse(form._get_modifier("headers", "invisible"))
        form.auth_type = "bearer"
        server = form.save()
        self.assertTrue(server.api_key_set)
        self.assertFalse(server.api_key, "the secret is write-only")
        self.assertEqual(server.scope, "system")

        form = Form(server)
        form.transport = "stdio"
        for field in ("url", "auth_type", "api_key", "headers"):
            self.assertTrue(form._get_modifier(field, "invisible"), f"{field} is for HTTP servers")
        for field in ("command", "args", "cwd", "env_vars"):
            self.assertFalse(form._get_modifier(field, "invisible"), f"{field} is shown for stdio")
        self.assertTrue(form._get_modifier("command", "required"))

    def test_secret_badges_and_password_inputs(self):
        arch = self.env["mcp.server"].get_views([(False, "form")])["views"]["form"]["arch"]
        doc = etree.fromstring(arch)
        for field in ("api_key", "headers", "env_vars"):
            node = doc.xpath(f"//field[@name='{field}']")[0]
            self.assertEqual(node.get("password"), "True", f"{field} is typed into a password input")
            badges = node.getparent().xpath(".//span[contains(@class, 'badge')]")
            self.assertEqual(sorted(b.text for b in badges), ["Not set", "Set"])
        provider = etree.fromstring(self.env["ai.provider"].get_views([(False, "form")])["views"]["form"]["arch"])
        self.assertEqual(provider.xpath("//field[@name='api_key']")[0].get("password"), "True")

    def test_tool_list_toggles_and_review(self):
        arch = etree.fromstring(self.env["mcp.tool"].get_views([(False, "list")])["views"]["list"]["arch"])
        for field in ("enabled", "requires_approval"):
            self.assertEqual(arch.xpath(f"//field[@name='{field}']")[0].get("widget"), "boolean_toggle")
        self.assertEqual(arch.xpath("//field[@name='review_state']")[0].get("widget"), "badge")
        buttons = {b.get("name") for b in arch.xpath("//button")}
        self.assertEqual(buttons, {"action_accept_change", "action_try"})

    def test_an_ai_user_adds_a_server_to_their_cloud_service_through_the_form(self):
        form = Form(self.env["cloud.service"].with_user(self.user))
        form.name = "Shop"
        with form.user_mcp_server_ids.new() as line:
            line.name = "Shop tools"
            self.assertEqual(line.scope, "user")
            line.url = "https://93.184.216.34/mcp"
            line.auth_type = "bearer"
            line.api_key = "user-token"
        service = form.save()
        server = service.user_mcp_server_ids
        self.assertEqual((server.name, server.scope, server.owner_id), ("Shop tools", "user", self.user))
        self.assertTrue(server.api_key_set)
        self.assertFalse(server.api_key)
        # the server form opens for its owner, with the tools smart button
        form = Form(server.with_user(self.user))
        self.assertEqual(form.tool_count, 0)
