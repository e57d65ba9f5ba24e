"""Apps that call tools needing approval, in a real browser (static/tests/tours/ai_mcp_app_approval_tour.js),
with the apps of testing/mcp_apps_approvals_server.py over streamable HTTP and the scripted LLM.

- A dashboard polls its app-only tool, three calls at once then one by one: the user is asked once,
  allows it for this app in this conversation, and every poll runs; after a reload it polls again
  without asking.
- A chart fetches its data with the tool the model called while that call waits for approval: the
  app's call waits for that question (no dialog over it); the user allows the model's call for this
  conversation, the app's call runs, and after a reload the app fetches without asking; the user
  then revokes the approval from the chat's header.
- The same chart, its model's call allowed once: the app's fetch asks, naming the tool once, and
  runs allowed once.

Odoo skips browser tests silently when websocket-client or Chromium is missing, so the test fails
instead (set AI_MCP_BROWSER_OPTIONAL=1 to allow skipping)."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.testing.mcp_apps_approvals_server import PROGRAM, STATS_URI
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .app_common import AppTourCase
from .browser import browser_prepared

APP_SAYS = "App says: "
POLLS = 6


class AppsModel:
    """Calls the dashboard or the chart as asked, answers its result briefly, and numbers its
    answers to what the apps say."""

    def __init__(self):
        self.heard = 0

    def __call__(self, body):
        messages = body.get("messages", [])
        last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
        asked = messages[last_user]["content"]
        if isinstance(asked, list):
            asked = " ".join(part.get("text", "") for part in asked)
        if asked.startswith(APP_SAYS):
            self.heard += 1
            return Turn(text=f"Got it #{self.heard}.")
        if any(message.get("role") == "tool" for message in messages[last_user:]):
            return Turn(text="Here it is.")
        if "stats" in asked:
            return Turn(tool_calls=(ToolCall("show_stats", {"polls": POLLS, "interval_ms": 300}),))
        return Turn(tool_calls=(ToolCall("show_cohort", {"metric": "retention"}),))


@tagged("post_install", "-at_install")
class TestAppApprovalTour(AppTourCase):
    program = PROGRAM
    server_name = "Monitor"

    def responder(self):
        return AppsModel()

    def setUp(self):
        super().setUp()
        # as the official examples come: no read-only annotation, so approval is required
        self.assertEqual(
            {name: tool.requires_approval for name, tool in self.tools.items()},
            {"show_stats": False, "poll_stats": True, "show_cohort": True},
        )

    def audit(self, tool):
        rows = self.env["ai.tool.call"].search([("tool_name", "=", tool)], order="id")
        return [(row.origin, row.status, row.approval, row.approved_by_id) for row in rows]

    def test_a_polling_app_asks_once_and_polls_on_after_a_reload(self):
        self.start_tour(
            "/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_app_polling_tour", login=self.user.login, timeout=180
        )
        # every poll ran, the three that waited together and all after them, before and after the reload
        self.assertEqual(self.audit("poll_stats"), [("app", "ok", "app", self.user)] * (2 * POLLS))
        conversation = self.env["ai.conversation"].search([("user_id", "=", self.user.id)])
        said = conversation.message_ids.filtered(lambda m: m.role == "user" and m.app_call_id).mapped("content")
        self.assertEqual(said, [f"{APP_SAYS}polled={POLLS} ok={POLLS} declined=0 waited=3"] * 2)
        remembered = self.env["ai.conversation.approval"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual(
            [(r.tool_id, r.scope, r.app_uri, r.user_id) for r in remembered],
            [(self.tools["poll_stats"], "app", STATS_URI, self.user)],
        )

    def test_an_app_refetching_what_the_model_was_allowed_for_is_not_asked_again(self):
        self.start_tour(
            "/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_app_refetch_tour", login=self.user.login, timeout=180
        )
        # the app's first fetch runs as soon as the answer is stored, maybe before the model's call ends
        self.assertCountEqual(
            self.audit("show_cohort"),
            [("model", "ok", "conversation", self.user)] + [("app", "ok", "conversation", self.user)] * 2,
        )
        conversation = self.env["ai.conversation"].search([("user_id", "=", self.user.id)])
        said = conversation.message_ids.filtered(lambda m: m.role == "user" and m.app_call_id).mapped("content")
        self.assertEqual(said, [f"{APP_SAYS}refetch=ok metric=revenue"] * 2)
        # the user revoked it at the end of the tour
        self.assertFalse(self.env["ai.conversation.approval"].search([("conversation_id", "=", conversation.id)]))

    def test_an_app_fetch_after_the_models_call_allowed_once_asks_and_runs_once(self):
        # focused as a window in front: the dialog's focus shows
        with browser_prepared(self, focus=True):
            self.start_tour(
                "/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_app_allow_once_tour", login=self.user.login, timeout=180
            )
        self.assertCountEqual(
            self.audit("show_cohort"), [("model", "ok", "once", self.user), ("app", "ok", "once", self.user)]
        )
