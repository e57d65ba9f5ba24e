"""ai.budget.period: what one budget spent in one period, the counter every model call charges.

Written by the turn writer in plain SQL (turn/budget_charges.py): created by the period's first
call (INSERT ... ON CONFLICT DO NOTHING on the unique budget and start), raised in place by each
call. Read by the budget's form and by the check before each turn."""

from odoo import fields, models

from ..odoo_compat import Constraint


class AiBudgetPeriod(models.Model):
    _name = "ai.budget.period"
    _description = "AI Budget Period"
    _order = "period_start desc, id desc"
    _rec_name = "period_start"

    budget_id = fields.Many2one("ai.budget", required=True, index=True, ondelete="cascade", readonly=True)
    period_start = fields.Date(required=True, readonly=True)
    spent = fields.Float(
        string="Spent Quantity", digits=(16, 6), readonly=True, help="Money in the company's currency, or tokens."
    )
    spent_text = fields.Char(string="Spent", compute="_compute_spent_text")
    warned = fields.Boolean(readonly=True, help="Its users were told the budget is nearly spent.")

    _budget_period_uniq = Constraint("unique(budget_id, period_start)", "A budget counts each period once.")

    def _compute_spent_text(self):
        for period in self:
            period.spent_text = period.budget_id._quantity_text(period.spent) if period.budget_id else ""
