"""ai.budget: how much the assistant may cost, per period, for a user, a group, a cloud service or
a whole company.

An amount of money (the company's currency, the cost of ai.usage) or of tokens, per day, week,
month or year (periods start on Monday, the 1st, January 1st; in UTC). Every model call of a turn
is charged to every budget that applies to it (turn/budget_charges.py): its user's, the user's
groups', its cloud service's and its company's. Once one is spent, no new turn starts
(`_turn_refusal`) and a turn under way ends after its round (the turn's SpendGuard); at
WARN_PERCENT its users are warned once. AI managers create, raise, lower and lift (archive) budgets;
AI users read those that apply to them."""

from decimal import Decimal

from odoo import api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools import format_amount, formatLang, ormcache

from ..odoo_compat import ODOO_18, Constraint, user_groups
from ..services.loop import BudgetLine, SpendGuard
from ..turn import budget_charges
from ..turn.budget_charges import WARN_PERCENT, ChargedBudget, period_start

SCOPE_FIELDS = {"user": "user_id", "group": "group_id", "cloud_service": "cloud_service_id"}
# at most this many AI managers are named in a refusal
MANAGERS_NAMED = 3


class AiBudget(models.Model):
    _name = "ai.budget"
    _description = "AI Budget"
    _order = "company_id, name, id"

    name = fields.Char(required=True)
    active = fields.Boolean(default=True, help="Archive a budget to lift it: turns are no longer charged to it.")
    company_id = fields.Many2one(
        "res.company", required=True, index=True, default=lambda self: self.env.company, ondelete="cascade"
    )
    scope = fields.Selection(
        [("user", "User"), ("group", "Group"), ("cloud_service", "Cloud Service"), ("company", "Company")],
        string="Applies To",
        required=True,
        default="user",
        help="Whose use is counted: one user's, the members' of a group, a cloud service's, or all of the company's.",
    )
    user_id = fields.Many2one("res.users", index="btree_not_null", ondelete="cascade")
    group_id = fields.Many2one("res.groups", index="btree_not_null", ondelete="cascade")
    cloud_service_id = fields.Many2one("cloud.service", index="btree_not_null", ondelete="cascade")
    unit = fields.Selection(
        [("money", "Money"), ("tokens", "Tokens")],
        required=True,
        default="money",
        help="Money: the cost of the model calls at their models' prices, in the company's currency. "
        "Tokens: input and output tokens.",
    )
    amount = fields.Float(digits=(16, 2), required=True, help="What may be spent per period, in the unit.")
    period = fields.Selection(
        [("day", "Day"), ("week", "Week"), ("month", "Month"), ("year", "Year")],
        required=True,
        default="month",
    )
    currency_id = fields.Many2one(related="company_id.currency_id")
    period_start = fields.Date(string="Current Period", compute="_compute_spent")
    spent = fields.Float(digits=(16, 2), compute="_compute_spent", help="Spent in the current period.")
    remaining = fields.Float(digits=(16, 2), compute="_compute_spent", help="Left in the current period.")
    period_ids = fields.One2many("ai.budget.period", "budget_id", string="Periods", readonly=True)

    _amount_positive = Constraint("CHECK(amount >= 0)", "A budget's amount cannot be negative.")

    @api.depends("period", "amount")
    def _compute_spent(self):
        day = budget_charges.budget_day(self.env.cr)
        spent = self._spent_now(day)
        for budget in self:
            budget.period_start = period_start(budget.period, day)
            budget.spent = float(spent.get(budget.id, 0))
            budget.remaining = max(budget.amount - budget.spent, 0.0)

    @api.constrains("scope", "user_id", "group_id", "cloud_service_id")
    def _check_target(self):
        for budget in self:
            wanted = SCOPE_FIELDS.get(budget.scope)
            if wanted and not budget[wanted]:
                raise ValidationError(
                    self.env._(
                        "The budget %(name)s applies to a %(scope)s: choose which.",
                        name=budget.name,
                        scope=budget._fields["scope"].convert_to_export(budget.scope, budget),
                    )
                )

    @api.onchange("scope")
    def _onchange_scope(self):
        for scope, fname in SCOPE_FIELDS.items():
            if self.scope != scope:
                self[fname] = False

    @api.model_create_multi
    def create(self, vals_list):
        self.env.registry.clear_cache()  # _company_has_budgets
        return super().create(vals_list)

    def write(self, vals):
        self.env.registry.clear_cache()
        return super().write(vals)

    def unlink(self):
        self.env.registry.clear_cache()
        return super().unlink()

    # -- what a turn is charged to --------------------------------------------------------------

    @api.model
    @ormcache("company_id")
    def _company_has_budgets(self, company_id):
        """Whether `company_id` has an active budget. Every turn's start asks, and most companies
        have none: cached, and cleared whenever a budget is created, changed or deleted."""
        return bool(self.sudo().search_count([("company_id", "=", company_id)], limit=1))

    @api.model
    def _turn_budgets(self, user, company, cloud_service):
        """The active budgets of `company` a turn of `user` (through `cloud_service`, if any) is
        charged to, as superuser."""
        if not self._company_has_budgets(company.id):
            return self.sudo().browse()
        domain = [
            ("company_id", "=", company.id),
            "|",
            "|",
            "|",
            ("scope", "=", "company"),
            "&",
            ("scope", "=", "user"),
            ("user_id", "=", user.id),
            "&",
            ("scope", "=", "group"),
            ("group_id", "in", user_groups(user.sudo()).ids),
            "&",
            ("scope", "=", "cloud_service"),
            ("cloud_service_id", "=", cloud_service.id or 0),
        ]
        return self.sudo().search(domain)

    @api.model
    def _turn_refusal(self, user, company, cloud_service):
        """Why a turn of `user` in `company` (through `cloud_service`) may not start: the sentence
        naming the first budget of theirs that is spent and who can raise it; None when none is."""
        budgets = self._turn_budgets(user, company, cloud_service)
        spent = budgets._spent_now(budget_charges.budget_day(self.env.cr))
        for budget in budgets:
            if spent.get(budget.id, Decimal(0)) >= Decimal(str(budget.amount)):
                return budget.with_env(self.env)._refusal_message()
        return None

    @api.model
    def _turn_spend(self, user, company, cloud_service, prices):
        """(the SpendGuard the loop asks before each model call, the budgets the writer charges)
        for a turn of `user`; (None, ()) when no budget applies."""
        budgets = self._turn_budgets(user, company, cloud_service).with_env(self.env)
        if not budgets:
            return None, ()
        spent = budgets._spent_now(budget_charges.budget_day(self.env.cr))
        # the budgets are of one company: its AI managers are looked up once
        raisers = budgets[0]._raisers()
        lines = [
            BudgetLine(
                budget_id=budget.id,
                tokens=budget.unit == "tokens",
                amount=Decimal(str(budget.amount)),
                spent=spent.get(budget.id, Decimal(0)),
                refusal=budget._refusal_message(raisers),
            )
            for budget in budgets
        ]
        charged = tuple(
            ChargedBudget(
                budget_id=budget.id,
                tokens=budget.unit == "tokens",
                period=budget.period,
                warning=budget._warning_message(),
            )
            for budget in budgets
        )
        return SpendGuard(lines, prices), charged

    def _spent_now(self, day):
        """{budget id: Decimal spent} in the period holding `day`, for the budgets of `self` that
        spent anything in it."""
        starts = [(budget.id, period_start(budget.period, day)) for budget in self if budget.id]
        if not starts:
            return {}
        self.env["ai.budget.period"].flush_model()
        self.env.cr.execute(
            "SELECT budget_id, spent FROM ai_budget_period WHERE (budget_id, period_start) IN %s",
            (tuple(starts),),
        )
        return {budget_id: Decimal(str(spent)) for budget_id, spent in self.env.cr.fetchall()}

    # -- what the user is told ------------------------------------------------------------------

    def _refusal_message(self, raisers=None):
        """`raisers`: who can raise it, when looked up already (`_raisers`)."""
        self.ensure_one()
        return self.env._(
            "Your %(period)s AI budget “%(name)s” (%(amount)s) is spent. %(who)s can raise it.",
            period=self._period_word(),
            name=self.name,
            amount=self._amount_text(),
            who=raisers or self._raisers(),
        )

    def _warning_message(self):
        self.ensure_one()
        return self.env._(
            "Your %(period)s AI budget “%(name)s” (%(amount)s) is %(share)s spent.",
            period=self._period_word(),
            name=self.name,
            amount=self._amount_text(),
            share=WARN_PERCENT,
        )

    def _period_word(self):
        return {
            "day": self.env._("daily"),
            "week": self.env._("weekly"),
            "month": self.env._("monthly"),
            "year": self.env._("yearly"),
        }[self.period]

    def _amount_text(self):
        if self.unit == "tokens":
            return self.env._("%(count)s tokens", count=formatLang(self.env, self.amount, digits=0))
        return format_amount(self.env, self.amount, self.currency_id)

    def _raisers(self):
        """Who can raise the budget: its company's AI managers, by name."""
        group = self.env.ref("ai_mcp.group_ai_manager")
        managers = (
            self.env["res.users"]
            .sudo()
            .search(
                [
                    ("groups_id" if ODOO_18 else "all_group_ids", "in", group.id),
                    ("share", "=", False),
                    ("company_ids", "in", self.company_id.id),
                ],
                order="name, id",
                limit=MANAGERS_NAMED,
            )
        )
        if not managers:
            return self.env._("An AI manager")
        return self.env._("An AI manager (%(names)s)", names=", ".join(managers.mapped("name")))
