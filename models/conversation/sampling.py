"""The user's answer to a running call's sampling request: approve it (maybe edited) or decline it.

Stored on the call's message as an answer to its server's question is (call.py), and handed to the
turn by whichever worker runs it (turn/call_requests.py); the turn's model then answers the server
(services/loop/sampling_call.py).
"""

from odoo import models

from ...exceptions import ChatRefused
from ...services.mcp import MAX_TOKENS_CAP

ANSWERS = ("accept", "decline", "cancel")
ROLES = ("user", "assistant")


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _chat_answer_sampling(self, call_id, sampling, action, content=None):
        """The user's answer to the sampling request `sampling` of the running call `call_id`;
        `content` (accept): the request as she edited it, {messages: [{role, text}], max_tokens}.
        Returns {answered} or {answered: False, errors} when the edits do not fit a request."""
        self.ensure_one()
        if action not in ANSWERS:
            raise ChatRefused.invalid(self.env._("Answer with accept, decline or cancel."))
        call = self._running_call(call_id)
        if not call or not self._open_sampling(str(call_id), str(sampling)):
            return {"answered": False, "errors": [self.env._("This request is closed: its call has ended.")]}
        edits = content if action == "accept" and isinstance(content, dict) else {}
        errors = self._sampling_errors(edits)
        if errors:
            return {"answered": False, "errors": errors}
        kept = {key: edits[key] for key in ("messages", "max_tokens") if edits.get(key) is not None}
        call.elicitation_answer = {"elicitation": str(sampling), "action": action, "content": kept or None}
        return {"answered": True}

    def _sampling_errors(self, edits):
        """What is wrong with the edited request, in the user's words."""
        errors = []
        messages = edits.get("messages")
        if messages is not None and (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("text"), str) for m in messages
            )
        ):
            errors.append(self.env._("Each message needs a role (user or assistant) and a text."))
        cap = edits.get("max_tokens")
        if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= MAX_TOKENS_CAP):
            errors.append(self.env._("The maximum tokens must be between 1 and %(cap)s.", cap=MAX_TOKENS_CAP))
        return errors

    def _open_sampling(self, call_id, sampling):
        """Whether the sampling_required event `sampling` of call `call_id` waits: no sampling_done
        closed it."""
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT type FROM ai_conversation_event WHERE conversation_id = %s"
            " AND type IN ('sampling_required', 'sampling_done')"
            " AND payload->>'sampling' = %s AND payload->>'id' = %s",
            (self.id, sampling, call_id),
        )
        return [row[0] for row in self.env.cr.fetchall()] == ["sampling_required"]
