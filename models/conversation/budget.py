"""Budgets (ai.budget) where a turn starts: a user whose budget is spent starts no turn.

`_budget_refusal(assistant, cloud_service)` returns the ChatRefused BUDGET_SPENT (the sentence
naming the budget and who can raise it) or None; it is asked before anything of a new turn is
stored, and before an answer to a pause (an approval, "continue?", a sign-in) carries a turn on,
since each would call the model again. What a turn under way may still spend is the loop's
question (services/loop/spend_guard.py)."""

from odoo import api, models

from ...exceptions import ChatRefused
from ...services.errors import ErrorCode


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _budget_refusal(self, assistant, cloud_service):
        """BUDGET_SPENT when a budget the current user's turn with `assistant` (through
        `cloud_service`, possibly empty) would be charged to is spent; None otherwise. The turn is
        charged to its conversation's company: the assistant's or the service's when they have one,
        else the company worked in (ai_conversation.py `_chat_send`)."""
        company = assistant.sudo().company_id or cloud_service.sudo().company_id or self.env.company
        refusal = self.env["ai.budget"]._turn_refusal(self.env.user, company, cloud_service)
        return ChatRefused(ErrorCode.BUDGET_SPENT, refusal) if refusal is not None else None
