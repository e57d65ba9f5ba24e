"""Try it: a tool called by hand through the hub, on a real FastMCP server, and its typed result."""

import json

from odoo.exceptions import AccessError, UserError
from odoo.tests import TransactionCase, new_test_user, tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.services.tool_result import (
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    StructuredPart,
    TextPart,
    ToolResult,
)
from odoo.addons.ai_mcp.testing.mcp_servers import PNG_1PX, HttpServer
from odoo.addons.ai_mcp.wizard.mcp_tool_try_wizard import render_result_html

PNG_B64 = __import__("base64").b64encode(PNG_1PX).decode()


@tagged("post_install", "-at_install")
class TestTryWizard(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True))
        cls.http = HttpServer("streamable-http").start()
        cls.addClassCleanup(cls.http.stop)
        cls.manager = new_test_user(
            cls.env, "try_manager", groups="base.group_user,ai_mcp.group_ai_manager", name="Try Manager"
        )
        cls.server = cls.env["mcp.server"].create({"name": "Test server", "scope": "system", "url": cls.http.url})
        result = cls.server.action_sync_tools()
        assert result["params"]["type"] == "success", result["params"]["message"]
        cls.tools = {tool.name: tool for tool in cls.server.tool_ids}

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))
        super().tearDown()

    def wizard(self, tool, arguments=None, user=None):
        action = self.tools[tool].with_user(user or self.manager).action_try()
        self.assertEqual(action["res_model"], "mcp.tool.try.wizard")
        self.assertEqual(action["target"], "new")
        Wizard = self.env["mcp.tool.try.wizard"].with_user(user or self.manager).with_context(**action["context"])
        values = {} if arguments is None else {"arguments": json.dumps(arguments)}
        return Wizard.create(values)

    def test_the_wizard_carries_the_tool_and_its_schema(self):
        wizard = self.wizard("add")
        self.assertEqual(wizard.tool_id, self.tools["add"])
        self.assertEqual(wizard.server_id, self.server)
        schema = json.loads(wizard.input_schema)
        self.assertEqual(schema["required"], ["a", "b"])
        self.assertEqual(json.loads(wizard.arguments), {})
        self.assertEqual(wizard.state, "draft")

    def test_call_shows_the_text_result(self):
        wizard = self.wizard("add", {"a": 2, "b": 3.5})
        action = wizard.action_call()
        self.assertEqual(action["res_id"], wizard.id, "the wizard stays open with the result")
        self.assertEqual(wizard.state, "ok")
        self.assertFalse(wizard.result_error_code)
        self.assertIn("5.5", wizard.result_html)
        self.assertGreaterEqual(wizard.result_duration_ms, 0)

    def test_structured_content_is_pretty_json(self):
        wizard = self.wizard("weather", {"city": "Oslo"})
        wizard.action_call()
        self.assertEqual(wizard.state, "ok")
        self.assertIn("Structured content", wizard.result_html)
        self.assertIn("\n  &#34;celsius&#34;: 21.5", wizard.result_html, "indented JSON, escaped")

    def test_image_is_shown_as_a_data_uri(self):
        wizard = self.wizard("image", {})
        wizard.action_call()
        self.assertEqual(wizard.state, "ok")
        self.assertIn('src="data:image/png;base64,', wizard.result_html)

    def test_embedded_resource(self):
        wizard = self.wizard("resource", {})
        wizard.action_call()
        self.assertIn("file:///notes.txt", wizard.result_html)
        self.assertIn("the notes", wizard.result_html)

    def test_tool_error_shows_code_and_message(self):
        wizard = self.wizard("fail", {"reason": "no <coffee>"})
        wizard.action_call()
        self.assertEqual(wizard.state, "error")
        self.assertEqual(wizard.result_error_code, "MCP_EXECUTION_ERROR")
        self.assertIn("no <coffee>", wizard.result_error_message)
        self.assertIn("no &lt;coffee&gt;", wizard.result_html, "tool output is escaped")
        self.assertTrue(wizard.result_advice)

    def test_arguments_are_checked_against_the_schema_before_the_call(self):
        wizard = self.wizard("add", {"a": "two"})
        wizard.action_call()
        self.assertEqual(wizard.state, "error")
        self.assertEqual(wizard.result_error_code, "MCP_INVALID_PARAMS")
        self.assertIn("arguments.a", wizard.result_error_message)
        self.assertIn("'b' is a required property", wizard.result_error_message)
        self.assertFalse(wizard.result_html, "nothing was called")

    def test_an_invalid_form_or_text_is_refused(self):
        wizard = self.wizard("add", {"a": 1, "b": 2})
        wizard.arguments_error = "1 invalid input(s)"
        with self.assertRaises(UserError):
            wizard.action_call()
        wizard.arguments_error = False
        for text in ("{", "[1, 2]"):
            wizard.arguments = text
            with self.assertRaises(UserError):
                wizard.action_call()

    def test_unreachable_server_reports_its_code(self):
        dead = self.env["mcp.server"].create({"name": "Dead", "scope": "system", "url": "http://127.0.0.1:9/mcp"})
        tool = self.env["mcp.tool"].create(
            {
                "name": "echo",
                "server_id": dead.id,
                "input_schema": '{"type": "object"}',
                "content_hash": "h",
                "approved_hash": "h",
            }
        )
        wizard = self.env["mcp.tool.try.wizard"].with_user(self.manager).create({"tool_id": tool.id, "arguments": "{}"})
        wizard.action_call()
        self.assertEqual(wizard.state, "error")
        self.assertEqual(wizard.result_error_code, "MCP_UNREACHABLE")
        action = wizard.action_reset()
        self.assertEqual(action["res_id"], wizard.id)
        self.assertEqual(wizard.state, "draft")
        self.assertFalse(wizard.result_error_code)

    def test_users_try_only_the_tools_they_may_see(self):
        user = new_test_user(self.env, "try_user", groups="base.group_user,ai_mcp.group_ai_user")
        with self.assertRaises(AccessError):
            self.tools["echo"].with_user(user).action_try()
        with self.assertRaises(AccessError):
            # forged by RPC: the wizard names a tool the user cannot read
            wizard = (
                self.env["mcp.tool.try.wizard"]
                .with_user(user)
                .create({"tool_id": self.tools["echo"].id, "arguments": '{"text": "hi"}'})
            )
            wizard.action_call()


