"""Whether a new turn may start now: the step every new turn passes before anything of it is stored.

Both ways a turn starts go through it: the chat's start (`_chat_send`, from the browser) and a
message in a Discuss chat with an assistant (which calls `_chat_send` too). A resume (an approval
answered, "continue?", a sign-in) carries on a turn that was admitted already: it is no new turn for
the pace limits, but it calls the model again, so a spent budget holds it (`_chat_resume`).

Each check is a method of ai.conversation that returns the ChatRefused keeping the current user's
turn from starting, or None; `_turn_checks` lists them in the order they run. The refusal's code says
which check refused, its message what the user can do (and when). A refusal stores nothing.
"""

from odoo import api, models


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _turn_refusal(self, assistant, cloud_service):
        """The ChatRefused that keeps the current user from starting a turn with `assistant` (and
        `cloud_service`, possibly empty) now, or None when the turn may start."""
        for check in self._turn_checks():
            refusal = check(assistant, cloud_service)
            if refusal is not None:
                return refusal
        return None

    @api.model
    def _turn_checks(self):
        """The checks a new turn passes, in order, each `check(assistant, cloud_service)`: the pace
        limits (pace.py), then the budgets (budget.py)."""
        return [self._pace_refusal, self._budget_refusal]
