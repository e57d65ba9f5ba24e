"""The screens in a real browser: every action of the AI menu, list and form, and the Try-it
wizard on a real MCP tool (static/tests/tours/ai_mcp_views_tour.js).

Odoo skips browser tests silently when websocket-client or Chrome/Chromium is missing, so the
test fails instead where they are expected (set AI_MCP_BROWSER_OPTIONAL=1 to allow skipping)."""

import json

from odoo.tests import HttpCase, tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer

from .common import require_browser

RICH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "minimum": 1, "default": 10},
        "mode": {"enum": ["fast", "thorough"]},
        "verbose": {"type": "boolean"},
        "filters": {
            "type": "object",
            "properties": {"tag": {"type": "string"}, "since": {"type": ["string", "null"]}},
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["query", "mode"],
}


@tagged("post_install", "-at_install")
class TestUiTour(HttpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.http = HttpServer("streamable-http").start()
        cls.addClassCleanup(cls.http.stop)

    def setUp(self):
        super().setUp()
        require_browser(self)
        env = self.env(context=dict(self.env.context, tracking_disable=True))
        provider = env["ai.provider"].create(
            {"name": "Tour provider", "base_url": "https://llm.example.com/v1", "api_key": "sk-tour"}
        )
        self.server = env["mcp.server"].create({"name": "Tour server", "scope": "system", "url": self.http.url})
        sync = self.server.action_sync_tools()
        self.assertEqual(sync["params"]["type"], "success", sync["params"]["message"])
        env["ai.assistant"].create(
            {"name": "Tour assistant", "provider_id": provider.id, "mcp_server_ids": [(6, 0, self.server.ids)]}
        )
        env["cloud.service"].create({"name": "Tour service"})
        # a tool the server does not have, with a schema that needs every kind of input
        env["mcp.tool"].create(
            {
                "name": "rich_form",
                "server_id": self.server.id,
                "description": "Every kind of input",
                "input_schema": json.dumps(RICH_SCHEMA),
                "content_hash": "rich",
                "approved_hash": "rich",
            }
        )

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))
        super().tearDown()

    def test_views_and_try_it_in_the_browser(self):
        self.start_tour("/odoo", "ai_mcp_views_tour", login="admin", timeout=180)
        imported = self.env["mcp.server"].search([("name", "=", "tour_import")])
        self.assertFalse(imported, "the tour only previews the import")
        # what the generated form wrote is exactly what was typed, typed as the schema says
        wizard = self.env["mcp.tool.try.wizard"].search([("tool_id.name", "=", "rich_form")], order="id desc", limit=1)
        self.assertEqual(
            json.loads(wizard.arguments),
            {
                "query": "tea",
                "mode": "thorough",
                "verbose": True,
                "filters": {"tag": "green", "since": None},
                "ids": [7, 8],
            },
        )
        self.assertFalse(wizard.arguments_error)
        self.assertEqual(wizard.state, "error", "the server has no such tool")
