"""Audit and usage (ai.tool.call): one row per tool result of a real chat turn (the scripted LLM, a
real FastMCP server, the chat runner's own transactions), who may read them, and the retention cron."""

from datetime import timedelta

from odoo import fields
from odoo.exceptions import AccessError
from odoo.tests import HttpCase, new_test_user, tagged

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.models.ai_tool_call import argument_bytes
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM, ToolCall, Turn

from .common import AiMcpCase, _start_own

AI_USER_GROUPS = "base.group_user,ai_mcp.group_ai_user"


class ChatTurnCase(HttpCase):
    """Runs real chat turns in-process, as the SSE route does (ai.conversation._chat_send, then
    ChatTurn.events()), without HTTP. HttpCase puts the registry in test mode, so the cursors the
    chat runner opens for each event share this test's transaction. No test here: subclasses
    (also in test_presets) add them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True, mail_notrack=True))
        cls.llm = ScriptedLLM(api_key="sk-audit")
        cls.llm.start()
        cls.addClassCleanup(cls.llm.close)
        cls.mcp = cls._start_mcp()
        cls.addClassCleanup(cls.mcp.stop)

        cls.user = new_test_user(cls.env, "audit_user", groups=AI_USER_GROUPS, name="Audit User")
        cls.other = new_test_user(cls.env, "audit_other", groups=AI_USER_GROUPS, name="Other User")
        cls.manager = new_test_user(
            cls.env, "audit_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Audit Manager"
        )
        cls.provider = cls.env["ai.provider"].create(
            {"name": "Scripted", "base_url": cls.llm.base_url, "api_key": "sk-audit", "default_model": "scripted-model"}
        )
        cls.server = cls.env["mcp.server"].create({"name": "Test tools", "scope": "system", "url": cls.mcp.url})
        result = cls.server._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_sessions)
        cls.tools = {tool.name: tool for tool in cls.server.tool_ids}
        cls.server.tool_ids.requires_approval = False  # tests that want an approval ask for it
        cls.assistant = cls.env["ai.assistant"].create(
            {
                "name": "Auditor",
                "provider_id": cls.provider.id,
                "mcp_server_ids": [(6, 0, cls.server.ids)],
            }
        )

    @classmethod
    def _start_mcp(cls):
        for _attempt in range(5):
            http = HttpServer("streamable-http")
            if _start_own(http):
                return http
            http.stop()
        raise RuntimeError("could not start a test MCP server on a port of its own")

    @classmethod
    def _close_sessions(cls):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(cls.server._server_key()))

    def setUp(self):
        super().setUp()
        self.llm.reset()

    def chat(self, user, message, cloud_service=None, conversation=None):
        """One turn as `user`: (ai.conversation, [event]) once it ended or paused."""
        Conversation = self.env["ai.conversation"].with_user(user)
        turn = Conversation._chat_send(
            self.assistant.id,
            message,
            conversation_id=conversation.id if conversation else None,
            cloud_service_id=cloud_service.id if cloud_service else None,
        )
        return self._run(turn)

    def resume(self, user, conversation, **answer):
        turn = conversation.with_user(user)._chat_resume(**answer)
        return self._run(turn)

    def _run(self, turn):
        self.env.flush_all()
        events = [event for item in turn.events() if item is not None for event in [item[1]]]
        self.env.invalidate_all()
        return self.env["ai.conversation"].browse(turn.conversation_id), events

    @staticmethod
    def results(events):
        return {event.id: event for event in events if event.type == "tool_result"}


@tagged("post_install", "-at_install")
class TestAuditFromChat(ChatTurnCase):
    def test_each_tool_result_of_a_turn_is_one_audit_row(self):
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("add", {"a": 2, "b": 3}, id="call_add"),
                    ToolCall("fail", {"reason": "kaputt"}, id="call_fail"),
                )
            ),
            Turn(text="2 + 3 = 5; the other tool failed."),
        )
        conversation, events = self.chat(self.user, "Add 2 and 3, then try the failing tool.")
        self.assertEqual(events[-1].type, "done", [e.type for e in events])
        results = self.results(events)

        calls = self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual(len(calls), 2)
        add = calls.filtered(lambda c: c.call_id == "call_add")
        fail = calls.filtered(lambda c: c.call_id == "call_fail")
        for call in calls:
            self.assertEqual(call.user_id, self.user)
            self.assertEqual(call.assistant_id, self.assistant)
            self.assertFalse(call.cloud_service_id)
            self.assertEqual(call.server_id, self.server)
            self.assertEqual(call.server_name, "Test tools")
            self.assertLessEqual(call.date, fields.Datetime.now())
        self.assertEqual(
            (add.tool_id, add.tool_name, add.status, add.error_code), (self.tools["add"], "add", "ok", False)
        )
        self.assertEqual(add.duration_ms, results["call_add"].duration_ms)
        self.assertEqual(add.max_duration_ms, add.duration_ms)
        self.assertEqual(add.argument_bytes, len(b'{"a":2,"b":3}'))
        self.assertEqual(add.error_count, 0)
        self.assertEqual((fail.tool_id, fail.status), (self.tools["fail"], "error"))
        self.assertEqual(fail.error_code, results["call_fail"].error_code)
        self.assertTrue(fail.error_code)
        self.assertEqual(fail.error_count, 1)
        self.assertEqual(fail.argument_bytes, len(b'{"reason":"kaputt"}'))

    def test_a_denied_call_is_audited_as_denied(self):
        self.tools["echo"].requires_approval = True
        self.addCleanup(setattr, self.tools["echo"], "requires_approval", False)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("echo", {"text": "delete everything"}, id="call_echo"),)),
            Turn(text="You said no."),
        )
        conversation, events = self.chat(self.user, "Echo something risky.")
        self.assertEqual(events[-1].type, "approval_required")
        self.assertFalse(self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)]))

        conversation, events = self.resume(self.user, conversation, approvals={"call_echo": False})
        self.assertEqual(events[-1].type, "done", [e.type for e in events])
        call = self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual(
            (call.call_id, call.tool_name, call.status, call.error_code), ("call_echo", "echo", "denied", "TOOL_DENIED")
        )
        self.assertEqual(call.error_count, 0, "a denial is not a server error")

    def test_the_arguments_themselves_are_never_stored(self):
        secret = "s3cr3t-pa55word-value"
        self.llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": secret}, id="call_secret"),)), Turn(text="Done."))
        conversation, _events = self.chat(self.user, "Echo my password.")
        call = self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual(call.argument_bytes, argument_bytes({"text": secret}))
        stored = call.read()[0]
        self.assertFalse([name for name, value in stored.items() if secret in str(value)])

    def test_users_read_their_own_calls_managers_read_all_nobody_writes(self):
        self.llm.queue(
            Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 1}, id="call_mine"),)),
            Turn(text="2"),
            Turn(tool_calls=(ToolCall("fail", {}, id="call_theirs"),)),
            Turn(text="It failed."),
        )
        mine, _events = self.chat(self.user, "1 + 1?")
        theirs, _events = self.chat(self.other, "Fail, please.")
        ours = [("conversation_id", "in", (mine | theirs).ids)]
        Calls = self.env["ai.tool.call"]

        as_user = Calls.with_user(self.user).search(ours)
        self.assertEqual(as_user.mapped("call_id"), ["call_mine"])
        self.assertFalse(
            Calls.with_user(self.user).search(ours + [("status", "=", "error")]),
            "a filter does not reach past the record rule",
        )
        self.assertEqual(Calls.with_user(self.other).search(ours + [("status", "=", "error")]).call_id, "call_theirs")
        as_manager = Calls.with_user(self.manager).search(ours)
        self.assertEqual(set(as_manager.mapped("call_id")), {"call_mine", "call_theirs"})
        self.assertEqual(
            Calls.with_user(self.manager).search(ours + [("user_id", "=", self.other.id)]).call_id, "call_theirs"
        )
        groups = Calls.with_user(self.manager)._read_group(
            ours, ["server_id", "status"], ["__count", "error_count:sum"]
        )
        self.assertEqual(
            sorted((s.name, status, n, e) for s, status, n, e in groups),
            [("Test tools", "error", 1, 1), ("Test tools", "ok", 1, 0)],
        )
        with self.assertRaises(AccessError):
            Calls.with_user(self.user).browse(as_manager.filtered(lambda c: c.call_id == "call_theirs").id).read(
                ["status"]
            )

        for who in (self.user, self.manager):
            mine_as = as_user.with_user(who)
            with self.assertRaises(AccessError):
                mine_as.write({"status": "ok"})
            with self.assertRaises(AccessError):
                mine_as.unlink()
            with self.assertRaises(AccessError):
                Calls.with_user(who).create({"status": "ok", "tool_name": "forged"})

        # smart buttons count what the reader may see
        self.assertGreaterEqual(self.server.with_user(self.manager).tool_call_count, 2)
        self.assertEqual(
            self.assistant.with_user(self.other).tool_call_count,
            Calls.with_user(self.other).search_count([("assistant_id", "=", self.assistant.id)]),
        )
        action = self.server.with_user(self.manager).action_open_tool_calls()
        self.assertEqual(
            (action["res_model"], action["domain"]), ("ai.tool.call", [("server_id", "=", self.server.id)])
        )
        action = self.assistant.with_user(self.manager).action_open_tool_calls()
        self.assertEqual(action["domain"], [("assistant_id", "=", self.assistant.id)])


@tagged("post_install", "-at_install")
class TestAuditRetention(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.Calls = cls.env["ai.tool.call"].sudo()
        now = fields.Datetime.now()
        cls.fresh = cls.Calls.create(
            [
                {"status": "ok", "tool_name": f"fresh_{i}", "date": now - timedelta(days=days)}
                for i, days in enumerate((0, 1, 29))
            ]
        )
        # no row sits on a boundary: the purge computes its limit a few seconds after these dates
        cls.old = cls.Calls.create(
            [
                {"status": "error", "tool_name": f"old_{i}", "date": now - timedelta(days=days)}
                for i, days in enumerate((31, 89, 91, 400, 401))
            ]
        )

    def test_the_cron_removes_only_rows_older_than_the_retention_in_batches(self):
        self.set_param("ai_mcp.tool_call_retention_days", "30")
        removed = self.Calls._gc_tool_calls(batch=2)
        self.assertEqual(removed, 5)
        self.assertFalse(self.old.exists())
        self.assertEqual(self.fresh.exists(), self.fresh)

    def test_ninety_days_by_default_and_zero_keeps_everything(self):
        self.set_param("ai_mcp.tool_call_retention_days", False)
        self.assertEqual(self.Calls._retention_days(), 90)
        self.Calls._gc_tool_calls()
        self.assertEqual(set(self.old.exists().mapped("tool_name")), {"old_0", "old_1"})
        self.set_param("ai_mcp.tool_call_retention_days", "0")
        self.assertEqual(self.Calls._gc_tool_calls(), 0)
        self.assertEqual(len(self.old.exists()), 2)

    def test_the_daily_cron_runs_the_purge(self):
        cron = self.env.ref("ai_mcp.ir_cron_ai_tool_call_gc")
        self.assertTrue(cron.active)
        self.assertEqual((cron.interval_number, cron.interval_type), (1, "days"))
        self.assertEqual(self.env["ir.config_parameter"].sudo().get_param("ai_mcp.tool_call_retention_days"), "90")
        # what the scheduler runs, in this transaction (19's method_direct_trigger opens its own)
        cron.ir_actions_server_id.run()
        self.assertEqual(set(self.old.exists().mapped("tool_name")), {"old_0", "old_1"})
        self.assertEqual(self.fresh.exists(), self.fresh)

    def test_a_row_is_a_call_whatever_happens_to_its_server_later(self):
        server = self.system_server("Gone soon")
        call = self.Calls.create({"status": "ok", "tool_name": "t", "server_id": server.id, "server_name": server.name})
        server.unlink()
        self.assertTrue(call.exists())
        self.assertEqual(
            (call.server_id.id, call.server_name, call.display_name), (False, "Gone soon", "Gone soon / t")
        )