@tagged("post_install", "-at_install")
class TestResultRendering(TransactionCase):
    def render(self, *parts, is_error=False):
        return str(render_result_html(self.env, ToolResult(parts=list(parts), is_error=is_error)))

    def test_text_is_escaped(self):
        html = self.render(TextPart(text='<script>alert("x")</script>'))
        self.assertNotIn("<script>", html)
        self.assertIn("&lt;script&gt;", html)

    def test_only_raster_images_with_valid_base64(self):
        self.assertIn(f"data:image/png;base64,{PNG_B64}", self.render(ImagePart(mime_type="image/png", data=PNG_B64)))
        svg = self.render(ImagePart(mime_type="image/svg+xml", data=PNG_B64))
        self.assertNotIn("<img", svg)
        broken = self.render(ImagePart(mime_type="image/png", data='x" onerror="alert(1)'))
        self.assertNotIn("<img", broken)
        self.assertNotIn("onerror", broken)

    def test_resources_links_and_structured_content(self):
        html = self.render(
            ResourcePart(uri="file:///a.txt", mime_type="text/plain", text="A <b>"),
            ResourcePart(uri="file:///b.png", mime_type="image/png", blob=PNG_B64),
            ResourcePart(uri="file:///c.bin", mime_type="application/octet-stream", blob="AAAA"),
            ResourceLinkPart(uri="javascript:alert(1)", name="link"),
            StructuredPart(data={"k": "<v>"}),
        )
        self.assertIn("A &lt;b&gt;", html)
        self.assertIn("data:image/png;base64,", html)
        self.assertIn("3 bytes", html)
        self.assertNotIn('href="javascript', html, "links are shown, not followed")
        self.assertIn("&#34;k&#34;: &#34;&lt;v&gt;&#34;", html)

    def test_empty_result(self):
        self.assertIn("no content", self.render())
