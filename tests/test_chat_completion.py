"""Suggestions as the user types a prompt's argument or a resource template's value (MCP
completion/complete) through /ai_mcp/complete, on real FastMCP servers: one that completes, one that
does not declare the capability."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatCompletion(ChatCase):
    mcp_options = ("--prompts", "--resources", "--completions")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.plain_mcp = HttpServer("streamable-http", "--prompts", "--resources").start()
        cls.addClassCleanup(cls.plain_mcp.stop)
        cls.plain = cls.env["mcp.server"].create({"name": "Plain tools", "scope": "system", "url": cls.plain_mcp.url})
        result = cls.plain._sync_tools()
        assert not result.get("error"), result
        cls.assistant.mcp_server_ids = [(4, cls.plain.id)]
        cls.service, cls.service_server = cls._other_users_service()

    def complete(self, server, argument, value, prompt=None, template=None, arguments=None, **params):
        body = {
            "assistant_id": self.assistant.id,
            "server_id": server.id,
            "argument": argument,
            "value": value,
            "arguments": arguments,
            **params,
        }
        body.update({"prompt": prompt} if template is None else {"template": template})
        return self.jsonrpc("/ai_mcp/complete", body)

    def test_the_listings_say_which_servers_complete(self):
        self.login(self.user)
        prompts = self.jsonrpc("/ai_mcp/prompts", {"assistant_id": self.assistant.id})["result"]["prompts"]
        self.assertEqual(
            {(p["server"], p["name"]): p["completions"] for p in prompts if p["name"] == "greeting"},
            {("Test tools", "greeting"): True, ("Plain tools", "greeting"): False},
        )
        servers = self.jsonrpc("/ai_mcp/resources", {"assistant_id": self.assistant.id})["result"]["servers"]
        self.assertEqual({s["server"]: s["completions"] for s in servers}, {"Test tools": True, "Plain tools": False})

    def test_a_prompt_argument_is_completed_from_what_is_typed(self):
        self.login(self.user)
        self.assertEqual(
            self.complete(self.server, "name", "al", prompt="greeting")["result"],
            {"values": ["Alan", "Alonzo"], "has_more": False},
        )

    def test_the_values_already_filled_in_go_with_the_request(self):
        self.login(self.user)
        for_ada = self.complete(self.server, "style", "f", prompt="greeting", arguments={"name": "Ada"})["result"]
        self.assertEqual(for_ada["values"], ["formal", "friendly"])
        for_nobody = self.complete(self.server, "style", "w", prompt="greeting", arguments={})["result"]
        self.assertEqual(for_nobody["values"], ["warm", "witty"])

    def test_a_template_value_is_completed(self):
        self.login(self.user)
        answer = self.complete(self.server, "day", "2026-01", template="notes://day/{day}")["result"]
        self.assertEqual(answer["values"], ["2026-01-01", "2026-01-02"])

    def test_the_most_a_server_may_answer_comes_back_saying_there_are_more(self):
        self.login(self.user)
        answer = self.complete(self.server, "name", "many", prompt="greeting")["result"]
        self.assertEqual(len(answer["values"]), 100)
        self.assertEqual(answer["values"][:2], ["many000", "many001"])
        self.assertTrue(answer["has_more"])

    def last_request(self, server):
        """When the process's pooled session to `server` last sent a request (monotonic)."""
        hub = running_hub()
        return hub.pool.get(server._server_spec().pool_key).last_used

    def test_a_server_without_the_capability_is_not_asked(self):
        self.login(self.user)
        self.jsonrpc("/ai_mcp/prompts", {"assistant_id": self.assistant.id})
        plain_before, completing_before = self.last_request(self.plain), self.last_request(self.server)
        answer = self.complete(self.plain, "name", "al", prompt="greeting")["result"]
        self.assertEqual(answer, {"values": [], "has_more": False})
        self.assertEqual(self.last_request(self.plain), plain_before, "no request reached the server")
        self.complete(self.server, "name", "al", prompt="greeting")
        self.assertNotEqual(self.last_request(self.server), completing_before, "a completing server is asked")

    def test_a_slow_server_answers_nothing(self):
        # the log line (server and duration) is asserted in tests_py/test_completion.py
        self.login(self.user)
        late = self.complete(self.server, "name", "slow", prompt="greeting")["result"]
        self.assertEqual(late, {"values": [], "has_more": False})
        unknown = self.complete(self.server, "name", "a", prompt="no_such_prompt")["result"]
        self.assertEqual(unknown, {"values": [], "has_more": False})

    def test_a_server_the_user_may_not_use_is_refused(self):
        self.login(self.user)
        for refused in (
            self.complete(self.service_server, "name", "al", prompt="greeting"),
            self.complete(self.service_server, "name", "al", prompt="greeting", cloud_service_id=self.service.id),
        ):
            self.assertEqual(refused["error"]["data"]["name"], "werkzeug.exceptions.NotFound", refused)
        self.login(self.other)
        mine = self.complete(self.service_server, "name", "al", prompt="greeting", cloud_service_id=self.service.id)
        self.assertEqual(mine["result"]["values"], ["Alan", "Alonzo"])
        self.login(self.outsider)
        outsider = self.complete(self.server, "name", "al", prompt="greeting")
        self.assertIn("error", outsider)

    def test_a_malformed_request_is_refused(self):
        self.login(self.user)
        reply = self.complete(self.server, "name", "al", prompt="greeting", arguments=["Ada"])["result"]
        self.assertEqual(reply["error"]["code"], "INVALID_REQUEST")
        neither = self.jsonrpc(
            "/ai_mcp/complete",
            {"assistant_id": self.assistant.id, "server_id": self.server.id, "argument": "name", "value": "a"},
        )["result"]
        self.assertEqual(neither["error"]["code"], "INVALID_REQUEST")
