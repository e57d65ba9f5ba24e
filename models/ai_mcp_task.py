"""The tasks of MCP servers (Tasks extension) that outlived the call of a turn: the call ended
"still running" (services/mcp/tasks.py), the task's row is written with its tool_result event
(turn/running_tasks.py), and a cron polls the open ones with `tasks/get` at the interval their
server asks, from whichever process runs it, after a restart too. When one ends, its result is
added to its conversation as a `task_result` event, once the conversation is idle: the user sees it
in the call's block, the model reads it in the next turn (services/loop/transcript.py).

A task may ask the user something after its call ended (`input_required`): each question is put in
the conversation as the call's question card (an `elicitation_required` event marked `task`), once
the conversation is idle, and the user's answer is sent with `tasks/update` (`_answer_question`);
the next poll follows the task on.
"""

import json
import logging
from datetime import timedelta

from odoo import api, fields, models

from ..exceptions import ChatRefused
from ..hub_process import process_hub
from ..odoo_compat import Constraint
from ..services.errors import AiMcpError
from ..services.events import ElicitationDoneEvent, TaskResultEvent
from ..services.mcp import question_event
from ..services.mcp.tasks import TERMINAL_STATUSES, DetailedTask, poll_seconds, task_questions, task_result
from ..services.tool_result import normalize_result
from ..turn.states import ConversationState

_logger = logging.getLogger(__name__)

STATUSES = [
    ("working", "Working"),
    ("input_required", "Waiting for Input"),
    ("completed", "Completed"),
    ("failed", "Failed"),
    ("cancelled", "Cancelled"),
    ("lost", "Lost"),
]
OPEN_STATUSES = ("working", "input_required")
POLL_BATCH = 50
# how long one poll may take, and how many failed polls in a row make a task lost
POLL_TIMEOUT = 60.0
MAX_FAILED_POLLS = 10
# a server that cannot be reached is asked again after this long
RETRY_DELAY = timedelta(minutes=1)
# the bus notification of an event a task added to its conversation between turns
TASK_EVENTS = "ai_mcp.task_events"


