"""The composer's `/` prompts (MCP prompts/list, prompts/get) through /ai_mcp/prompts and
/ai_mcp/prompts/get, on a real FastMCP server with prompts, as the users they are for."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import ChatCase


@tagged("post_install", "-at_install")
class TestChatPrompts(ChatCase):
    mcp_options = ("--prompts",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.service, cls.service_server = cls._other_users_service()

    def prompts(self, **params):
        return self.jsonrpc("/ai_mcp/prompts", {"assistant_id": self.assistant.id, **params})

    def prompt_text(self, server, name, arguments=None, **params):
        return self.jsonrpc(
            "/ai_mcp/prompts/get",
            {
                "assistant_id": self.assistant.id,
                "server_id": server.id,
                "name": name,
                "arguments": arguments,
                **params,
            },
        )

    def test_a_user_lists_the_prompts_of_the_assistants_servers_and_nothing_secret(self):
        self.login(self.user)
        result = self.prompts()["result"]
        self.assertEqual(result["warnings"], [])
        by_name = {p["name"]: p for p in result["prompts"]}
        self.assertEqual(sorted(by_name), ["daily_summary", "greeting", "review"])
        greeting = by_name["greeting"]
        self.assertEqual(
            greeting,
            {
                "server_id": self.server.id,
                "server": "Test tools",
                "name": "greeting",
                "title": "Write a greeting",
                "description": "A greeting for someone, in a style.",
                "arguments": [
                    {"name": "name", "description": None, "required": True},
                    {"name": "style", "description": None, "required": False},
                ],
                "completions": False,
            },
        )
        self.assertNotIn(self.mcp.url, str(result))

    def test_a_prompt_starts_the_turn_as_the_users_message(self):
        self.login(self.user)
        text = self.prompt_text(self.server, "greeting", {"name": "Ada", "style": "formal"})["result"]["text"]
        self.assertEqual(text, "Write a formal greeting for Ada.")
        self.llm.queue(Turn(text="Dear Ada, welcome."))
        _response, events = self.send(text)
        self.assertEqual(events[-1].event, "done")
        conversation = self.conversation(events[0].data["conversation_id"])
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "user").content, "Write a formal greeting for Ada."
        )
        self.assertEqual(
            self.llm.requests[-1]["messages"][-1], {"role": "user", "content": "Write a formal greeting for Ada."}
        )

    def test_a_missing_required_argument_is_named_and_nothing_is_stored(self):
        self.login(self.user)
        reply = self.prompt_text(self.server, "greeting", {"style": "warm"})["result"]
        self.assertEqual(
            reply["error"],
            {
                "code": "MCP_INVALID_PARAMS",
                "message": "MCP_INVALID_PARAMS: The prompt greeting needs name: fill them in and send it again.",
            },
        )
        gone = self.prompt_text(self.server, "no_such_prompt", {})["result"]
        self.assertEqual(gone["error"]["code"], "PROMPT_NOT_FOUND")
        self.assertFalse(self.env["ai.conversation"].search([("user_id", "=", self.user.id)]))

    def test_a_cloud_services_prompts_are_for_its_users_only(self):
        self.login(self.other)
        mine = self.prompts(cloud_service_id=self.service.id)["result"]["prompts"]
        self.assertEqual({p["server"] for p in mine}, {"Test tools", "Service tools"})
        self.assertEqual(
            self.prompt_text(self.service_server, "daily_summary", cloud_service_id=self.service.id)["result"]["text"],
            "Summarise what happened today in three bullet points.",
        )

        self.login(self.user)
        self.assertEqual({p["server"] for p in self.prompts()["result"]["prompts"]}, {"Test tools"})
        for refused in (
            self.prompts(cloud_service_id=self.service.id),
            self.prompt_text(self.service_server, "daily_summary"),
            self.prompt_text(self.service_server, "daily_summary", cloud_service_id=self.service.id),
        ):
            self.assertEqual(refused["error"]["data"]["name"], "werkzeug.exceptions.NotFound", refused)

    def test_a_server_that_cannot_be_reached_is_named_and_the_others_still_listed(self):
        broken = self.env["mcp.server"].create(
            {"name": "Gone", "scope": "system", "url": "http://127.0.0.1:9/mcp", "state": "connected"}
        )
        self.assistant.mcp_server_ids = [(4, broken.id)]
        self.login(self.user)
        result = self.prompts()["result"]
        self.assertEqual({p["server"] for p in result["prompts"]}, {"Test tools"})
        self.assertEqual(len(result["warnings"]), 1)
        self.assertTrue(
            result["warnings"][0].startswith("The prompts of Gone are not available: MCP_UNREACHABLE"),
            result["warnings"],
        )
