"""ai.usage: the tokens of one model call and what they cost.

One row per model call of a chat turn, written by the turn's writer (turn/usage_rows.py) in the
transaction that stores the call's `usage` event. Each row names who and what the call was for (user,
company, assistant, provider, model, cloud service, conversation), so reports can group by any of
them and by day. The cost is computed once, when the row is written, from the model's prices then:
a later price change does not rewrite the past. Rows outlive their conversation (its link is
cleared), so the totals stay when old conversations are removed.

The reports (pivot, graph, list totals) sum `report_cost`: the cost converted, when the row is
written, into one currency for the whole database, the main company's, at its rate of the day. A
pivot and a graph always show a grand total, and companies may bill in different currencies: a
sum of `cost` would add dollars to euros. Odoo's own reports do the same (sales and invoices
analyses show amounts converted into one company currency); `cost` keeps what the call cost in
its company's currency, and the chat's totals give it per currency."""

from datetime import datetime, time
from decimal import Decimal

import pytz

from odoo import api, fields, models

from ..services.token_usage import Prices
from ..turn.usage_rows import UsageContext


class AiUsage(models.Model):
    _name = "ai.usage"
    _description = "AI Usage"
    _order = "date desc, id desc"
    _rec_name = "model_name"

    # -- who and what ----------------------------------------------------------------------------
    date = fields.Datetime(required=True, default=fields.Datetime.now, index=True, readonly=True)
    user_id = fields.Many2one("res.users", required=True, index=True, ondelete="cascade", readonly=True)
    company_id = fields.Many2one("res.company", required=True, index=True, readonly=True)
    assistant_id = fields.Many2one("ai.assistant", index=True, ondelete="set null", readonly=True)
    provider_id = fields.Many2one("ai.provider", index=True, ondelete="set null", readonly=True)
    model_id = fields.Many2one("ai.provider.model", index=True, ondelete="set null", readonly=True)
    model_name = fields.Char(readonly=True, help="The model as the request named it.")
    cloud_service_id = fields.Many2one("cloud.service", index="btree_not_null", ondelete="set null", readonly=True)
    conversation_id = fields.Many2one("ai.conversation", index="btree_not_null", ondelete="set null", readonly=True)
    round = fields.Integer(readonly=True, help="The round of its turn the call belongs to.")
    incomplete = fields.Boolean(
        readonly=True,
        help="The call's answer did not stream to its end (cut off, stalled, or stopped with its turn): "
        "the tokens the provider did not report are estimated, since providers bill what they read and sent.",
    )
    sampling = fields.Boolean(
        readonly=True,
        help="The call answered a request of an MCP server for a completion (sampling), approved by the user, "
        "rather than the user's own message.",
    )

    # -- tokens ------------------------------------------------------------------------------------
    input_tokens = fields.Integer(readonly=True)
    cached_input_tokens = fields.Integer(
        readonly=True,
        help="The part of the input tokens the provider read from its prompt cache.",
    )
    output_tokens = fields.Integer(readonly=True)
    reasoning_tokens = fields.Integer(readonly=True, help="The part of the output tokens the model spent reasoning.")
    total_tokens = fields.Integer(readonly=True)

    # -- cost --------------------------------------------------------------------------------------
    currency_id = fields.Many2one("res.currency", required=True, readonly=True)
    # six decimals: a round of a cheap model costs a fraction of a cent, which the currency's
    # rounding would make zero however many rounds are summed
    # never summed by a report: the rows of two companies may be in two currencies (report_cost is)
    cost = fields.Float(
        digits=(16, 6),
        readonly=True,
        aggregator=None,
        help="In the company's currency, from the model's prices when the call was made.",
    )
    report_currency_id = fields.Many2one("res.currency", string="Reporting Currency", readonly=True)
    report_cost = fields.Float(
        string="Cost in Reporting Currency",
        digits=(16, 6),
        readonly=True,
        help="The cost in the main company's currency, at its rate of the day of the call: "
        "what the reports add up, whichever company's currency the calls were in.",
    )

    @api.model
    def _turn_context(self, conversation, model_name):
        """(the turn's SpendGuard or None, what the usage rows of a turn of `conversation` name),
        its request naming `model_name`."""
        conversation = conversation.sudo()
        assistant = conversation.assistant_id
        provider = assistant.provider_id
        # billed to the company the conversation belongs to; one held before companies, to the one worked in
        company = conversation.company_id or self.env.company
        model = provider._model_named(model_name) if provider else self.env["ai.provider.model"]
        prices = model._prices(company, fields.Date.context_today(self)) if model else Prices()
        spend, budgets = self.env["ai.budget"]._turn_spend(
            conversation.user_id, company, conversation.cloud_service_id, prices
        )
        report_currency, report_rate = self._report_rate(company.currency_id, fields.Date.context_today(self))
        return spend, UsageContext(
            user_id=conversation.user_id.id,
            company_id=company.id,
            currency_id=company.currency_id.id,
            assistant_id=assistant.id,
            provider_id=provider.id,
            model_id=model.id or None,
            model_name=model_name,
            cloud_service_id=conversation.cloud_service_id.id or None,
            prices=prices,
            budgets=budgets,
            report_currency_id=report_currency.id,
            report_rate=report_rate,
        )

    @api.model
    def _report_rate(self, currency, day):
        """(the reporting currency, the rate converting an amount of `currency` into it on `day`):
        the main company's currency (the first company without one), at its rates."""
        main = self.env.ref("base.main_company", raise_if_not_found=False) or self.env["res.company"].sudo().search(
            [], order="id", limit=1
        )
        # sudo: the main company's currency and rates, which a user of another company cannot read
        main = main.sudo()
        rate = currency._get_conversion_rate(currency, main.currency_id, main, day) if currency else 1
        return main.currency_id, Decimal(str(rate))

    # -- totals the chat shows -----------------------------------------------------------------------

    @api.model
    def _chat_totals(self, conversation=None, now=None):
        """{month, conversation}: the current user's tokens and cost this month in the current
        company, and those of `conversation` (theirs; None when no conversation is open)."""
        month = [
            ("user_id", "=", self.env.uid),
            ("company_id", "=", self.env.company.id),
            ("date", ">=", self._month_start(now)),
        ]
        return {
            "month": self._totals(month),
            "conversation": self._totals([("conversation_id", "=", conversation.id)]) if conversation else None,
        }

    @api.model
    def _totals(self, domain):
        """{tokens, costs: [{amount, currency}]} of the rows of `domain`: one grouped query, a cost
        per currency (a conversation's rows are in its company's currency), none of no cost."""
        groups = self.sudo()._read_group(domain, ["currency_id"], ["total_tokens:sum", "cost:sum"])
        costs = [
            {"amount": cost, "currency": _currency(currency)} for currency, _tokens, cost in groups if cost and cost > 0
        ]
        return {"tokens": sum(tokens or 0 for _currency, tokens, _cost in groups), "costs": costs}

    @api.model
    def _month_start(self, now=None):
        """The first instant of the current month in the user's time zone, as a naive UTC datetime."""
        now = now or fields.Datetime.now()
        zone = pytz.timezone(self.env.context.get("tz") or self.env.user.tz or "UTC")
        local = pytz.utc.localize(now).astimezone(zone)
        first = zone.localize(datetime.combine(local.date().replace(day=1), time.min))
        return first.astimezone(pytz.utc).replace(tzinfo=None)


def _currency(currency):
    """What the widget formats an amount of `currency` (res.currency) with."""
    return {
        "code": currency.name,
        "symbol": currency.symbol,
        "position": currency.position,
        "digits": currency.decimal_places,
    }
