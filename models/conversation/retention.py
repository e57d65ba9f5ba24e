"""Removing the conversations a company keeps no longer.

Each company sets how many days its conversations are kept without activity
(res.company `ai_conversation_retention_days`, 0: forever). A daily cron removes those whose last
activity (the conversation's last write, its last event or message) is older, that are not
answering nor waiting for the user, in batches: each batch is committed, and what is left after a
run is reported as the cron's progress, so that the cron runs again at once. Their events and
messages go with them; their usage rows stay, without the link, so the reports keep their cost.
"""

import logging
from datetime import timedelta

from odoo import api, fields, models
from odoo.modules import module as odoo_module
from odoo.tools import SQL

from ...odoo_compat import cron_progress
from ...turn.states import ConversationState

_logger = logging.getLogger(__name__)

RETENTION_BATCH = 200  # conversations removed per transaction
RETENTION_BATCHES_PER_RUN = 25  # then the cron is run again for the rest


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _gc_conversations(self, batch=RETENTION_BATCH, batches=RETENTION_BATCHES_PER_RUN, now=None, commit=None):
        """Removes up to `batches` x `batch` expired conversations; returns how many were removed.
        `commit`: whether each batch is committed (None: unless under Odoo's test runner, whose
        cursor cannot commit; a test on a cursor of its own says True)."""
        if commit is None:
            commit = not odoo_module.current_test
        now = now or fields.Datetime.now()
        companies = self.env["res.company"].sudo().search([("ai_conversation_retention_days", ">", 0)])
        if not companies:
            return 0
        removed = 0
        for _run in range(batches):
            ids = self._expired_conversation_ids(companies, now, limit=batch)
            if not ids:
                break
            self.sudo().browse(ids).unlink()
            removed += len(ids)
            if commit:
                self.env.cr.commit()  # each batch stands on its own and holds its locks briefly
        remaining = self._expired_conversation_count(companies, now) if removed else 0
        cron_progress(self.env, done=removed, remaining=remaining)
        if removed:
            _logger.info("AI conversations past their company's retention removed: %s (%s left)", removed, remaining)
        return removed

    @api.model
    def _expired_conversation_ids(self, companies, now, limit):
        """Ids of the first `limit` expired conversations (see `_expired_conversations`), locked:
        one a user claims meanwhile for a turn is skipped, and one locked here is not claimed
        (the user is told it is busy) until it is gone."""
        expired = self._expired_conversations(companies, now)
        self.env.cr.execute(SQL("SELECT c.id %s ORDER BY c.id LIMIT %s FOR UPDATE OF c SKIP LOCKED", expired, limit))
        return [row[0] for row in self.env.cr.fetchall()]

    @api.model
    def _expired_conversation_count(self, companies, now):
        self.env.cr.execute(SQL("SELECT count(*) %s", self._expired_conversations(companies, now)))
        return self.env.cr.fetchone()[0]

    @api.model
    def _expired_conversations(self, companies, now):
        """FROM and WHERE of the idle conversations of `companies` without activity within their
        company's retention: a conversation's company, or its user's main company for one held
        before conversations had a company (they are shared)."""
        self.env.flush_all()
        cutoffs = SQL(", ").join(
            SQL("(%s, %s::timestamp)", company.id, now - timedelta(days=company.ai_conversation_retention_days))
            for company in companies
        )
        return SQL(
            """
              FROM ai_conversation c
              JOIN res_users u ON u.id = c.user_id
              JOIN (VALUES %(cutoffs)s) AS kept(company_id, cutoff)
                ON kept.company_id = COALESCE(c.company_id, u.company_id)
             WHERE c.state = %(idle)s
               AND c.write_date < kept.cutoff
               AND NOT EXISTS (
                    SELECT 1 FROM ai_conversation_event e
                     WHERE e.conversation_id = c.id AND e.create_date >= kept.cutoff)
               AND NOT EXISTS (
                    SELECT 1 FROM ai_message m
                     WHERE m.conversation_id = c.id AND m.create_date >= kept.cutoff)
            """,
            cutoffs=cutoffs,
            idle=ConversationState.IDLE,
        )
