"""What the MCP Apps tests share: the chat's case with a second, real MCP server whose tools have
apps (testing/mcp_apps_server.py's task board), bound to the assistant, and a conversation in which the model
called `show_board`, whose app the tests then open and use as the widget would; and the set-up of
a browser tour of an app server's apps."""

from odoo.tests import HttpCase, new_test_user

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_apps_server import PROGRAM
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM, ToolCall, Turn

from .chat_common import ChatCase
from .common import let_background_syncs_end, require_browser

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


class AppTourCase(HttpCase):
    """A browser tour of the apps of an MCP server in the chat: `program` served over streamable
    HTTP, a scripted model answering with `responder(self)`, an AI user who is not a manager, the
    server synced with its apps on and an assistant of its tools (`assistant_values` adds to it)."""

    program = PROGRAM
    server_name = "Apps server"
    assistant_name = "Apps assistant"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mcp = HttpServer("streamable-http", program=cls.program).start()
        cls.addClassCleanup(cls.mcp.stop)

    def responder(self):
        raise NotImplementedError

    def assistant_values(self):
        return {}

    def setUp(self):
        super().setUp()
        require_browser(self)
        self.addCleanup(let_background_syncs_end, self)
        self.llm = ScriptedLLM(responder=self.responder())
        self.llm.start()
        self.addCleanup(self.llm.close)
        env = self.env(context=dict(self.env.context, tracking_disable=True))
        self.user = new_test_user(env, "apps_user", groups="base.group_user,ai_mcp.group_ai_user", name="Apps User")
        provider = env["ai.provider"].create(
            {"name": "Scripted LLM", "base_url": self.llm.base_url, "api_key": "sk-tour", "default_model": "scripted"}
        )
        self.server = env["mcp.server"].create(
            {"name": self.server_name, "scope": "system", "url": self.mcp.url, "apps_enabled": True}
        )
        sync = self.server.action_sync_tools()
        self.assertEqual(sync["params"]["type"], "success", sync["params"]["message"])
        self.tools = {tool.name: tool for tool in self.server.tool_ids}
        self.assistant = env["ai.assistant"].create(
            {
                "name": self.assistant_name,
                "provider_id": provider.id,
                "mcp_server_ids": [(6, 0, self.server.ids)],
                **self.assistant_values(),
            }
        )

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))
        super().tearDown()
