"""The approvals a paused turn is answered with: the calls the last approval_required asked about,
how each allowed one runs, the tools allowed for the rest of the conversation
(`ai.conversation.approval`), and the approvals the chat shows and revokes."""

import logging

from odoo import models

from ...exceptions import ChatRefused

_logger = logging.getLogger(__name__)

# what an approval may answer besides true and false
APPROVAL_ANSWERS = ("once", "conversation")


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _approvals_answered(self, approvals):
        """The user's answer to approval_required, {call id: true, "once", "conversation" or false},
        with its ids as strings; refused when it is not one."""
        if not isinstance(approvals, dict) or not all(
            isinstance(v, bool) or v in APPROVAL_ANSWERS for v in approvals.values()
        ):
            raise ChatRefused.invalid(self.env._('Answer the approval with {call id: true, "conversation" or false}.'))
        return {str(k): v for k, v in approvals.items()}

    def _pending_call_ids(self):
        """Ids of the calls the last approval_required event asked about."""
        self.ensure_one()
        event = (
            self.env["ai.conversation.event"]
            .sudo()
            .search([("conversation_id", "=", self.id), ("type", "=", "approval_required")], order="seq desc", limit=1)
        )
        return [call["id"] for call in (event.payload or {}).get("calls", [])]

    def _approve_pending(self, approvals):
        """Note how each allowed pending call runs, and remember the tools allowed for the
        conversation: the turn binds its tools after this, so its later calls of them run at once."""
        messages = (
            self.env["ai.message"]
            .sudo()
            .search(
                [
                    ("conversation_id", "=", self.id),
                    ("role", "=", "tool"),
                    ("tool_call_id", "in", self._pending_call_ids()),
                ]
            )
        )
        known = {}
        for message in messages:
            answer = approvals.get(message.tool_call_id, False)
            if answer is False:
                continue
            how = "conversation" if answer == "conversation" else "once"
            message.approval = how
            if how == "conversation":
                target = self.env["ai.tool.call"]._audit_target(self.id, message.server_name, message.tool_name, known)
                tool = self.env["mcp.tool"].sudo().browse(target["tool_id"])
                if tool:
                    self.env["ai.conversation.approval"]._remember(self, tool, "conversation")

    def _chat_approvals(self):
        """The tool approvals the current user remembered in this conversation, for the chat."""
        self.ensure_one()
        return self.env["ai.conversation.approval"].with_user(self.env.user)._for_chat(self)

    def _chat_revoke_approval(self, approval_id):
        """Forget the remembered approval `approval_id` of this conversation (a stale id changes
        nothing); the approvals left."""
        self.ensure_one()
        Approval = self.env["ai.conversation.approval"].with_user(self.env.user)
        remembered = Approval.search([("id", "=", self._sent_id(approval_id)), ("conversation_id", "=", self.id)])
        if remembered:
            _logger.info(
                "Tool approval revoked: conversation=%s tool=%s scope=%s",
                self.id,
                remembered.tool_id.sudo().name,
                remembered.scope,
            )
            remembered.unlink()
        return self._chat_approvals()
