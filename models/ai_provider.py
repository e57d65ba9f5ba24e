"""ai.provider: an OpenAI-compatible endpoint a model is reached through: its base URL, its
write-only API key (ai.secret.mixin), its default model and timeout. Assistants (ai.assistant)
name a provider and optionally a model; the agent loop gets the provider's settings, key
decrypted, only when a turn calls the model. An administrator tests a provider with one request."""

from pydantic import ValidationError as PydanticValidationError

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..notify import config_error_text, error_text, notification
from ..services.errors import AiMcpError, ConfigError
from ..services.http_validation import check_url
from ..services.llm import LlmSettings, ping
from ..services.server_spec import config_error_from


class AiProvider(models.Model):
    _name = "ai.provider"
    _description = "AI Provider"
    _inherit = ["mail.thread", "ai.secret.mixin"]
    _order = "name, id"
    _secret_fields = ("api_key",)

    name = fields.Char(required=True, tracking=True)
    active = fields.Boolean(default=True, tracking=True)
    base_url = fields.Char(
        string="Base URL",
        required=True,
        default="https://api.openai.com/v1",
        tracking=True,
        help="Any OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
    )
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

    def _compute_api_key(self):
        self._secret_compute("api_key")

    def _inverse_api_key(self):
        self._secret_inverse("api_key")

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

    @api.constrains("timeout")
    def _check_timeout(self):
        for provider in self:
            if provider.timeout <= 0:
                raise ValidationError(
                    self.env._("%s: the timeout must be a positive number of seconds.", provider.name)
                )

    def _llm_settings(self, model=None, temperature=None):
        """LlmSettings with the key decrypted: only for the code that calls the model."""
        self.ensure_one()
        provider = self.sudo()
        try:
            return LlmSettings(
                base_url=provider.base_url.strip(),
                api_key=provider._secret_value("api_key"),
                model=(model or provider.default_model or "").strip(),
                temperature=temperature,
                timeout=provider.timeout,
            )
        except PydanticValidationError as exc:
            raise config_error_from(exc) from None

    def _test_model(self, model):
        self.ensure_one()
        try:
            settings = self._llm_settings(model=model)
            latency = ping(settings)
        except AiMcpError as exc:
            return notification(
                self.env._("%s did not answer", self.name), error_text(exc, self), "danger", sticky=True, reload=False
            )
        return notification(
            self.env._("%s answered", self.name),
            self.env._("%(model)s answered in %(latency)s ms.", model=settings.model, latency=latency),
            "success",
            reload=False,
        )

    def action_test_provider(self):
        self.ensure_one()
        return self._test_model(self.default_model)

    def action_clear_api_key(self):
        return self._secret_clear("api_key")
