"""A tool its server runs as a task (MCP Tasks extension) that outlives the turn's wait: the turn
ends the call "still running", the task is stored, and the cron polls it (in any process, after a
restart too) until its result is added to the conversation, where the user sees it and the model
reads it in the next turn. The "3-minute task" is a task longer than the call's timeout: the server
takes its duration as an argument, so the test waits seconds, not minutes."""

import shutil
import tempfile
import time
from pathlib import Path

from odoo.tests import tagged

from odoo.addons.ai_mcp.hub_process import process_hub, running_hub
from odoo.addons.ai_mcp.testing.mcp_launch import HttpServer
from odoo.addons.ai_mcp.testing.mcp_tasks_server import PROGRAM
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from . import test_chat_call_notifications as notifications
from .chat_common import ChatCase

Notifications = notifications.TestChatCallNotifications


@tagged("post_install", "-at_install")
class TestMcpTasks(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.task_state = Path(tempfile.mkdtemp(prefix="ai_mcp_tasks_"))
        cls.addClassCleanup(shutil.rmtree, cls.task_state, True)
        cls.tasks_http = HttpServer("streamable-http", "--state-dir", str(cls.task_state), program=PROGRAM).start()
        cls.addClassCleanup(cls.tasks_http.stop)
        # the turn waits one second for a call: a task that takes longer is left running
        cls.task_server = cls.env["mcp.server"].create(
            {"name": "Task tools", "scope": "system", "url": cls.tasks_http.url, "call_timeout": 1}
        )
        result = cls.task_server._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_task_sessions)
        cls.task_server.tool_ids.requires_approval = False
        cls.assistant.mcp_server_ids = [(6, 0, cls.task_server.ids)]

    @classmethod
    def _close_task_sessions(cls):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(cls.task_server._server_key()))

    # the stream read as it comes, and a request of another browser, as the call notifications' tests do
    stream_until = Notifications.stream_until
    other_browser = Notifications.other_browser
    cancel = Notifications.cancel

    def wait_for_task(self, label, status, seconds=20.0):
        path = self.task_state / f"task-{label}"
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if path.exists() and path.read_text() == status:
                return
            time.sleep(0.05)
        self.fail(f"the server's task {label} is not {status}")

    def start_long_task(self, label):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("slow_compute", {"seconds": 4, "label": label}, id="call_long"),)),
            Turn(text="The report is still being computed."),
        )
        _response, events = self.send("Compute the report.")
        self.assertEqual(events[-1].event, "done")
        return events

    def test_a_task_outliving_the_turn_ends_the_call_still_running_and_the_cron_adds_its_result(self):
        events = self.start_long_task("report")
        conversation_id = events[0].data["conversation_id"]
        result = next(e for e in events if e.event == "tool_result")
        self.assertTrue(result.data["ok"])
        self.assertIn("still running", result.data["model_text"])
        # what the model read when it answered
        tool_message = self.llm.requests[1]["messages"][-1]
        self.assertIn("still running", tool_message["content"])
        self.env.invalidate_all()
        task = self.env["ai.mcp.task"].search([("conversation_id", "=", conversation_id)])
        self.assertEqual((task.status, task.call_id, task.tool_name), ("working", "call_long", "slow_compute"))
        self.assertEqual(task.server_id, self.task_server)
        # a poll while it runs changes nothing but when it is polled next
        self.env["ai.mcp.task"]._cron_poll()
        self.assertEqual(task.status, "working")

        self.wait_for_task("report", "completed")
        # Odoo restarted meanwhile: no session of the process that made the task is left
        self._close_task_sessions()
        task.next_poll = False
        self.env["ai.mcp.task"]._cron_poll()
        self.assertEqual(task.status, "completed")
        self.assertEqual(task.result, "Computed report in 4 s")

        # the user sees it in the tool block when she comes back
        stored = self.stored_events(conversation_id)
        late = stored.filtered(lambda e: e.type == "task_result")
        self.assertEqual(len(late), 1)
        self.assertEqual(late.payload["id"], "call_long")
        self.assertEqual(late.payload["content"][0]["text"], "Computed report in 4 s")
        self.assertEqual(late.seq, self.conversation(conversation_id).last_seq)
        # and the model reads it in the next turn
        self.llm.queue(Turn(text="Here it is."))
        _response, events = self.send("Is it done?", conversation_id=conversation_id)
        self.assertEqual(events[-1].event, "done")
        sent = " ".join(str(m.get("content")) for m in self.llm.requests[-1]["messages"])
        self.assertIn("Computed report in 4 s", sent)
        # delivered once
        self.env["ai.mcp.task"]._cron_poll()
        self.assertEqual(len(self.stored_events(conversation_id).filtered(lambda e: e.type == "task_result")), 1)

    def test_a_task_is_seen_by_its_conversations_user_only(self):
        events = self.start_long_task("private")
        conversation_id = events[0].data["conversation_id"]
        Task = self.env["ai.mcp.task"]
        self.assertEqual(len(Task.with_user(self.user).search([("conversation_id", "=", conversation_id)])), 1)
        self.assertFalse(Task.with_user(self.other).search([("conversation_id", "=", conversation_id)]))

    def test_the_blocks_stop_button_cancels_the_task_on_its_server(self):
        self.task_server.call_timeout = 60
        self.login(self.user)
        owner = self.other_browser(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("slow_compute", {"seconds": 60, "label": "stopped"}, id="call_stop"),)),
            Turn(text="Stopped."),
        )
        shown, answers = [], {}

        def on_events(events):
            shown[:] = [e.data["message"] for e in events if e.event == "tool_progress"]
            if shown and "owner" not in answers:
                answers["owner"] = self.cancel(owner, events[0].data["conversation_id"], "call_stop")

        events = self.stream_until({"assistant_id": self.assistant.id, "message": "Compute, then stop."}, on_events)
        self.assertTrue(shown[0].startswith("Task working"), f"the task's state shows in the block: {shown}")
        self.assertEqual(answers["owner"]["result"], {"cancelling": True})
        result = next(e for e in events if e.event == "tool_result")
        self.assertEqual(result.data["error_code"], "CANCELLED")
        self.wait_for_task("stopped", "cancelled")
        self.env.invalidate_all()
        self.assertFalse(self.env["ai.mcp.task"].search([("call_id", "=", "call_stop")]), "nothing left to poll")

    def test_a_task_left_running_is_stopped_from_its_block_and_its_end_lands(self):
        self.login(self.user)
        # a task that runs until it is released: only the user's stop ends it
        self.llm.queue(
            Turn(tool_calls=(ToolCall("hold", {"label": "left"}, id="call_long"),)),
            Turn(text="The export goes on on the server."),
        )
        _response, events = self.send("Export the ledger.")
        self.assertEqual(events[-1].event, "done")
        conversation_id = events[0].data["conversation_id"]
        self.assertIsNotNone(next(e for e in events if e.event == "tool_result").data.get("task"))
        self.wait_for_task("left", "working")
        # another user's request is refused before anything reaches the server
        stranger = self.other_browser(self.other)
        refused = self.cancel(stranger, conversation_id, "call_long")
        self.assertIn("error", refused)
        self.wait_for_task("left", "working")

        answer = self.cancel(self.opener, conversation_id, "call_long")
        self.assertEqual(answer["result"], {"cancelling": True})
        self.wait_for_task("left", "cancelled")
        self.env.invalidate_all()
        task = self.env["ai.mcp.task"].search([("conversation_id", "=", conversation_id)])
        self.assertEqual((task.status, task.delivered), ("cancelled", True))
        late = self.stored_events(conversation_id).filtered(lambda e: e.type == "task_result")
        self.assertEqual(len(late), 1, "its end is in the conversation at once, not at the cron's next poll")
        self.assertEqual((late.payload["id"], late.payload["status"]), ("call_long", "cancelled"))
        # nothing left to stop
        self.assertEqual(self.cancel(self.opener, conversation_id, "call_long")["result"], {"cancelling": False})

    def call_task_tool(self, tool, arguments):
        """A call of the tasks server's own, outside any turn (the test's hand on the server)."""
        hub = process_hub()
        return hub.run(hub.acall_tool(self.task_server._server_spec(), tool, arguments), timeout=30)

    def answer(self, conversation_id, call_id, elicitation, action, content=None):
        params = {"conversation_id": conversation_id, "call_id": call_id, "elicitation": elicitation}
        return self.jsonrpc("/ai_mcp/chat/elicitation", {**params, "action": action, "content": content})

    def test_a_task_asking_after_its_turn_ended_gets_the_users_answer_and_its_result_lands(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("confirm_delete", {"filename": "late.txt", "label": "late"}, id="call_ask"),)),
            Turn(text="The deletion waits on the server."),
        )
        _response, events = self.send("Delete late.txt.")
        self.assertEqual(events[-1].event, "done")
        conversation_id = events[0].data["conversation_id"]
        self.assertIn("still running", next(e for e in events if e.event == "tool_result").data["model_text"])

        # the turn has ended when the task asks
        self.assertEqual(self.call_task_tool("release", {"label": "late"}).text_for_model(), "Released late")
        self.wait_for_task("late", "input_required")
        task = self.env["ai.mcp.task"].search([("call_id", "=", "call_ask")])
        task.next_poll = False
        self.env["ai.mcp.task"]._cron_poll()
        self.assertEqual(task.status, "input_required")
        asked = self.stored_events(conversation_id).filtered(lambda e: e.type == "elicitation_required")
        self.assertEqual(len(asked), 1, "the question card is in the conversation")
        question = asked.payload
        self.assertEqual(
            (question["id"], question["message"], question["task"]), ("call_ask", "Delete late.txt?", True)
        )
        # asked once, however often the task is polled while it waits
        task.next_poll = False
        self.env["ai.mcp.task"]._cron_poll()
        self.assertEqual(
            len(self.stored_events(conversation_id).filtered(lambda e: e.type == "elicitation_required")), 1
        )

        # another user cannot answer it
        self.login(self.other)
        refused = self.answer(conversation_id, "call_ask", question["elicitation"], "accept", {"confirm": True})
        self.assertIn("error", refused)
        # she answers it, and the answer goes to the server with tasks/update
        self.login(self.user)
        answered = self.answer(conversation_id, "call_ask", question["elicitation"], "accept", {"confirm": True})
        self.assertEqual(answered["result"], {"answered": True})
        self.wait_for_task("late", "completed")
        done = self.stored_events(conversation_id).filtered(lambda e: e.type == "elicitation_done")
        self.assertEqual((done.payload["elicitation"], done.payload["action"]), (question["elicitation"], "accept"))
        # her other tabs open on the conversation read it at once
        bus = self.env["bus.bus"].sudo().search([("message", "like", "ai_mcp.task_events")])
        self.assertIn(f'"res.partner",{self.user.partner_id.id}]', " ".join(bus.mapped("channel")))

        # the task's result then lands in the conversation
        task.next_poll = False
        self.env["ai.mcp.task"]._cron_poll()
        late = self.stored_events(conversation_id).filtered(lambda e: e.type == "task_result")
        self.assertEqual(late.payload["content"][0]["text"], "Deleted late.txt")
        # a second answer finds the question closed
        again = self.answer(conversation_id, "call_ask", question["elicitation"], "accept", {"confirm": True})
        self.assertFalse(again["result"]["answered"])
