"""The user's requests about a running tool call: stop it, answer the question its server asked
(or the question of a task the call left running, asked after the call ended).

Either request may reach any worker. It is stored on the call's message, and the worker running
the turn, whichever it is, picks it up (turn/call_requests.py) and hands it to the call.
"""

from odoo import models

from ...exceptions import ChatRefused
from ...services.mcp import apply_defaults, elicitation_errors
from ...turn.states import ConversationState, MessageStatus
from ..ai_mcp_task import OPEN_STATUSES

ANSWERS = ("accept", "decline", "cancel")


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _chat_cancel_call(self, call_id):
        """Ask the running turn to stop the call `call_id`: True when it was running. A call that
        ended "still running" has its server's task cancelled instead, its end then added to the
        conversation (True when the server took the request)."""
        self.ensure_one()
        call = self._running_call(call_id)
        if call:
            call.write({"status": MessageStatus.CANCELLING})
            return True
        task = self._left_task(str(call_id))
        # the request goes to the server with the sign-in of the conversation's user: hers (_chat_own)
        return task._cancel() if task else False

    def _left_task(self, call_id):
        """The task of call `call_id` of this conversation still running after its turn; empty otherwise."""
        return self.env["ai.mcp.task"].search(
            [("conversation_id", "=", self.id), ("call_id", "=", call_id), ("status", "in", OPEN_STATUSES)], limit=1
        )

    def _chat_answer_elicitation(self, call_id, elicitation, action, content=None):
        """The user's answer to the question a running call's server asked; a form answer gets the
        default of each field it leaves out. Returns {answered} or {answered: False, errors} when the
        form content does not fit the requested schema."""
        self.ensure_one()
        if action not in ANSWERS:
            raise ChatRefused.invalid(self.env._("Answer with accept, decline or cancel."))
        call = self._running_call(call_id)
        task = self.env["ai.mcp.task"] if call else self._asking_task(str(call_id), str(elicitation))
        question = self._open_question(str(call_id), str(elicitation)) if call or task else None
        if question is None:
            return {"answered": False, "errors": [self.env._("This question is closed: its call has ended.")]}
        form = action == "accept" and question.get("mode") == "form"
        schema = question.get("requested_schema") or {}
        # a field left out gets its default, then the whole answer is checked as the server will see it
        content = apply_defaults(schema, content or {}) if form else None
        errors = elicitation_errors(schema, content) if form else []
        if errors:
            return {"answered": False, "errors": errors}
        if task:
            if self.state != ConversationState.IDLE:
                return {"answered": False, "errors": [self.env._("Answer once the assistant's reply has ended.")]}
            # the answer goes to the server with the sign-in of the conversation's user: hers (_chat_own)
            return task._answer_question(question["elicitation"], action, content)
        call.elicitation_answer = {"elicitation": question["elicitation"], "action": action, "content": content}
        return {"answered": True}

    def _asking_task(self, call_id, elicitation):
        """The task of call `call_id` of this conversation (as the conversation: sudo, the user's own)
        that asked the question `elicitation` after its call ended; empty otherwise."""
        tasks = self.env["ai.mcp.task"].search([("conversation_id", "=", self.id), ("call_id", "=", call_id)])
        return tasks.filtered(lambda task: elicitation in (task.questions or {}).values())[:1]

    def _open_question(self, call_id, elicitation):
        """The payload of the elicitation_required event `elicitation` of call `call_id`, while no
        elicitation_done closed it; None otherwise."""
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT type, payload FROM ai_conversation_event WHERE conversation_id = %s"
            " AND type IN ('elicitation_required', 'elicitation_done')"
            " AND payload->>'elicitation' = %s AND payload->>'id' = %s"
            " ORDER BY seq",
            (self.id, elicitation, call_id),
        )
        rows = self.env.cr.fetchall()
        if len(rows) != 1 or rows[0][0] != "elicitation_required":
            return None
        return rows[0][1]

    def _running_call(self, call_id):
        """The message (sudo) of call `call_id` of this conversation while it runs; empty otherwise."""
        return (
            self.env["ai.message"]
            .sudo()
            .search(
                [
                    ("conversation_id", "=", self.id),
                    ("role", "=", "tool"),
                    ("tool_call_id", "=", str(call_id)),
                    ("status", "=", MessageStatus.RUNNING),
                ],
                order="id desc",
                limit=1,
            )
        )
