"""What the MCP Apps tests share: the chat's case with a second, real MCP server whose tools have
apps (testing/mcp_apps_server.py's task board), bound to the assistant, and a conversation in which the model
called `show_board`, whose app the tests then open and use as the widget would."""

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_apps_server import PROGRAM
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import ChatCase

# what web.base.url says in these tests: the board declares it, and must never get it
BASE_URL = "https://erp.example.test"


class AppCase(ChatCase):
    # further arguments of the board server (testing/mcp_apps_server.py)
    board_args = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["ir.config_parameter"].sudo().set_param("web.base.url", BASE_URL)
        connect = ("--connect-domain", cls.base_url(), "--connect-domain", BASE_URL)
        cls.apps = HttpServer("streamable-http", "--board", *connect, *cls.board_args, program=PROGRAM).start()
        cls.addClassCleanup(cls.apps.stop)
        cls.board = cls.env["mcp.server"].create({"name": "Board", "scope": "system", "url": cls.apps.url})
        result = cls.board._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_board_sessions)
        cls.board_tools = {tool.name: tool for tool in cls.board.tool_ids}
        cls.assistant.write(
            {
                "mcp_server_ids": [(4, cls.board.id)],
                "mcp_tool_disabled_ids": [(4, cls.board_tools["archive_board"].id)],
            }
        )

    @classmethod
    def _close_board_sessions(cls):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(cls.board._server_key()))

    def show(self, tool="show_board", arguments=None, call_id="call_board", **body):
        """A turn in which the model calls `tool` (whose result shows an app): the conversation id."""
        self.llm.queue(
            Turn(tool_calls=(ToolCall(tool, arguments or {"project": "alpha"}, id=call_id),)), Turn(text="Here it is.")
        )
        _response, events = self.send("Show me the board", **body)
        self.assertEqual(events[-1].event, "done", [e.data for e in events])
        return events[0].data["conversation_id"]

    def app(self, route, conversation_id, call_id="call_board", **params):
        """The JSON answer of /ai_mcp/app/<route> (result, or the JSON-RPC error of a 404)."""
        answer = self.jsonrpc(
            f"/ai_mcp/app/{route}", {"conversation_id": conversation_id, "call_id": call_id, **params}
        )
        return answer.get("result", answer.get("error"))

    def assertNotFound(self, answer):
        self.assertEqual(answer["data"]["name"], "werkzeug.exceptions.NotFound", answer)
