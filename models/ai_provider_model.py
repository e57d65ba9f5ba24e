"""ai.provider.model: a model a provider serves, and what it accepts.

Records come from the provider's `GET /models` ("Refresh models") or are typed in. Each starts from
the defaults of its family (default_capabilities) and learns from the provider's refusals: a turn
whose request named a parameter the model refused reports it, the capability is switched off here,
and the chatter tells the administrator what was refused and what changed. A turn's LlmSettings
take the capabilities of the record named like its model (ai.provider._llm_settings)."""

from decimal import Decimal

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..odoo_compat import Constraint
from ..selections import MAX_TOKENS_PARAMS, REASONING_EFFORTS
from ..services.llm import ModelCapabilities, ProviderKind, ReasoningEffort, default_capabilities
from ..services.token_usage import Prices

# the capability behind each request parameter a model may refuse (a token cap: max_tokens_param)
REFUSABLE_FIELDS = {
    "temperature": "accepts_temperature",
    "stream_options": "accepts_stream_options",
    "tool_choice": "accepts_tool_choice",
    "parallel_tool_calls": "accepts_parallel_tool_calls",
    "prompt_cache_key": "accepts_prompt_cache_key",
}
TOKEN_CAPS = ("max_tokens", "max_completion_tokens")


def capability_values(capabilities: ModelCapabilities) -> dict:
    """The record's field values for `capabilities`."""
    return {
        "accepts_temperature": capabilities.temperature,
        "native_tools": capabilities.native_tools,
        "accepts_stream_options": capabilities.stream_options,
        "accepts_tool_choice": capabilities.tool_choice,
        "accepts_parallel_tool_calls": capabilities.parallel_tool_calls,
        "reasoning_effort": capabilities.reasoning_effort.value if capabilities.reasoning_effort else False,
        "max_tokens_param": capabilities.max_tokens_param or False,
        "context_window": capabilities.context_window or 0,
        "accepts_prompt_cache_key": capabilities.prompt_cache_key,
    }


