"""Approvals the user remembers: "Allow for this conversation" (the model's and its apps' later calls
of that tool in the conversation run without asking) and "Allow for this app in this conversation";
the administrator's "read-only" and "apps call without asking" on a tool; the audit row of each
call saying who allowed it and how. A remembered approval covers one conversation, one tool and
its user only."""

from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .app_common import AppCase
from .chat_common import AI_USER_GROUPS, types_of

BOARD_URI = "ui://board/app.html"


@tagged("post_install", "-at_install")
class TestRememberedApprovals(AppCase):
    def setUp(self):
        super().setUp()
        # the board's tool for the model and its app, as an administrator who wants it asked for
        self.show_board = self.board_tools["show_board"]
        self.show_board.requires_approval = True
        self.move_task = self.board_tools["move_task"]
        self.assertTrue(self.move_task.requires_approval)

    def ask_board(self, call_id="call_board", conversation_id=None):
        """The model calls show_board: the events of the turn, paused for the user's approval."""
        self.llm.queue(Turn(tool_calls=(ToolCall("show_board", {"project": "alpha"}, id=call_id),)))
        body = {"conversation_id": conversation_id} if conversation_id else {}
        _response, events = self.send("Show me the board", **body)
        return events

    def call(self, conversation_id, name, arguments=None, call_id="call_board", **params):
        return self.app("call_tool", conversation_id, call_id=call_id, name=name, arguments=arguments or {}, **params)

    def audit(self, conversation_id):
        self.env.invalidate_all()
        rows = self.env["ai.tool.call"].search([("conversation_id", "=", conversation_id)], order="id")
        return [(r.origin, r.tool_name, r.status, r.approval or None, r.approved_by_id.login or None) for r in rows]

    def remembered(self, conversation_id):
        self.env.invalidate_all()
        rows = self.env["ai.conversation.approval"].search([("conversation_id", "=", conversation_id)])
        return sorted((r.tool_id.name, r.scope, r.app_uri or None, r.user_id.login) for r in rows)

    def test_allowed_for_the_conversation_the_next_model_call_and_the_apps_run_without_asking(self):
        self.login(self.user)
        events = self.ask_board()
        self.assertEqual(events[-1].event, "approval_required")
        conversation_id = events[0].data["conversation_id"]
        self.llm.queue(Turn(text="Here it is."))
        _response, resumed = self.resume(conversation_id, approvals={"call_board": "conversation"})
        self.assertEqual(resumed[-1].event, "done", [e.data for e in resumed])
        self.assertEqual(self.remembered(conversation_id), [("show_board", "conversation", None, "chat_user")])

        # the app re-fetches what the model's call was allowed for: it is not asked again
        result = self.call(conversation_id, "show_board", {"project": "alpha"})
        self.assertEqual(result["structuredContent"], {"project": "alpha", "tasks": ["write the spec", "ship it"]})
        # another tool of the same server is not covered
        self.assertEqual(
            self.call(conversation_id, "move_task", {"task": "a", "column": "b"})["error"]["code"], "APPROVAL_REQUIRED"
        )

        # the model's next call of the tool runs at once, in this turn and the next
        self.llm.queue(
            Turn(tool_calls=(ToolCall("show_board", {"project": "beta"}, id="call_again"),)), Turn(text="Again.")
        )
        _response, again = self.send("Once more", conversation_id=conversation_id)
        self.assertEqual(types_of(again)[-1], "done", [e.data for e in again])
        self.assertNotIn("approval_required", types_of(again))
        self.assertEqual(
            self.audit(conversation_id),
            [
                ("model", "show_board", "ok", "conversation", "chat_user"),
                ("app", "show_board", "ok", "conversation", "chat_user"),
                ("model", "show_board", "ok", "conversation", "chat_user"),
            ],
        )

    def test_allowed_once_the_next_call_asks_again(self):
        self.login(self.user)
        conversation_id = self.ask_board()[0].data["conversation_id"]
        self.llm.queue(Turn(text="Here it is."))
        self.resume(conversation_id, approvals={"call_board": "once"})
        self.assertEqual(self.remembered(conversation_id), [])
        self.assertEqual(
            self.call(conversation_id, "show_board", {"project": "alpha"})["error"]["code"], "APPROVAL_REQUIRED"
        )
        self.assertEqual(
            self.call(conversation_id, "show_board", {"project": "alpha"}, approved="once")["isError"], False
        )
        self.assertEqual(
            self.audit(conversation_id),
            [("model", "show_board", "ok", "once", "chat_user"), ("app", "show_board", "ok", "once", "chat_user")],
        )
        events = self.ask_board(call_id="call_next", conversation_id=conversation_id)
        self.assertEqual(events[-1].event, "approval_required")

    def test_a_denial_stands_beside_a_call_of_the_same_tool_allowed_for_the_conversation(self):
        self.login(self.user)
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("show_board", {"project": "alpha"}, id="call_yes"),
                    ToolCall("show_board", {"project": "beta"}, id="call_no"),
                )
            ),
            Turn(text="One of two."),
        )
        _response, events = self.send("Two boards")
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual([c["id"] for c in events[-1].data["calls"]], ["call_yes", "call_no"])
        _response, resumed = self.resume(conversation_id, approvals={"call_yes": "conversation", "call_no": False})
        results = {e.data["id"]: e.data for e in resumed if e.event == "tool_result"}
        self.assertTrue(results["call_yes"]["ok"])
        self.assertEqual(results["call_no"]["error_code"], "TOOL_DENIED")
        self.assertCountEqual(
            self.audit(conversation_id),
            [("model", "show_board", "ok", "conversation", "chat_user"), ("model", "show_board", "denied", None, None)],
        )

    def test_allowed_for_the_app_its_later_calls_run_and_nothing_else_is_covered(self):
        self.login(self.user)
        self.show_board.requires_approval = False
        conversation_id = self.show()
        arguments = {"task": "ship it", "column": "done"}
        self.assertEqual(self.call(conversation_id, "move_task", arguments)["error"]["code"], "APPROVAL_REQUIRED")
        self.assertFalse(self.call(conversation_id, "move_task", arguments, approved="app")["isError"])
        # the app's waiting calls, answered by the same decision, remember it once
        self.assertFalse(self.call(conversation_id, "move_task", arguments, approved="app")["isError"])
        self.assertEqual(self.remembered(conversation_id), [("move_task", "app", BOARD_URI, "chat_user")])
        self.assertFalse(self.call(conversation_id, "move_task", arguments)["isError"], "remembered: not asked")
        self.assertEqual(
            [row for row in self.audit(conversation_id) if row[0] == "app"],
            [("app", "move_task", "ok", "app", "chat_user")] * 3,
        )
        # another conversation of the same user asks again
        other_id = self.show()
        self.assertNotEqual(other_id, conversation_id)
        self.assertEqual(self.call(other_id, "move_task", arguments)["error"]["code"], "APPROVAL_REQUIRED")

    def test_an_approval_answer_that_means_nothing_is_refused(self):
        self.login(self.user)
        self.show_board.requires_approval = False
        conversation_id = self.show()
        refused = self.call(conversation_id, "move_task", {"task": "a", "column": "b"}, approved="forever")["error"]
        self.assertEqual(refused["code"], "INVALID_REQUEST")
        self.assertEqual(self.remembered(conversation_id), [])
        self.show_board.requires_approval = True
        events = self.ask_board(conversation_id=conversation_id, call_id="call_odd")
        response = self.post(
            "/ai_mcp/chat/resume", {"conversation_id": conversation_id, "approvals": {"call_odd": "always"}}
        )
        self.assertEqual(response.status_code, 400, response.text)
        self.assertEqual(events[-1].event, "approval_required")
        self.assertEqual(self.remembered(conversation_id), [])

    def test_the_administrator_marks_a_tool_read_only_or_free_for_apps(self):
        self.login(self.user)
        self.show_board.write({"marked_read_only": True})
        self.move_task.write({"app_approval_free": True})
        self.llm.queue(
            Turn(tool_calls=(ToolCall("show_board", {"project": "alpha"}, id="call_board"),)), Turn(text="Done.")
        )
        _response, events = self.send("Show me the board")
        self.assertEqual(types_of(events)[-1], "done", "a tool checked read-only never asks")
        conversation_id = events[0].data["conversation_id"]
        self.assertFalse(self.call(conversation_id, "move_task", {"task": "a", "column": "b"})["isError"])
        self.assertFalse(self.call(conversation_id, "refresh_board", {"project": "alpha"})["isError"])
        self.assertEqual(
            self.audit(conversation_id),
            [
                ("model", "show_board", "ok", "read_only", None),
                ("app", "move_task", "ok", "not_required", None),
                ("app", "refresh_board", "ok", "not_required", None),
            ],
        )


