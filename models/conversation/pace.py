"""Pace limits: how many turns a user may start per minute and per hour (Settings > AI), a check of
the admission step (admission.py).

A turn is a user message stored in ai.message, so what the limits count is what was stored: a
start refused, or rolled back before it was stored (a full pool), counts nothing, and a start sent
again under the same request key is refused ALREADY_RECEIVED before it is counted. Resumes store
no user message. The user's starts are counted one at a time (a transaction-scoped advisory lock
per user) so that two tabs starting at once cannot both take the last turn left.
"""

import logging
import math

from odoo import api, fields, models
from odoo.tools import SQL

from ...exceptions import ChatRefused
from ...services.errors import ErrorCode
from ...services.pace import PaceBreach, PaceLimits, PaceWindow, pace_breach

_logger = logging.getLogger(__name__)

PARAM_PER_MINUTE = "ai_mcp.turns_per_minute"
PARAM_PER_HOUR = "ai_mcp.turns_per_hour"
# first key of the advisory lock a user's starts are counted under (the second is the user's id)
PACE_LOCK_CLASS = 0x41495043


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _pace_limits(self):
        """The limits set in Settings (ir.config_parameter, cached by Odoo: no query)."""
        params = self.env["ir.config_parameter"].sudo()
        return PaceLimits(
            per_minute=_turn_count(params.get_param(PARAM_PER_MINUTE)),
            per_hour=_turn_count(params.get_param(PARAM_PER_HOUR)),
        )

    @api.model
    def _pace_now(self):
        """The clock the limits are kept by: UTC, naive, as the turns' stored times."""
        return fields.Datetime.now()

    @api.model
    def _pace_refusal(self, _assistant, _cloud_service):
        """PACE_LIMITED when the current user started as many turns as a limit allows: in the last
        minute, or the last hour. None without limits, and then nothing is asked of the database."""
        limits = self._pace_limits()
        if not limits.any:
            return None
        now = self._pace_now()
        latest = self._pace_latest_starts(now - limits.longest_window, limits.most)
        breach = pace_breach(latest, now, limits)
        if breach is None:
            return None
        _logger.info(
            "AI turn refused: user=%s reached %s turns per %s; next at %s UTC",
            self.env.uid,
            breach.limit,
            breach.window.value,
            breach.next_at,
        )
        return ChatRefused(
            ErrorCode.PACE_LIMITED,
            self._pace_sentence(breach),
            window=breach.window.value,
            limit=breach.limit,
            retry_at=fields.Datetime.to_string(breach.next_at),
            retry_after=math.ceil(breach.wait(now).total_seconds()),
        )

    @api.model
    def _pace_latest_starts(self, since, most):
        """The times of the current user's `most` latest turns after `since`, newest first: one
        query on the user's conversations and ai_message's index of user messages (ai_message.py)."""
        self.env["ai.message"].flush_model(["conversation_id", "role"])
        self.flush_model(["user_id"])
        cr = self.env.cr
        cr.execute(SQL("SELECT pg_advisory_xact_lock(%s, %s)", PACE_LOCK_CLASS, self.env.uid))
        cr.execute(
            SQL(
                """
                SELECT m.create_date
                  FROM ai_message m
                  JOIN ai_conversation c ON c.id = m.conversation_id
                 WHERE c.user_id = %s AND m.role = 'user' AND m.create_date > %s
              ORDER BY m.create_date DESC
                 LIMIT %s
                """,
                self.env.uid,
                since,
                most,
            )
        )
        return [row[0] for row in cr.fetchall()]

    @api.model
    def _pace_sentence(self, breach: PaceBreach):
        """What the user reads: which limit, and the time (theirs) the next message may be sent."""
        at = fields.Datetime.context_timestamp(self, breach.next_at).strftime("%H:%M:%S")
        if breach.window is PaceWindow.MINUTE:
            return self.env._(
                "You have sent %(limit)s messages in the last minute, the limit set by your administrator. "
                "You can send the next one at %(time)s.",
                limit=breach.limit,
                time=at,
            )
        return self.env._(
            "You have sent %(limit)s messages in the last hour, the limit set by your administrator. "
            "You can send the next one at %(time)s.",
            limit=breach.limit,
            time=at,
        )


def _turn_count(value):
    """A limit as stored (a string, or nothing): a whole number of turns, 0 (no limit) for anything else."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
