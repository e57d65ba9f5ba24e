"""The chat's route for the user's answer to a server's sampling request (HTTP only)."""

from odoo import http
from odoo.http import request

from ..odoo_compat import JSON_ROUTE
from .refusals import answer


class AiMcpSampling(http.Controller):
    @http.route("/ai_mcp/chat/sampling", type=JSON_ROUTE, auth="user")
    def chat_sampling(self, conversation_id, call_id, sampling, action, content=None):
        """Approve (maybe edited), decline or cancel a running call's sampling request:
        {answered} or {answered: False, errors}."""
        return answer(
            lambda: (
                request.env["ai.conversation"]
                ._chat_own(conversation_id)
                ._chat_answer_sampling(call_id, sampling, action, content)
            )
        )