class AiMcpTask(models.Model):
    _name = "ai.mcp.task"
    _description = "MCP Server Task"
    _order = "id desc"
    _rec_name = "tool_name"

    server_id = fields.Many2one("mcp.server", required=True, readonly=True, ondelete="cascade")
    conversation_id = fields.Many2one("ai.conversation", required=True, readonly=True, index=True, ondelete="cascade")
    user_id = fields.Many2one(related="conversation_id.user_id", store=True, index=True)
    task_id = fields.Char(string="Task ID", required=True, readonly=True, help="The server's name for the task.")
    call_id = fields.Char(string="Tool Call ID", required=True, readonly=True)
    tool_name = fields.Char(string="Tool", readonly=True)
    status = fields.Selection(STATUSES, required=True, default="working", readonly=True, index=True)
    status_message = fields.Char(readonly=True, help="What the server last said of the task.")
    next_poll = fields.Datetime(readonly=True, help="When the task is asked about next.")
    failed_polls = fields.Integer(readonly=True, help="Polls in a row that could not reach the server.")
    result = fields.Text(readonly=True, help="What the model reads of the task's result.")
    result_content = fields.Json(readonly=True, help="The result's parts, as the tool block shows them.")
    is_error = fields.Boolean(readonly=True)
    delivered = fields.Boolean(readonly=True, help="The result was added to the conversation.")
    questions = fields.Json(
        readonly=True, help="The questions the task put to the user, by the server's key: the name of each one's card."
    )
    date_done = fields.Datetime(string="Ended", readonly=True)

    _server_task_uniq = Constraint("unique(server_id, task_id)", "A server's task is stored once.")

    # -- the cron ------------------------------------------------------------------------------

    @api.model
    def _cron_poll(self, limit=POLL_BATCH):
        """Poll the open tasks that are due, add the results of the ended ones to their
        conversations, and wake up again when the next one is due."""
        # sudo: the cron polls every user's tasks; the rows are bookkeeping, the conversation's user owns the result
        Task = self.sudo()
        now = fields.Datetime.now()
        due = Task.search(
            [("status", "in", OPEN_STATUSES), "|", ("next_poll", "=", False), ("next_poll", "<=", now)],
            order="next_poll, id",
            limit=limit,
        )
        for task in due:
            task._poll(now)
        for task in Task.search([("status", "not in", OPEN_STATUSES), ("delivered", "=", False)], limit=limit):
            task._deliver()
        self._wake_up()

    def _wake_up(self):
        """The cron runs again when the next open task is due (a turn's wait ends at any time)."""
        # sudo: reading which task is due next and waking the cron are bookkeeping
        Task = self.sudo()
        following = Task.search([("status", "in", OPEN_STATUSES)], order="next_poll", limit=1)
        waiting = Task.search_count([("status", "not in", OPEN_STATUSES), ("delivered", "=", False)])
        if not following and not waiting:
            return
        at = following.next_poll if following and following.next_poll else fields.Datetime.now()
        if waiting:
            at = min(at, fields.Datetime.now() + RETRY_DELAY)
        self.env.ref("ai_mcp.ir_cron_ai_mcp_task_poll").sudo()._trigger(at=at)

    def _poll(self, now):
        self.ensure_one()
        server = self.server_id
        try:
            spec = server._server_spec()
            tokens = server._oauth_grant(self.user_id) if server.auth_type == "oauth" else None
            hub = process_hub()
            state = hub.run(hub.aget_task(spec, self.task_id, tokens), timeout=POLL_TIMEOUT)
        except (AiMcpError, TimeoutError) as exc:
            failed = self.failed_polls + 1
            _logger.info("MCP task poll failed: task=%s server=%s tries=%d error=%s", self.id, server.id, failed, exc)
            values = {"failed_polls": failed, "next_poll": now + RETRY_DELAY}
            if failed >= MAX_FAILED_POLLS:
                message = getattr(exc, "message", None) or str(exc)
                values.update(status="lost", status_message=message, result=message, is_error=True, date_done=now)
            self.write(values)
            return
        self._take(state, now)

    def _take(self, state: DetailedTask, now):
        """What a tasks/get answered: the task's state, and its result once it ended."""
        values = {
            "status": state.status if state.status in dict(STATUSES) else "working",
            "status_message": state.status_message or False,
            "failed_polls": 0,
            "next_poll": now + timedelta(seconds=poll_seconds(state.poll_interval_ms)),
        }
        if state.status in TERMINAL_STATUSES:
            result = normalize_result(task_result(state))
            values.update(
                result=result.text_for_model(),
                result_content=json.loads(json.dumps([part.model_dump(mode="json") for part in result.for_display()])),
                is_error=result.is_error,
                date_done=now,
            )
            _logger.info("MCP task ended: task=%s server=%s status=%s", self.id, self.server_id.id, state.status)
        self.write(values)
        if state.status == "input_required":
            self._ask(state)

    def _ask(self, state: DetailedTask):
        """Put each question of the task not asked yet in the conversation, as the call's question
        card; a turn running there leaves them to the next poll. A key is asked once over the
        task's life (the server keeps listing it until the answer is taken)."""
        asked = dict(self.questions or {})
        for key, params in task_questions(state).items():
            if key in asked:
                continue
            event = question_event(self.call_id, self.server_id.name, params, elicitation=f"task-{self.id}-{key}")
            if event is None:
                continue
            if self._append(event.model_copy(update={"task": True})) is None:
                break
            asked[key] = event.elicitation
            _logger.info("MCP task question asked: task=%s conversation=%s", self.id, self.conversation_id.id)
        if asked != (self.questions or {}):
            self.questions = asked

    def _answer_question(self, elicitation, action, content):
        """Send the user's answer to the task's question `elicitation` with tasks/update, close its
        card, and poll the task at once. {answered} or {answered: False, errors}."""
        self.ensure_one()
        key = next((k for k, name in (self.questions or {}).items() if name == elicitation), None)
        if key is None or self.status not in OPEN_STATUSES:
            return {"answered": False, "errors": [self.env._("This question is closed: its task has ended.")]}
        response = {"action": action} if content is None else {"action": action, "content": content}
        server = self.server_id
        try:
            tokens = server._oauth_grant(self.user_id) if server.auth_type == "oauth" else None
            hub = process_hub()
            hub.run(
                hub.aupdate_task(server._server_spec(), self.task_id, {key: response}, tokens), timeout=POLL_TIMEOUT
            )
        except (AiMcpError, TimeoutError) as exc:
            _logger.info("MCP task answer failed: task=%s server=%s error=%s", self.id, server.id, exc)
            return {"answered": False, "errors": [getattr(exc, "message", None) or str(exc)]}
        if self._append(ElicitationDoneEvent(id=self.call_id, elicitation=elicitation, action=action)) is None:
            _logger.info("MCP task answer sent while a turn runs: task=%s", self.id)
        _logger.info("MCP task question answered: task=%s action=%s", self.id, action)
        self.next_poll = fields.Datetime.now()
        self._wake_up()
        return {"answered": True}

    def _cancel(self):
        """The user stopped the task from its call's block: tasks/cancel to its server, then one
        poll, so that its end reaches the block at once (the cron's next poll otherwise). True when
        the server took the request; raises ChatRefused saying why when it could not be reached."""
        self.ensure_one()
        server = self.server_id
        try:
            tokens = server._oauth_grant(self.user_id) if server.auth_type == "oauth" else None
            hub = process_hub()
            hub.run(hub.acancel_task(server._server_spec(), self.task_id, tokens), timeout=POLL_TIMEOUT)
        except (AiMcpError, TimeoutError) as exc:
            _logger.info("MCP task cancel failed: task=%s server=%s error=%s", self.id, server.id, exc)
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise ChatRefused.invalid(
                self.env._("%(server)s did not stop the task: %(why)s", server=server.name, why=message)
            ) from None
        _logger.info("MCP task cancelled by the user: task=%s server=%s", self.id, server.id)
        self._poll(fields.Datetime.now())
        if self.status not in OPEN_STATUSES:
            self._deliver()
        else:
            self._wake_up()
        return True

    def _deliver(self):
        """Add the ended task's result to its conversation, when no turn runs or waits there (its
        events are numbered by the turn): False when it has to wait."""
        self.ensure_one()
        event = TaskResultEvent(
            id=self.call_id,
            tool=self.tool_name or "",
            status=self.status,
            ok=not self.is_error,
            content=self.result_content or [],
            model_text=self.result or "",
        )
        seq = self._append(event)
        if seq is None:
            return False
        self.delivered = True
        _logger.info("MCP task result added: task=%s conversation=%s seq=%s", self.id, self.conversation_id.id, seq)
        return True

    def _append(self, event):
        """Add `event` to the task's conversation when it is idle (a turn numbers its own events):
        its number, or None when a turn runs or waits there."""
        conversation = self.conversation_id
        self.env.flush_all()
        self.env.cr.execute(
            "UPDATE ai_conversation SET last_seq = last_seq + 1, write_date = now() AT TIME ZONE 'UTC'"
            " WHERE id = %s AND state = %s RETURNING last_seq",
            (conversation.id, ConversationState.IDLE),
        )
        row = self.env.cr.fetchone()
        if row is None:
            return None
        conversation.invalidate_recordset(["last_seq", "write_date"])
        self.env["ai.conversation.event"].create(
            {"conversation_id": conversation.id, "seq": row[0], "type": event.type, "payload": event.data()}
        )
        # the chat open on the conversation reads it at once (static/src/chat/logic/task_events.js)
        conversation.user_id.partner_id._bus_send(TASK_EVENTS, {"conversation_id": conversation.id})
        return row[0]
