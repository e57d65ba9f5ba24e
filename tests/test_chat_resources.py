"""Resources of a conversation's servers through /ai_mcp/resources and /ai_mcp/resources/read: listed,
read (text, binary, template, capped), and a tool result's link opened, on a real FastMCP server
with resources, as the users they are for."""

import base64

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.mcp_servers import PNG_1PX
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatResources(ChatCase):
    mcp_options = ("--resources",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.service, cls.service_server = cls._other_users_service()

    def listing(self, **params):
        return self.jsonrpc("/ai_mcp/resources", {"assistant_id": self.assistant.id, **params})

    def read_resource(self, **params):
        return self.jsonrpc(
            "/ai_mcp/resources/read", {"assistant_id": self.assistant.id, "server_id": self.server.id, **params}
        )

    def test_a_user_lists_the_resources_and_templates_of_the_assistants_servers(self):
        self.login(self.user)
        result = self.listing()["result"]
        self.assertEqual(result["warnings"], [])
        [server] = result["servers"]
        self.assertEqual((server["server_id"], server["server"]), (self.server.id, "Test tools"))
        self.assertEqual(
            sorted(r["uri"] for r in server["resources"]), ["images://dot.png", "notes://big", "notes://today"]
        )
        self.assertEqual(
            [(t["uri_template"], t["variables"]) for t in server["templates"]], [("notes://day/{day}", ["day"])]
        )
        self.assertNotIn(self.mcp.url, str(result))

    def test_text_binary_and_template_resources_are_read_and_large_ones_capped(self):
        self.login(self.user)
        note = self.read_resource(uri="notes://today")["result"]
        self.assertEqual(
            note["contents"],
            [
                {
                    "uri": "notes://today",
                    "mime_type": "text/markdown",
                    "text": "# Today\n- water the plants",
                    "blob": None,
                }
            ],
        )
        [dot] = self.read_resource(uri="images://dot.png")["result"]["contents"]
        self.assertEqual((dot["mime_type"], base64.b64decode(dot["blob"])), ("image/png", PNG_1PX))
        day = self.read_resource(template="notes://day/{day}", arguments={"day": "Monday"})["result"]
        self.assertEqual(
            (day["uri"], day["contents"][0]["text"]), ("notes://day/Monday", "# Monday\n- nothing planned")
        )
        [big] = self.read_resource(uri="notes://big")["result"]["contents"]
        self.assertTrue(big["text"].endswith("[... truncated: 50000 more characters not shown ...]"))

    def test_bad_requests_name_what_to_fix(self):
        self.login(self.user)
        missing = self.read_resource(template="notes://day/{day}", arguments={})["result"]["error"]
        self.assertEqual(
            missing,
            {"code": "MCP_INVALID_PARAMS", "message": "MCP_INVALID_PARAMS: Fill in day to read notes://day/{day}."},
        )
        unknown = self.read_resource(uri="notes://nowhere")["result"]["error"]
        self.assertIn("notes://nowhere", unknown["message"])
        self.assertEqual(self.read_resource(uri=" ")["result"]["error"]["code"], "INVALID_REQUEST")

    def test_a_link_in_a_tool_result_is_opened_from_the_server_of_its_call(self):
        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("link_note", {}, id="call_link"),)), Turn(text="Here is the note."))
        _response, events = self.send("Show me today's note")
        self.assertEqual(events[-1].event, "done")
        conversation_id = events[0].data["conversation_id"]
        [result] = [e.data for e in events if e.event == "tool_result"]
        self.assertEqual(result["content"][0]["uri"], "notes://today")
        opened = self.jsonrpc(
            "/ai_mcp/resources/read",
            {"conversation_id": conversation_id, "call_id": "call_link", "uri": "notes://today"},
        )
        self.assertEqual(opened["result"]["contents"][0]["text"], "# Today\n- water the plants")

        self.login(self.other)
        refused = self.jsonrpc(
            "/ai_mcp/resources/read",
            {"conversation_id": conversation_id, "call_id": "call_link", "uri": "notes://today"},
        )
        self.assertEqual(refused["error"]["data"]["name"], "werkzeug.exceptions.NotFound")

    def test_a_cloud_services_resources_are_for_its_users_only(self):
        self.login(self.other)
        mine = self.listing(cloud_service_id=self.service.id)["result"]["servers"]
        self.assertEqual({s["server"] for s in mine}, {"Test tools", "Service tools"})
        self.login(self.user)
        for refused in (
            self.listing(cloud_service_id=self.service.id),
            self.read_resource(server_id=self.service_server.id, uri="notes://today"),
            self.read_resource(server_id=self.service_server.id, uri="notes://today", cloud_service_id=self.service.id),
        ):
            self.assertEqual(refused["error"]["data"]["name"], "werkzeug.exceptions.NotFound", refused)
