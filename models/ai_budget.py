"""ai.budget: how much the assistant may cost, per period, for a user, a group, a cloud service or
a whole company.

An amount of money (the company's currency, the cost of ai.usage) or of tokens, per day, week,
month or year (periods start on Monday, the 1st, January 1st, at midnight in the company's time
zone: its contact's, else UTC). A budget made or changed mid-period starts from the usage it would
have been charged with since the period began (`_count_period_usage`). Every model call of a turn
is charged to every budget that applies to it (turn/budget_charges.py): its user's, the user's
groups', its cloud service's and its company's. Once one is spent, no new turn starts
(`_turn_refusal`) and a turn under way ends after its round (the turn's SpendGuard); at
WARN_SHARE (80%) its users are warned once. AI managers create, raise, lower and lift (archive) budgets;
AI users read those that apply to them."""

from decimal import Decimal

import pytz

from odoo import api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools import format_amount, formatLang, ormcache

from ..odoo_compat import Constraint, user_groups, user_in_groups
from ..services.loop import BudgetLine, SpendGuard
from ..turn import budget_charges
from ..turn.budget_charges import (
    ChargedBudget,
    local_day,
    next_period_start,
    period_start,
    share_text,
    utc_midnight,
)

SCOPE_FIELDS = {"user": "user_id", "group": "group_id", "cloud_service": "cloud_service_id"}
# what a budget is charged with: a change of one counts the current period again
CHARGED_FIELDS = {"company_id", "scope", "unit", "period", *SCOPE_FIELDS.values()}
# the decimals of money a counter keeps (ai.budget.period.spent, ai.usage.cost)
SPENT_DIGITS = 6
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
    # the counter's decimals: two would show 0.045 as 0.05, a budget of 0.05 as spent when it is not
    spent = fields.Float(
        string="Spent Quantity", digits=(16, 6), compute="_compute_spent", help="Spent in the current period."
    )
    remaining = fields.Float(
        string="Remaining Quantity", digits=(16, 6), compute="_compute_spent", help="Left in the current period."
    )
    # what the lists and the form show: money with its currency, tokens as a whole number
    amount_text = fields.Char(string="Budget", compute="_compute_texts")
    spent_text = fields.Char(string="Spent", compute="_compute_texts", help="Spent in the current period.")
    remaining_text = fields.Char(string="Remaining", compute="_compute_texts", help="Left in the current period.")
    period_ids = fields.One2many("ai.budget.period", "budget_id", string="Periods", readonly=True)

    _amount_positive = Constraint("CHECK(amount >= 0)", "A budget's amount cannot be negative.")

    @api.depends("period", "amount")
    def _compute_spent(self):
        now = budget_charges.budget_now(self.env.cr)
        spent = self._spent_now(now)
        for budget in self:
            budget.period_start = budget._current_period(now)
            budget.spent = float(spent.get(budget.id, 0))
            budget.remaining = max(budget.amount - budget.spent, 0.0)

    @api.depends("unit", "amount", "spent", "remaining", "currency_id")
    def _compute_texts(self):
        for budget in self:
            budget.amount_text = budget._quantity_text(budget.amount)
            budget.spent_text = budget._quantity_text(budget.spent)
            budget.remaining_text = budget._quantity_text(budget.remaining)

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
        budgets = super().create(vals_list)
        budgets._count_period_usage()
        return budgets

    def write(self, vals):
        self.env.registry.clear_cache()
        result = super().write(vals)
        if CHARGED_FIELDS & set(vals):
            self._count_period_usage()
        return result

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
        spent = budgets._spent_now(budget_charges.budget_now(self.env.cr))
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
        spent = budgets._spent_now(budget_charges.budget_now(self.env.cr))
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
                time_zone=budget._time_zone(),
            )
            for budget in budgets
        )
        return SpendGuard(lines, prices), charged

    def _spent_now(self, now):
        """{budget id: Decimal spent} in the period holding `now` (naive UTC), for the budgets of
        `self` that spent anything in it."""
        starts = [(budget.id, budget._current_period(now)) for budget in self if budget.id]
        if not starts:
            return {}
        self.env["ai.budget.period"].flush_model()
        self.env.cr.execute(
            "SELECT budget_id, spent FROM ai_budget_period WHERE (budget_id, period_start) IN %s",
            (tuple(starts),),
        )
        return {budget_id: Decimal(str(spent)) for budget_id, spent in self.env.cr.fetchall()}

    def _time_zone(self):
        """Where the budget's days begin: its company's time zone (its contact's), else UTC."""
        self.ensure_one()
        # sudo: the company's contact may be unreadable to a user whose turn is charged
        zone = self.company_id.sudo().partner_id.tz
        return zone if zone in pytz.all_timezones_set else "UTC"

    def _current_period(self, now):
        """The first day of the budget's period holding `now` (naive UTC)."""
        self.ensure_one()
        return period_start(self.period, local_day(now, self._time_zone()))

    def _count_period_usage(self):
        """Sets each budget's counter of the current period to the usage it would have been charged
        with since the period began: a budget made in the middle of a month starts from what the
        month spent, not from nothing. The rows are read as superuser: the counter is everyone's
        the budget applies to, whoever sets it up."""
        now = budget_charges.budget_now(self.env.cr)
        self.env["ai.usage"].flush_model()
        for budget in self:
            start = budget._current_period(now)
            zone = budget._time_zone()
            domain = [
                ("company_id", "=", budget.company_id.id),
                ("date", ">=", utc_midnight(start, zone)),
                ("date", "<", utc_midnight(next_period_start(budget.period, start), zone)),
                *budget._usage_scope(),
            ]
            total = "total_tokens:sum" if budget.unit == "tokens" else "cost:sum"
            # sudo: a budget counts everyone's usage in its scope, not only what its writer may read
            [[spent]] = self.env["ai.usage"].sudo()._read_group(domain, [], [total])
            if spent:
                self.env.cr.execute(
                    "INSERT INTO ai_budget_period (budget_id, period_start, spent, warned) VALUES (%s, %s, %s, false)"
                    " ON CONFLICT (budget_id, period_start) DO UPDATE SET spent = EXCLUDED.spent",
                    (budget.id, start, spent),
                )
            else:  # no counter is nothing spent: the period's first call makes it
                self.env.cr.execute(
                    "UPDATE ai_budget_period SET spent = 0 WHERE budget_id = %s AND period_start = %s",
                    (budget.id, start),
                )
        self.env["ai.budget.period"].invalidate_model()

    def _usage_scope(self):
        """The part of an ai.usage domain naming the calls the budget is charged with, in its company."""
        self.ensure_one()
        if self.scope == "user":
            return [("user_id", "=", self.user_id.id)]
        if self.scope == "cloud_service":
            return [("cloud_service_id", "=", self.cloud_service_id.id)]
        if self.scope == "group":
            members = (
                self.env["res.users"].sudo().with_context(active_test=False).search([user_in_groups(self.group_id.id)])
            )
            return [("user_id", "in", members.ids)]
        return []

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

    def _warning_message(self, spent):
        """What its users are told once the budget's counter reached `spent` (Decimal)."""
        self.ensure_one()
        return self.env._(
            "Your %(period)s AI budget “%(name)s” (%(amount)s) is %(share)s spent.",
            period=self._period_word(),
            name=self.name,
            amount=self._amount_text(),
            share=share_text(spent, Decimal(str(self.amount))),
        )

    def _period_word(self):
        return {
            "day": self.env._("daily"),
            "week": self.env._("weekly"),
            "month": self.env._("monthly"),
            "year": self.env._("yearly"),
        }[self.period]

    def _amount_text(self):
        return self._quantity_text(self.amount)

    def _quantity_text(self, value):
        """`value` in the budget's unit: "1,000 tokens", or money with its currency's symbol and
        decimals, more of them when those would round it (0.045 is not shown as the 0.05 it has
        not reached)."""
        self.ensure_one()
        if self.unit == "tokens":
            return self.env._("%(count)s tokens", count=formatLang(self.env, value, digits=0))
        currency = self.currency_id
        if not currency:
            return formatLang(self.env, value, digits=2)
        digits = currency.decimal_places
        while digits < SPENT_DIGITS and round(value, digits) != round(value, SPENT_DIGITS):
            digits += 1
        if digits == currency.decimal_places:
            return format_amount(self.env, value, currency)
        number = formatLang(self.env, value, digits=digits)
        if currency.position == "before":
            return f"{currency.symbol}\N{NO-BREAK SPACE}{number}"
        return f"{number}\N{NO-BREAK SPACE}{currency.symbol}"

    def _raisers(self):
        """Who can raise the budget: its company's AI managers, by name."""
        group = self.env.ref("ai_mcp.group_ai_manager")
        managers = (
            self.env["res.users"]
            .sudo()
            .search(
                [
                    user_in_groups(group.id),
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
