"""The tools an app calls through /ai_mcp/app/call_tool: only its own server's tools that the
assistant may use and that apps may call, with valid arguments, after the user's approval where
needed; each call audited as the app's."""

from odoo.tests import tagged

from .app_common import AppCase
from .common import DEAD_SYSTEM_URL


@tagged("post_install", "-at_install")
class TestAppCallTool(AppCase):
    def call(self, conversation_id, name, arguments=None, **params):
        return self.app("call_tool", conversation_id, name=name, arguments=arguments or {}, **params)

    def audited(self, conversation_id):
        self.env.invalidate_all()
        return self.env["ai.tool.call"].search([("conversation_id", "=", conversation_id), ("origin", "=", "app")])

    def test_an_app_calls_an_app_only_tool_of_its_server_and_the_call_is_audited(self):
        self.login(self.user)
        conversation_id = self.show()
        result = self.call(conversation_id, "refresh_board", {"project": "alpha"})
        self.assertEqual(
            result["structuredContent"], {"project": "alpha", "tasks": ["write the spec", "ship it"], "refreshed": True}
        )
        self.assertFalse(result["isError"])
        self.assertEqual(result["content"][0]["type"], "text")
        [row] = self.audited(conversation_id)
        self.assertEqual(
            (row.user_id, row.server_id, row.tool_id, row.tool_name, row.call_id, row.status),
            (self.user, self.board, self.board_tools["refresh_board"], "refresh_board", "call_board", "ok"),
        )
        model_rows = self.env["ai.tool.call"].search(
            [("conversation_id", "=", conversation_id), ("origin", "=", "model")]
        )
        self.assertEqual(model_rows.mapped("tool_name"), ["show_board"])

    def test_tools_the_app_may_not_call_are_refused_saying_why(self):
        self.login(self.user)
        conversation_id = self.show()
        self.assertEqual(
            self.call(conversation_id, "archive_board", {"project": "alpha"})["error"],
            {
                "code": "TOOL_DENIED",
                "message": "archive_board of Board is not available in this conversation: it is disabled, or changed "
                "since it was approved.",
            },
        )
        self.assertEqual(
            self.call(conversation_id, "echo", {"text": "hi"})["error"],
            {
                "code": "MCP_TOOL_NOT_FOUND",
                "message": "echo is not a tool of Board: an app calls only the tools of its own server.",
            },
        )
        self.assertEqual(
            self.call(conversation_id, "summarize_board", {"project": "alpha"})["error"],
            {
                "code": "TOOL_DENIED",
                "message": "summarize_board of Board is for the model only: its apps may not call it.",
            },
        )
        self.assertEqual(
            sorted(self.audited(conversation_id).mapped(lambda r: (r.tool_name, r.status))),
            [("archive_board", "denied"), ("echo", "denied"), ("summarize_board", "denied")],
        )

    def test_a_tool_that_needs_approval_waits_for_the_users(self):
        self.login(self.user)
        conversation_id = self.show()
        self.assertTrue(self.board_tools["move_task"].requires_approval)
        arguments = {"task": "ship it", "column": "done"}
        asked = self.call(conversation_id, "move_task", arguments)["error"]
        self.assertEqual(asked["code"], "APPROVAL_REQUIRED")
        self.assertEqual(asked["message"], "Move task runs only once you allow it.")
        self.assertEqual(
            asked["tool"], {"name": "move_task", "title": "Move task", "description": "Move a task to another column."}
        )
        self.assertEqual(asked["arguments"], arguments)
        self.assertFalse(self.audited(conversation_id), "nothing ran yet")
        result = self.call(conversation_id, "move_task", arguments, approved=True)
        self.assertEqual(result["content"], [{"type": "text", "text": "moved ship it to done"}])
        self.assertEqual(self.audited(conversation_id).mapped("status"), ["ok"])

    def test_invalid_arguments_are_refused_naming_the_field(self):
        self.login(self.user)
        conversation_id = self.show()
        refused = self.call(conversation_id, "refresh_board", {"project": 5})["error"]
        self.assertEqual(
            refused,
            {
                "code": "MCP_INVALID_PARAMS",
                "message": "Invalid arguments for refresh_board: arguments.project: 5 is not of type 'string'",
            },
        )
        self.assertEqual(self.call(conversation_id, "refresh_board", "alpha")["error"]["code"], "INVALID_REQUEST")
        self.assertEqual(self.audited(conversation_id).mapped("error_code"), ["MCP_INVALID_PARAMS"])

    def test_a_server_that_fails_is_named_with_the_tool(self):
        self.login(self.user)
        conversation_id = self.show()
        # another address: what the pool learns of the dead one never touches the board's
        self.board.with_context(ai_mcp_keep_state=True).write({"url": DEAD_SYSTEM_URL})
        failed = self.call(conversation_id, "refresh_board", {"project": "alpha"})["error"]
        self.assertEqual(failed["code"], "MCP_UNREACHABLE")
        self.assertTrue(failed["message"].startswith("Refresh board failed: MCP_UNREACHABLE: "), failed["message"])
        self.assertEqual(self.audited(conversation_id).mapped("status"), ["error"])

    def test_a_question_of_the_tool_is_declined_at_once_and_the_app_told_why(self):
        self.login(self.user)
        conversation_id = self.show()
        result = self.call(conversation_id, "rename_board", {"project": "alpha"})
        self.assertEqual(
            [part["text"] for part in result["content"]],
            [
                "alpha not renamed: decline",
                "Rename board asked a question that a call made by an app cannot answer, so it was declined: "
                "What should alpha be called?",
            ],
        )
        self.assertEqual(self.audited(conversation_id).mapped("status"), ["ok"])

    def test_another_users_conversation_is_not_found(self):
        self.login(self.user)
        conversation_id = self.show()
        self.login(self.other)
        self.assertNotFound(self.call(conversation_id, "refresh_board", {"project": "alpha"}))