class AiProviderModel(models.Model):
    _name = "ai.provider.model"
    _description = "AI Model"
    _inherit = ["mail.thread"]
    _order = "provider_id, name, id"

    name = fields.Char(
        string="Model",
        required=True,
        tracking=True,
        help="The model's id as the provider knows it; on Azure's deployment URL, the deployment's name.",
    )
    provider_id = fields.Many2one("ai.provider", required=True, ondelete="cascade", index=True)
    company_id = fields.Many2one(related="provider_id.company_id", store=True, index=True)
    active = fields.Boolean(default=True)
    listed = fields.Boolean(
        string="Listed by the Provider",
        readonly=True,
        help="The provider's list of models named it when last refreshed.",
    )
    accepts_temperature = fields.Boolean(
        default=True,
        tracking=True,
        help="Off: requests carry no temperature (reasoning models refuse one).",
    )
    native_tools = fields.Boolean(
        string="Native Tool Calls",
        default=True,
        tracking=True,
        help="Off: the tools are described in the prompt (Tools in the Prompt), for models or servers "
        "without function calling.",
    )
    accepts_stream_options = fields.Boolean(
        string="Accepts stream_options",
        default=True,
        tracking=True,
        help="Off: streamed requests do not ask for the token usage (some proxies refuse stream_options).",
    )
    accepts_tool_choice = fields.Boolean(string="Accepts tool_choice", default=True, tracking=True)
    accepts_parallel_tool_calls = fields.Boolean(string="Accepts parallel_tool_calls", default=True, tracking=True)
    accepts_prompt_cache_key = fields.Boolean(
        string="Accepts prompt_cache_key",
        tracking=True,
        help="Requests carry a key per assistant and user, which routes them to the provider's prompt cache "
        "(OpenAI, Azure OpenAI, Mistral). Off for servers that refuse fields they do not know.",
    )
    reasoning_effort = fields.Selection(
        REASONING_EFFORTS, tracking=True, help="Sent with each request when set; empty: the model's own default."
    )
    max_tokens_param = fields.Selection(
        MAX_TOKENS_PARAMS,
        string="Output Cap Parameter",
        tracking=True,
        help="The name the model takes the output cap under; empty: no cap is sent.",
    )
    max_output_tokens = fields.Integer(tracking=True, help="The output cap; 0: none is sent.")
    context_window = fields.Integer(
        tracking=True,
        help="Tokens the model reads at most, its answer included; the conversation sent is fitted to it. "
        "0: unknown (the provider's Context Window When Unknown counts).",
    )

    # -- prices, per million tokens ------------------------------------------------------------------
    currency_id = fields.Many2one(
        "res.currency",
        required=True,
        default=lambda self: self.env.company.currency_id,
        tracking=True,
        help="The currency of the prices; costs are converted to the currency of the company that chats.",
    )
    price_input = fields.Float(
        string="Input Price",
        digits=(16, 6),
        tracking=True,
        help="Per million input tokens, as the provider bills them.",
    )
    price_cached_input = fields.Float(
        string="Cached Input Price",
        digits=(16, 6),
        tracking=True,
        help="Per million input tokens read from the provider's prompt cache; 0: the input price.",
    )
    price_output = fields.Float(
        string="Output Price",
        digits=(16, 6),
        tracking=True,
        help="Per million output tokens, reasoning tokens included.",
    )

    _provider_name_uniq = Constraint("unique(provider_id, name)", "A provider lists each model once.")

    @api.constrains("price_input", "price_cached_input", "price_output")
    def _check_prices(self):
        for model in self:
            for fname in ("price_input", "price_cached_input", "price_output"):
                if model[fname] < 0:
                    raise ValidationError(
                        self.env._(
                            "%(field)s of %(model)s cannot be negative: enter what the provider bills per million "
                            "tokens, or 0.",
                            field=model._fields[fname].get_description(self.env)["string"],
                            model=model.name,
                        )
                    )

    @api.model_create_multi
    def create(self, vals_list):
        """A model typed in or listed starts from its family's defaults, unless told otherwise."""
        providers = self.env["ai.provider"].browse(
            {vals["provider_id"] for vals in vals_list if vals.get("provider_id")}
        )
        kinds = {provider.id: provider.kind for provider in providers.sudo()}
        for vals in vals_list:
            kind = ProviderKind(kinds.get(vals.get("provider_id")) or ProviderKind.COMPATIBLE)
            defaults = capability_values(default_capabilities(vals.get("name") or "", kind))
            vals.update({fname: value for fname, value in defaults.items() if fname not in vals})
        return super().create(vals_list)

    def write(self, vals):
        result = super().write(vals)
        if "name" in vals:
            # an assistant that picked this model keeps naming it
            assistants = self.env["ai.assistant"].sudo().with_context(active_test=False)
            assistants.search([("model_id", "in", self.ids)]).write({"model": vals["name"]})
        return result

    @api.onchange("name")
    def _onchange_name(self):
        """A new model shows its family's defaults as its name is typed."""
        if self._origin.id or not self.name:
            return
        kind = ProviderKind(self.provider_id.kind or ProviderKind.COMPATIBLE)
        self.update(capability_values(default_capabilities(self.name, kind)))

    def _capabilities(self) -> ModelCapabilities:
        self.ensure_one()
        return ModelCapabilities(
            temperature=self.accepts_temperature,
            native_tools=self.native_tools,
            stream_options=self.accepts_stream_options,
            tool_choice=self.accepts_tool_choice,
            parallel_tool_calls=self.accepts_parallel_tool_calls,
            reasoning_effort=ReasoningEffort(self.reasoning_effort) if self.reasoning_effort else None,
            max_tokens_param=self.max_tokens_param or None,
            context_window=self.context_window or None,
            prompt_cache_key=self.accepts_prompt_cache_key,
        )

    def _prices(self, company, date):
        """The prices in `company`'s currency on `date`, as Decimal (services.Prices)."""
        self.ensure_one()
        model = self.sudo()

        def price(amount):
            if model.currency_id != company.currency_id:
                amount = model.currency_id._convert(amount, company.currency_id, company, date, round=False)
            return Decimal(repr(amount))

        return Prices(
            input=price(model.price_input),
            output=price(model.price_output),
            cached_input=price(model.price_cached_input) if model.price_cached_input else None,
        )

    def _learn_refused_param(self, param, message):
        """The model refused the request parameter `param` (the provider said `message`): switch
        the capability off so no request carries it again, and tell the administrator in the
        chatter. Returns whether anything changed."""
        self.ensure_one()
        model = self.sudo()
        change = model._refusal_change(param)
        if change is None:
            return False
        values, what = change
        model.write(values)
        model.message_post(
            body=self.env._(
                "The provider refused %(param)s for %(model)s: “%(message)s”. %(change)s",
                param=param,
                model=model.name,
                message=message,
                change=what,
            ),
            author_id=self.env.ref("base.partner_root").id,
            subtype_xmlid="mail.mt_note",
        )
        return True

    def _refusal_change(self, param):
        """(values to write, a sentence saying what changed) for a refused `param`; None when the
        record already leaves it out or does not know it."""
        if param in TOKEN_CAPS:
            other = TOKEN_CAPS[1 - TOKEN_CAPS.index(param)]
            if self.max_tokens_param == other:
                return None
            return {"max_tokens_param": other}, self.env._("The output cap is sent as %s from now on.", other)
        fname = REFUSABLE_FIELDS.get(param)
        if fname is None or not self[fname]:
            return None
        label = self._fields[fname].get_description(self.env)["string"]
        return {fname: False}, self.env._("“%s” is now off: requests leave the parameter out.", label)
