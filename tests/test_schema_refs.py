"""JSON Schemas of MCP tools where Odoo reads them itself: sync, the Try wizard and an app's call.
No schema reference is ever fetched (a canary on 127.0.0.1 counts any attempt), a tool whose
schema refers elsewhere is named at sync and on the tool, and a null for an optional property that
does not allow null is left out. Real servers (the schema probes of testing/mcp_servers.py and
testing/mcp_apps_server.py)."""

import json

from markupsafe import escape

from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.canary import SECRET, Canary
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer

from .app_common import AppCase
from .common import AiMcpCase


def refers_elsewhere(url, at):
    return f"refers to '{url}' (at {at}), outside itself, and schema references are never fetched"


@tagged("post_install", "-at_install")
class TestSchemaProbes(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.canary = Canary().start()
        cls.addClassCleanup(cls.canary.stop)
        cls.probes = HttpServer("streamable-http", "--schema-probes", cls.canary.url).start()
        cls.addClassCleanup(cls.probes.stop)
        cls.manager = new_test_user(
            cls.env, "probe_manager", groups="base.group_user,ai_mcp.group_ai_manager", name="Probe Manager"
        )
        cls.server = cls.system_server(name="Probes", url=cls.probes.url)

    def setUp(self):
        super().setUp()
        self.hits = self.canary.hits

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))
        super().tearDown()

    def synced(self):
        params = self.server.action_sync_tools()["params"]
        return params, {tool.name: tool for tool in self.server.tool_ids}

    def try_tool(self, tool, arguments):
        action = tool.with_user(self.manager).action_try()
        Wizard = self.env["mcp.tool.try.wizard"].with_user(self.manager).with_context(**action["context"])
        wizard = Wizard.create({"arguments": json.dumps(arguments)})
        wizard.action_call()
        return wizard

    def test_sync_names_the_tool_that_refers_elsewhere_on_the_server_and_the_tool(self):
        params, tools = self.synced()
        self.assertEqual(params["type"], "success", params["message"])
        problem = f"its input schema {refers_elsewhere(self.canary.url, 'properties.p')}"
        self.assertIn(f"Probes: the tool 'ref_probe' is left out of every answer because {problem}.", params["message"])
        self.assertEqual(tools["ref_probe"].schema_problem, problem)
        self.assertFalse(tools["local_ref"].schema_problem, "a reference within the schema is fine")
        self.assertFalse(tools["optional_flags"].schema_problem)
        message = self.server.action_test_connection()["params"]["message"]
        self.assertIn("'ref_probe' is left out of every answer", message)
        self.assertEqual(self.canary.hits, self.hits)

    def test_the_try_wizard_refuses_a_schema_that_refers_elsewhere_without_fetching_it(self):
        _params, tools = self.synced()
        wizard = self.try_tool(tools["ref_probe"], {"p": "x"})
        self.assertEqual(wizard.state, "error")
        self.assertEqual(wizard.result_error_code, "MCP_PROTOCOL_ERROR")
        self.assertEqual(
            wizard.result_error_message,
            f"ref_probe cannot be called: its input schema {refers_elsewhere(self.canary.url, 'properties.p')}.",
        )
        self.assertNotIn(SECRET, wizard.result_error_message)
        wizard = self.try_tool(tools["local_ref"], {"color": "blue"})
        self.assertEqual(wizard.result_error_code, "MCP_INVALID_PARAMS")
        self.assertIn("arguments.color: 'blue' is not one of ['red', 'green']", wizard.result_error_message)
        self.assertEqual(self.canary.hits, self.hits)

    def test_the_try_wizard_leaves_out_a_null_for_an_optional_property_that_does_not_allow_it(self):
        _params, tools = self.synced()
        wizard = self.try_tool(tools["optional_flags"], {"name": "a", "verbose": None, "note": None})
        self.assertEqual(wizard.state, "ok", wizard.result_error_message)
        # the server got no verbose (its default) and the null it allows for note
        received = json.dumps({"name": "a", "note": None, "verbose": False}, sort_keys=True)
        self.assertIn(str(escape(received)), wizard.result_html)
        wizard = self.try_tool(tools["optional_flags"], {"name": None})
        self.assertEqual(wizard.result_error_code, "MCP_INVALID_PARAMS")
        self.assertIn("arguments.name: None is not of type 'string'", wizard.result_error_message)


@tagged("post_install", "-at_install")
class TestAppSchemaProbes(AppCase):
    @classmethod
    def setUpClass(cls):
        cls.canary = Canary().start()
        cls.board_args = ("--schema-probes", cls.canary.url)
        super().setUpClass()
        cls.addClassCleanup(cls.canary.stop)

    def call(self, conversation_id, name, arguments):
        return self.app("call_tool", conversation_id, name=name, arguments=arguments)

    def test_an_app_call_to_a_tool_whose_schema_refers_elsewhere_is_refused_without_fetching_it(self):
        hits = self.canary.hits
        self.login(self.user)
        conversation_id = self.show()
        refused = self.call(conversation_id, "filter_board", {"status": "x"})["error"]
        self.assertEqual(
            refused,
            {
                "code": "MCP_PROTOCOL_ERROR",
                "message": "filter_board cannot be called: its input schema "
                f"{refers_elsewhere(self.canary.url, 'properties.status')}.",
            },
        )
        self.env.invalidate_all()
        audited = self.env["ai.tool.call"].search([("conversation_id", "=", conversation_id), ("origin", "=", "app")])
        self.assertEqual(audited.mapped(lambda r: (r.tool_name, r.status)), [("filter_board", "error")])
        self.assertEqual(self.canary.hits, hits)

    def test_an_app_call_leaves_out_a_null_for_an_optional_property_that_does_not_allow_it(self):
        self.login(self.user)
        conversation_id = self.show()
        result = self.call(conversation_id, "list_tasks", {"project": "alpha", "verbose": None})
        self.assertNotIn("error", result, result)
        self.assertEqual(result["content"], [{"type": "text", "text": "alpha: verbose=False"}], result)
