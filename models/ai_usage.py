"""ai.usage: the tokens of one model call and what they cost.

One row per model call of a chat turn, written by the turn's writer (turn/usage_rows.py) in the
transaction that stores the call's `usage` event. Each row names who and what the call was for (user,
company, assistant, provider, model, cloud service, conversation), so reports can group by any of
them and by day. The cost is computed once, when the row is written, from the model's prices then:
a later price change does not rewrite the past. Rows outlive their conversation (its link is
cleared), so the totals stay when old conversations are removed."""

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
    cost = fields.Float(
        digits=(16, 6),
        readonly=True,
        help="In the company's currency, from the model's prices when the call was made.",
    )

    @api.model
    def _turn_context(self, conversation, model_name):
        """(the turn's SpendGuard or None, what the usage rows of a turn of `conversation` name),
        its request naming `model_name`."""
        conversation = conversation.sudo()
        assistant = conversation.assistant_id
        provider = assistant.provider_id
        company = self.env.company
        model = provider._model_named(model_name) if provider else self.env["ai.provider.model"]
        prices = model._prices(company, fields.Date.context_today(self)) if model else Prices()
        spend, budgets = self.env["ai.budget"]._turn_spend(
            conversation.user_id, company, conversation.cloud_service_id, prices
        )
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
        )
