"""An MCP App in the AI chat, in a real browser (static/tests/tours/ai_mcp_app_tour.js): the counter
server of testing/mcp_apps_server.py over streamable HTTP, its app rendered by the chat's widget in
the sandbox page, the agent loop against the scripted LLM.

The model calls `show_counter` with a script its app plays once it has the result: add 1 through
`counter_add` (app only), call `reset_counter` (disabled for the assistant: refused), probe what
its sandbox lets through, tell the model "counter is 6", and send the chat a message with what it
found. The model answers that message; the tour then reloads the page and the app renders again
from the stored result, without calling the tool again, and plays its script once more.

Odoo skips browser tests silently when websocket-client or Chromium is missing, so the test fails
instead (set AI_MCP_BROWSER_OPTIONAL=1 to allow skipping)."""

import socket

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .app_common import AppTourCase
from .browser import browser_prepared

APP_SAYS = "App says: "
SCRIPT = "add,forbidden,probe,context,message"


def closed_port():
    """A port nothing listens on: the app's probe of an origin its resource does not declare."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class CounterModel:
    """Asks for the counter, answers its result briefly, and answers what the app says."""

    def __init__(self, arguments):
        self.arguments = arguments

    def __call__(self, body):
        messages = body.get("messages", [])
        last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
        asked = messages[last_user]["content"]
        if isinstance(asked, list):
            asked = " ".join(part.get("text", "") for part in asked)
        if asked.startswith(APP_SAYS):
            return Turn(text="Got it: " + asked[len(APP_SAYS) :][:40], chunks=3)
        if any(message.get("role") == "tool" for message in messages[last_user:]):
            return Turn(text="Here is your counter.", chunks=2)
        return Turn(tool_calls=(ToolCall("show_counter", self.arguments),), arg_chunks=6)


@tagged("post_install", "-at_install")
class TestAppTour(AppTourCase):
    server_name = "Counter server"
    assistant_name = "Counter assistant"

    def responder(self):
        self.arguments = {
            "start": 5,
            "script": SCRIPT,
            "odoo": self.base_url(),
            "undeclared": f"http://localhost:{closed_port()}",
        }
        return CounterModel(self.arguments)

    def assistant_values(self):
        reset = self.server.tool_ids.filtered(lambda tool: tool.name == "reset_counter")
        return {"mcp_tool_disabled_ids": [(6, 0, reset.ids)]}

    def setUp(self):
        super().setUp()
        self.tools["show_counter"].requires_approval = False
        self.tools["counter_add"].requires_approval = False

    def test_the_counter_app_runs_in_the_chat_and_renders_again_after_a_reload(self):
        # the browser prefers dark, the chat is light: the app must be told light, by its frame too
        with browser_prepared(self, prefers="dark"):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_app_tour", login=self.user.login, timeout=180)

        # the app played its script twice: once shown, once shown again after the reload
        audit = self.env["ai.tool.call"].search([("server_id", "=", self.server.id)], order="id")
        calls = [(call.origin, call.tool_name, call.status) for call in audit]
        self.assertEqual(
            calls,
            [("model", "show_counter", "ok")] + [("app", "counter_add", "ok"), ("app", "reset_counter", "denied")] * 2,
            "show_counter ran once: the reload shows its stored result; the disabled tool never ran",
        )
        self.assertEqual({call.user_id for call in audit}, {self.user})

        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(len(conversation), 1)
        shown = conversation.message_ids.filtered(lambda m: m.tool_name == "show_counter")
        via_app = conversation.message_ids.filtered(lambda m: m.role == "user" and m.app_call_id).sorted("seq")
        self.assertEqual(
            [m.content[: len(APP_SAYS) + 8] for m in via_app], [APP_SAYS + "count=6;", APP_SAYS + "count=7;"]
        )
        self.assertEqual(set(via_app.mapped("app_call_id")), {shown.tool_call_id})
        self.assertEqual(set(via_app.mapped("app_title")), {"Counter"})
        self.assertIn("declared=ok", via_app[0].content)

        # the model: the call, the short answer, then each app message, with what the app last told it
        self.assertEqual(len(self.llm.requests), 4)
        systems = [self.system_prompt(request) for request in self.llm.requests]
        self.assertNotIn("counter is", systems[0])
        self.assertIn("counter is 6", systems[2])
        self.assertIn("counter is 7", systems[3])
        self.assertNotIn("counter is 6", systems[3])

    def test_odoos_dark_cookie_on_a_page_odoo_renders_light_keeps_the_app_light(self):
        # Community has no dark scheme: with Odoo's dark cookie its pages stay light, so must the app
        with browser_prepared(self, prefers="dark"):
            self.start_tour(
                "/odoo/action-ai_mcp.action_ai_chat",
                "ai_mcp_app_tour",
                login=self.user.login,
                timeout=180,
                cookies={"color_scheme": "dark"},
            )

    def test_the_answer_stays_in_view_below_an_app_that_grows(self):
        self.arguments.update(start=1, script="grow")
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_app_scroll_tour", login=self.user.login)

    @staticmethod
    def system_prompt(request):
        return " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")
