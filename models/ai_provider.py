"""ai.provider: where a model is reached: its kind (OpenAI, Azure OpenAI, any OpenAI-compatible
server, filled from a preset), base URL, API (Chat Completions or, for OpenAI and Azure, Responses),
write-only API key, extra headers and query parameters (ai.secret.mixin), default model, timeout
and the context window of its models of unknown size, and the models it serves (ai.provider.model,
listed by "Refresh models"). Assistants (ai.assistant) name a provider and optionally a model; the
agent loop gets the provider's settings, secrets decrypted, only when a turn calls the model. An
administrator tests a provider with the call a turn makes."""

import json

from pydantic import ValidationError as PydanticValidationError

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..companies import linked_from_elsewhere, named_with_company
from ..hub_process import process_hub
from ..notify import config_error_text, error_text, notification
from ..selections import API_STYLES, PROVIDER_KINDS, PROVIDER_PRESETS
from ..services.errors import AiMcpError, ConfigError
from ..services.http_validation import check_url, parse_headers_json
from ..services.limits import FALLBACK_CONTEXT_WINDOW
from ..services.llm import (
    PRESETS,
    ApiStyle,
    LlmSettings,
    ProviderKind,
    capabilities_without,
    check_azure_url,
    default_capabilities,
    list_models,
    ping,
)
from ..services.server_spec import config_error_from
from ..window_actions import related_list

# the kinds whose servers speak the Responses API
RESPONSES_KINDS = (ProviderKind.OPENAI, ProviderKind.AZURE)