@tagged("post_install", "-at_install")
class TestRememberedApprovalSecurity(AppCase):
    """A remembered approval is its user's, in their conversation, for that tool: another user's
    conversation and another tool are not covered, and nobody else reads or uses it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.third = new_test_user(cls.env, "chat_third", groups=AI_USER_GROUPS, name="Third User")
        cls.board_tools["move_task"].requires_approval = True

    def call(self, conversation_id, name, arguments=None, **params):
        return self.app("call_tool", conversation_id, name=name, arguments=arguments or {}, **params)

    def test_another_users_conversation_and_another_tool_are_not_covered(self):
        arguments = {"task": "ship it", "column": "done"}
        self.login(self.user)
        mine = self.show()
        self.assertFalse(self.call(mine, "move_task", arguments, approved="conversation")["isError"])
        self.assertFalse(self.call(mine, "move_task", arguments)["isError"], "remembered for my conversation")

        self.login(self.third)
        theirs = self.show()
        self.assertEqual(self.call(theirs, "move_task", arguments)["error"]["code"], "APPROVAL_REQUIRED")
        # nor can they use, remember in or read the first user's conversation
        self.assertNotFound(self.call(mine, "move_task", arguments))
        self.assertNotFound(self.call(mine, "move_task", arguments, approved="conversation"))
        Approval = self.env["ai.conversation.approval"].with_user(self.third)
        self.assertFalse(Approval.search([]))
        self.assertEqual(
            self.jsonrpc("/ai_mcp/chat/approvals", {"conversation_id": mine})["error"]["data"]["name"],
            "werkzeug.exceptions.NotFound",
        )
        self.env.invalidate_all()
        mine_rows = self.env["ai.conversation.approval"].search([("conversation_id", "=", mine)])
        self.assertEqual(mine_rows.mapped("user_id"), self.user)
        self.assertEqual(mine_rows.tool_id, self.board_tools["move_task"])
        self.assertFalse(self.env["ai.conversation.approval"].search([("conversation_id", "=", theirs)]))

    def test_the_user_lists_and_revokes_their_remembered_approvals_and_the_tool_asks_again(self):
        arguments = {"task": "ship it", "column": "done"}
        self.login(self.user)
        conversation_id = self.show()
        self.call(conversation_id, "move_task", arguments, approved="app")
        listed = self.jsonrpc("/ai_mcp/chat/approvals", {"conversation_id": conversation_id})["result"]
        self.assertEqual(
            [(a["tool"], a["title"], a["server"], a["scope"], a["app"]) for a in listed],
            [("move_task", "Move task", "Board", "app", BOARD_URI)],
        )
        left = self.jsonrpc(
            "/ai_mcp/chat/approvals/revoke", {"conversation_id": conversation_id, "approval_id": listed[0]["id"]}
        )["result"]
        self.assertEqual(left, [])
        self.assertEqual(self.call(conversation_id, "move_task", arguments)["error"]["code"], "APPROVAL_REQUIRED")

    def test_remembered_approvals_end_with_the_conversation(self):
        self.login(self.user)
        conversation_id = self.show()
        self.call(conversation_id, "move_task", {"task": "a", "column": "b"}, approved="conversation")
        conversation = self.env["ai.conversation"].browse(conversation_id)
        self.assertTrue(self.env["ai.conversation.approval"].search([("conversation_id", "=", conversation_id)]))
        conversation.unlink()
        self.assertFalse(self.env["ai.conversation.approval"].search([("conversation_id", "=", conversation_id)]))