class AiProvider(models.Model):
    _name = "ai.provider"
    _description = "AI Provider"
    _inherit = ["mail.thread", "ai.secret.mixin"]
    _order = "name, id"
    _secret_fields = ("api_key", "extra_headers", "extra_query")
    _check_company_auto = True

    name = fields.Char(required=True, tracking=True)
    active = fields.Boolean(default=True, tracking=True)
    company_id = fields.Many2one(
        "res.company",
        default=lambda self: self.env.company,
        index=True,
        tracking=True,
        help="Only assistants of this company use the provider; empty: shared by every company.",
    )
    preset = fields.Selection(
        PROVIDER_PRESETS, help="Fills the kind, base URL, API version and default model; every value stays editable."
    )
    kind = fields.Selection(
        PROVIDER_KINDS,
        required=True,
        default=ProviderKind.OPENAI.value,
        tracking=True,
        help="OpenAI's own API; Azure OpenAI (its v1 URL, or its deployment URL with an API version); or any "
        "server speaking OpenAI's Chat Completions (Ollama, vLLM, LiteLLM, OpenRouter, Mistral, Groq, "
        "DeepSeek, Gemini's or Anthropic's OpenAI compatibility ...).",
    )
    api_style = fields.Selection(
        API_STYLES,
        string="API",
        required=True,
        default=ApiStyle.CHAT_COMPLETIONS.value,
        tracking=True,
        help="The API a turn speaks. Responses is offered by OpenAI and Azure only; a model's name never switches it.",
    )
    base_url = fields.Char(
        string="Base URL",
        required=True,
        default="https://api.openai.com/v1",
        tracking=True,
        help="e.g. https://api.openai.com/v1, http://localhost:11434/v1; for Azure's deployment URL, the "
        "resource's URL (https://RESOURCE.openai.azure.com)",
    )
    api_version = fields.Char(
        string="API Version",
        tracking=True,
        help="Azure only: with a version (e.g. 2024-10-21), requests go to the deployment URL "
        "(.../openai/deployments/<default model>/...?api-version=) with the key in the api-key header; "
        "empty: the v1 URL.",
    )
    extra_headers = fields.Text(
        compute="_compute_extra_headers",
        inverse="_inverse_extra_headers",
        copy=False,
        help="Write-only: a JSON object of header names and values sent with every request, e.g. "
        '{"OpenAI-Organization": "org-1"}. Leave empty to keep the stored headers.',
    )
    extra_headers_set = fields.Boolean(compute="_compute_secrets_set")
    extra_header_names = fields.Char(
        string="Header Names", readonly=True, help="The names of the stored extra headers."
    )
    # write-only as the headers are: some gateways take their key in the query
    extra_query = fields.Text(
        string="Query Parameters",
        compute="_compute_extra_query",
        inverse="_inverse_extra_query",
        copy=False,
        help='Write-only: a JSON object of query parameters added to every request, e.g. {"tenant": "acme"}. '
        "Leave empty to keep the stored parameters.",
    )
    extra_query_set = fields.Boolean(compute="_compute_secrets_set")
    extra_query_names = fields.Char(
        string="Query Parameter Names", readonly=True, help="The names of the stored query parameters."
    )
    lists_models = fields.Boolean(
        string="Lists Its Models", default=True, help="The provider answers GET /models with the models it serves."
    )
    model_ids = fields.One2many("ai.provider.model", "provider_id", string="Models")
    model_count = fields.Integer(compute="_compute_model_count")
    api_key = fields.Char(
        string="API Key",
        compute="_compute_api_key",
        inverse="_inverse_api_key",
        copy=False,
        help="Write-only. Leave empty to keep the stored key.",
    )
    api_key_set = fields.Boolean(string="API Key Set", compute="_compute_secrets_set")
    default_model = fields.Char(
        required=True, default="gpt-4o-mini", tracking=True, help="Used by assistants that do not name a model."
    )
    timeout = fields.Float(default=60.0, help="Seconds to wait for the model.")
    fallback_context_window = fields.Integer(
        string="Context Window When Unknown",
        default=int(FALLBACK_CONTEXT_WINDOW.default),
        tracking=True,
        help="Tokens a model of this provider reads at most when its own context window is not set on the model: "
        "the conversation sent to the model is fitted to it, the oldest turns left out first.",
    )

    def _compute_api_key(self):
        self._secret_compute("api_key")

    def _inverse_api_key(self):
        self._secret_inverse("api_key")

    def _compute_extra_headers(self):
        self._secret_compute("extra_headers")

    def _inverse_extra_headers(self):
        names = {provider.id: provider.extra_headers for provider in self}
        self._secret_inverse("extra_headers")
        for provider in self:
            if names[provider.id]:
                provider.extra_header_names = ", ".join(parse_headers_json(names[provider.id], field="extra_headers"))

    def _compute_extra_query(self):
        self._secret_compute("extra_query")

    def _inverse_extra_query(self):
        written = {provider.id: provider.extra_query for provider in self}
        self._secret_inverse("extra_query")
        for provider in self:
            if written[provider.id]:
                provider.extra_query_names = ", ".join(name for name, _value in _query_pairs(written[provider.id]))

    def _secret_normalize(self, fname, value):
        if fname == "extra_headers":
            return json.dumps(parse_headers_json(value, field="extra_headers"))
        if fname == "extra_query":
            try:
                return json.dumps(dict(_query_pairs(value)))
            except ValueError:
                raise ValidationError(
                    self.env._(
                        '%s: the query parameters must be a JSON object of strings, e.g. {"tenant": "acme"}.',
                        self.name,
                    )
                ) from None
        return super()._secret_normalize(fname, value)

    @api.depends("model_ids")
    def _compute_model_count(self):
        for provider in self:
            provider.model_count = len(provider.model_ids)

    @api.onchange("preset")
    def _onchange_preset(self):
        preset = PRESETS.get(self.preset)
        if preset is None:
            return
        values = {
            "kind": preset.kind.value,
            "api_style": preset.api.value,
            "api_version": preset.api_version,
            "lists_models": preset.lists_models,
        }
        if preset.base_url:
            values.update(base_url=preset.base_url, default_model=preset.default_model)
        if not self.name:
            values["name"] = preset.label
        self.update(values)

    @api.onchange("kind")
    def _onchange_kind(self):
        if self.kind not in RESPONSES_KINDS:
            self.api_style = ApiStyle.CHAT_COMPLETIONS.value
        if self.kind != ProviderKind.AZURE:
            self.api_version = False

    @api.constrains("kind", "api_style")
    def _check_api(self):
        for provider in self:
            if provider.api_style == ApiStyle.RESPONSES and provider.kind not in RESPONSES_KINDS:
                raise ValidationError(
                    self.env._("%s: the Responses API is offered by OpenAI and Azure OpenAI only.", provider.name)
                )

    @api.constrains("base_url")
    def _check_base_url(self):
        for provider in self:
            try:
                check_url(provider.base_url, field="base_url")
            except ConfigError as exc:
                raise ValidationError(
                    self.env._(
                        "%(provider)s: %(problem)s", provider=provider.name, problem=config_error_text(provider, exc)
                    )
                ) from None

    @api.constrains("kind", "base_url", "api_version")
    def _check_azure_url(self):
        for provider in self:
            try:
                provider._azure_url_checked()
            except ConfigError as exc:
                raise ValidationError(
                    self.env._(
                        "%(provider)s: %(problem)s", provider=provider.name, problem=config_error_text(provider, exc)
                    )
                ) from None

    def _azure_url_checked(self):
        """Raises ConfigError for an Azure URL that cannot work as typed (check_azure_url)."""
        check_azure_url(ProviderKind(self.kind), self.base_url or "", self.api_version or "")

    @api.constrains("fallback_context_window")
    def _check_fallback_context_window(self):
        for provider in self:
            if not FALLBACK_CONTEXT_WINDOW.allows(provider.fallback_context_window):
                raise ValidationError(
                    self.env._(
                        "%(provider)s: the context window when unknown must be between %(low)s and %(high)s tokens.",
                        provider=provider.name,
                        **FALLBACK_CONTEXT_WINDOW.bounds,
                    )
                )

    @api.constrains("timeout")
    def _check_timeout(self):
        for provider in self:
            if provider.timeout <= 0:
                raise ValidationError(
                    self.env._("%s: the timeout must be a positive number of seconds.", provider.name)
                )

    def write(self, vals):
        if vals.get("company_id"):
            self._check_assistants_fit(self.env["res.company"].browse(vals["company_id"]))
        return super().write(vals)

    def _check_assistants_fit(self, company):
        """A provider moved to `company` would serve assistants of another company, or shared ones,
        that use it: refused, naming them (Odoo checks the link from the assistant's side only)."""
        for provider in self:
            assistants = linked_from_elsewhere(company, "ai.assistant", [("provider_id", "=", provider.id)])
            if assistants:
                raise ValidationError(
                    self.env._(
                        "%(provider)s cannot belong to %(company)s while assistants of another company, or shared "
                        "ones, use it: %(assistants)s. Choose another provider for them first, or leave it shared.",
                        provider=provider.name,
                        company=company.sudo().name,
                        assistants=named_with_company(assistants),
                    )
                )

    def _llm_settings(self, model=None, temperature=None):
        """LlmSettings with the secrets decrypted: only for the code that calls the model. What the
        model accepts comes from its record (ai.provider.model named `model`, default: the
        provider's default model), else from its family's defaults."""
        self.ensure_one()
        provider = self.sudo()
        name = (model or provider.default_model or "").strip()
        provider._azure_url_checked()  # saved before the check existed: said here rather than as a 401
        record = provider._model_named(name)
        capabilities = record._capabilities() if record else default_capabilities(name, ProviderKind(provider.kind))
        try:
            return LlmSettings(
                base_url=provider.base_url.strip(),
                api_key=provider._secret_value("api_key"),
                model=name,
                temperature=temperature,
                timeout=provider.timeout,
                kind=provider.kind,
                api=provider.api_style,
                api_version=(provider.api_version or "").strip() if provider.kind == ProviderKind.AZURE else "",
                extra_headers=tuple(parse_headers_json(provider._secret_value("extra_headers")).items()),
                extra_query=_query_pairs(provider._secret_value("extra_query")),
                capabilities=capabilities,
                max_output_tokens=record.max_output_tokens or None if record else None,
                fallback_context_window=provider.fallback_context_window,
            )
        except PydanticValidationError as exc:
            raise config_error_from(exc) from None

    def _model_named(self, name):
        """The model record of this provider called `name` (archived ones too), or an empty recordset."""
        self.ensure_one()
        Model = self.env["ai.provider.model"].sudo().with_context(active_test=False)
        return Model.search([("provider_id", "=", self.id), ("name", "=", name)], limit=1)

    def _learn_refused_param(self, model, param, message):
        """A turn's `model` refused `param`: its record (made now if the model was typed in the
        assistant only) learns it, so later turns leave the parameter out."""
        self.ensure_one()
        record = self._model_named(model) or self.env["ai.provider.model"].sudo().create(
            {"provider_id": self.id, "name": model}
        )
        return record._learn_refused_param(param, message)

    def _test_model(self, model, temperature=None, prompted_tools=False):
        """The call a turn makes, on the loop turns run on: `prompted_tools`, the assistant's
        "Tools in the Prompt", offers no tool, as its turns offer none."""
        self.ensure_one()
        refused = []
        settings = None
        try:
            settings = self._llm_settings(model=model, temperature=temperature)
            if prompted_tools:
                settings = capabilities_without(settings, "native_tools")
            # heard on the hub's thread, learned here (this thread's cursor) as a turn would learn it
            latency = process_hub().run(ping(settings, on_refused=lambda param, why: refused.append((param, why))))
        except AiMcpError as exc:
            return notification(
                self.env._("%s did not answer", self.name), error_text(exc, self), "danger", sticky=True, reload=False
            )
        finally:
            for param, why in refused:
                self._learn_refused_param(settings.model, param, why)  # refused: settings were made
        return notification(
            self.env._("%s answered", self.name),
            self.env._("%(model)s answered in %(latency)s ms.", model=settings.model, latency=latency),
            "success",
            reload=False,
        )

    def action_test_provider(self):
        self.ensure_one()
        return self._test_model(self.default_model)

    def action_refresh_models(self):
        """Ask the provider for the models it serves: new ones become records with their family's
        defaults, known ones keep what they learned, and those it no longer lists stay (assistants
        may name them), marked as not listed."""
        self.ensure_one()
        self.check_access("write")
        try:
            listed = list_models(self._llm_settings())
        except AiMcpError as exc:
            return notification(
                self.env._("%s did not list its models", self.name),
                error_text(exc, self),
                "danger",
                sticky=True,
                reload=False,
            )
        Model = self.env["ai.provider.model"].with_context(active_test=False)
        known = Model.search([("provider_id", "=", self.id)])
        by_name = {record.name: record for record in known}
        windows = {model.id: model.context_window for model in listed}
        new = [name for name in windows if name not in by_name]
        Model.create([{"provider_id": self.id, **_listed_values(name, windows[name])} for name in new])
        known.filtered(lambda r: r.name in windows and not r.listed).write({"listed": True})
        gone = known.filtered(lambda r: r.name not in windows and r.listed)
        gone.write({"listed": False})
        # a window the listing gives fills one the record does not know; one typed in stays
        for record in known.filtered(lambda r: windows.get(r.name) and not r.context_window):
            record.context_window = windows[record.name]
        return notification(
            self.env._("%s lists its models", self.name),
            self._refresh_summary(len(windows), len(new), len(gone)),
            "success",
        )

    def _refresh_summary(self, count, new, gone):
        listed = self.env._("1 model listed") if count == 1 else self.env._("%(count)s models listed", count=count)
        return self.env._(
            "%(listed)s: %(new)s new, %(gone)s no longer listed (kept for the assistants that name them).",
            listed=listed,
            new=new,
            gone=gone,
        )

    def action_open_models(self):
        return related_list(self, self.env._("Models of %s", self.name), "ai.provider.model", "provider_id")

    def action_clear_api_key(self):
        return self._secret_clear("api_key")

    def action_clear_extra_headers(self):
        self._secret_clear("extra_headers")
        self.write({"extra_header_names": False})
        return True

    def action_clear_extra_query(self):
        self._secret_clear("extra_query")
        self.write({"extra_query_names": False})
        return True


def _listed_values(name, context_window):
    values = {"name": name, "listed": True}
    if context_window:
        values["context_window"] = context_window  # the provider's word over the family's default
    return values


def _query_pairs(text):
    """The query parameters of a JSON object of strings, as pairs; raises ValueError otherwise."""
    if not text or not text.strip():
        return ()
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(value, str) for value in data.values()):
        raise ValueError("not a JSON object of strings")
    return tuple(data.items())
