"""mcp.identity.provider: a company's identity provider (an OpenID Connect provider such as Okta,
Microsoft Entra ID or Keycloak), set up once per company by an AI manager and then chosen on the
servers it vouches for users at (enterprise-managed authorization, models/server/oauth_enterprise.py).

Each user signs in to it once from Odoo (AI › Company Sign-in): Odoo keeps her ID token and refresh
token (mcp.identity.grant) and exchanges the ID token at the provider for each server she uses. The
protocol is services/oauth/identity_provider.py; this model maps the record to it."""

import logging
from urllib.parse import urlsplit

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError

from ..hub_process import process_hub
from ..notify import config_error_text, notification, oauth_error_text
from ..services.errors import AiMcpError, ConfigError, ErrorCode, OAuthError
from ..services.http_validation import check_url
from ..services.oauth import (
    DEFAULT_IDENTITY_SCOPE,
    GuardedHttp,
    IdentityProvider,
    discover_provider,
    finish_sign_in,
    read_callback,
    start_sign_in,
)

_logger = logging.getLogger(__name__)

CALLBACK_PATH = "/ai_mcp/identity/callback"
START_PATH = "/ai_mcp/identity/start"
URL_FIELDS = ("issuer", "authorization_endpoint", "token_endpoint")
# a change of any of them makes the users' sign-ins ones of another provider or client
SIGN_IN_FIELDS = frozenset({"issuer", "client_id"})


class McpIdentityProvider(models.Model):
    _name = "mcp.identity.provider"
    _description = "Company Identity Provider"
    _inherit = ["ai.secret.mixin"]
    _secret_fields = ("client_secret",)
    _order = "company_id, name, id"

    name = fields.Char(required=True, help="What users see: “sign in to <name>”.")
    active = fields.Boolean(default=True)
    company_id = fields.Many2one(
        "res.company",
        required=True,
        default=lambda self: self.env.company,
        index=True,
        help="Whose users it vouches for: users of other companies neither see it nor reach servers through it.",
    )

    # -- where it is and who Odoo is to it -------------------------------------------------------
    issuer = fields.Char(
        required=True,
        help="The provider's issuer URL (its OpenID Connect configuration is at <issuer>/.well-known/"
        "openid-configuration). Press Discover to fill the endpoints from it.",
    )
    authorization_endpoint = fields.Char(help="Where a user's browser signs in.")
    token_endpoint = fields.Char(help="Where Odoo exchanges a user's ID token for each server.")
    client_id = fields.Char(
        string="Client ID",
        required=True,
        help="Odoo's client at the provider: an OpenID Connect web client whose redirect URI is the one below, "
        "allowed to exchange tokens (RFC 8693) for identity assertion grants.",
    )
    client_secret = fields.Char(
        compute="_compute_client_secret",
        inverse="_inverse_client_secret",
        copy=False,
        help="Write-only. Empty for a public client.",
    )
    client_secret_set = fields.Boolean(compute="_compute_secrets_set")
    scopes = fields.Char(
        default=DEFAULT_IDENTITY_SCOPE,
        help="What a user's sign-in asks for: openid (her ID token) and offline_access (a refresh token, so that "
        "she signs in once and not each time her ID token expires).",
    )
    redirect_uri = fields.Char(string="Redirect URI", compute="_compute_redirect_uri")

    # -- the current user's sign-in to it ------------------------------------------------------------
    signed_in = fields.Boolean(compute="_compute_sign_in")
    sign_in_status = fields.Char(string="Your Sign-in", compute="_compute_sign_in")

    def _compute_client_secret(self):
        self._secret_compute("client_secret")

    def _inverse_client_secret(self):
        self._secret_inverse("client_secret")

    def _compute_redirect_uri(self):
        uri = self.get_base_url().rstrip("/") + CALLBACK_PATH
        for provider in self:
            provider.redirect_uri = uri

    @api.depends_context("uid")
    def _compute_sign_in(self):
        Grant = self.env["mcp.identity.grant"]
        for provider in self:
            grant = Grant._of(provider, self.env.user) if isinstance(provider.id, int) else Grant
            provider.signed_in = bool(grant)
            provider.sign_in_status = grant._status() if grant else self.env._("Not signed in")

    @api.constrains(*URL_FIELDS)
    def _check_urls(self):
        for provider in self:
            for fname in URL_FIELDS:
                if not provider[fname]:
                    continue
                try:
                    check_url(provider[fname])
                except ConfigError as exc:
                    raise ValidationError(
                        self.env._(
                            "%(provider)s, %(field)s: %(problem)s",
                            provider=provider.name,
                            field=provider._fields[fname].string,
                            problem=config_error_text(provider, exc),
                        )
                    ) from None

    def write(self, vals):
        moved = self._fields_changed_by(vals, SIGN_IN_FIELDS)
        result = super().write(vals)
        if moved:
            # the users' ID tokens are another provider's or another client's: each signs in again
            # sudo: every user's sign-in at the provider goes, not only the writer's
            grants = self.env["mcp.identity.grant"].sudo().search([("provider_id", "in", self.ids)])
            _logger.info("Identity provider changed, sign-ins dropped: providers=%s grants=%d", self.ids, len(grants))
            for user in grants.user_id:
                self._forget_server_tokens(user)
            grants.unlink()
        return result

    # -- what the services are given -----------------------------------------------------------------

    def _spec(self):
        """The IdentityProvider the services speak to; raises UserError when it is not set up."""
        self.ensure_one()
        # sudo: Odoo's client secret is read by the code that signs users in and exchanges their tokens
        provider = self.sudo()
        if not provider.token_endpoint:
            raise UserError(
                self.env._("%s has no Token Endpoint: an AI manager presses Discover on its form.", provider.name)
            )
        return IdentityProvider(
            name=provider.name,
            issuer=provider.issuer.strip(),
            token_endpoint=provider.token_endpoint.strip(),
            authorization_endpoint=(provider.authorization_endpoint or "").strip() or None,
            client_id=provider.client_id.strip(),
            client_secret=provider._secret_value("client_secret") or None,
            scope=provider.scopes or DEFAULT_IDENTITY_SCOPE,
        )

    def _http(self):
        """The guard of its requests: its own hosts may be private (an administrator set them, as a
        system server's), any other only public or listed in the allowed hosts."""
        self.ensure_one()
        own = {urlsplit(url).hostname for url in (self.issuer, self.authorization_endpoint, self.token_endpoint) if url}
        listed = {h.strip() for h in self.env["mcp.server"]._allowed_hosts() if h.strip()}
        return GuardedHttp(tuple(sorted(listed | {h for h in own if h})))

    def _user_may_sign_in(self, user):
        return self.company_id in user.company_ids

    # -- a user's sign-in ------------------------------------------------------------------------------

    def _sign_in_begin(self, session_id):
        """The provider's URL to send the current user's browser to; the pending sign-in is bound to
        her and `session_id`. Raises AccessError, UserError, OAuthError."""
        self.ensure_one()
        if not self._user_may_sign_in(self.env.user):
            # not named: another company's provider stays unknown to her
            raise AccessError(self.env._("This identity provider does not vouch for users of your companies."))
        # sudo: a user signs in with Odoo's client secret, which she may not read
        provider = self.sudo()
        url, pending = process_hub().run(start_sign_in(provider._spec(), provider.redirect_uri, provider._http()))
        self.env["mcp.oauth.pending"]._begin(None, pending, session_id, self.env.user, identity_provider=provider)
        _logger.info("Identity provider sign-in started: provider=%s user=%s", provider.name, self.env.uid)
        return url

    @api.model
    def _sign_in_finish(self, params, session_id):
        """The callback: check it answers a sign-in of this user and session, exchange the code and
        keep her ID token. Returns the provider. Raises OAuthError."""
        pending, started = self.env["mcp.oauth.pending"]._take(params.get("state"), session_id)
        # sudo: the pending sign-in was hers (checked by _take); the provider's secret is read for her
        provider = started["identity_provider"].sudo()
        if not provider:
            raise OAuthError(ErrorCode.OAUTH_STATE_INVALID)  # a sign-in at a server: not this callback's
        code = read_callback(params, pending)
        tokens = process_hub().run(finish_sign_in(code, pending, provider._spec(), provider._http()))
        self.env["mcp.identity.grant"]._store(provider, self.env.user, tokens, signed_in=True)
        # her tokens at the servers were given for the identity she had: the next call asks afresh
        provider._forget_server_tokens(self.env.user)
        _logger.info("Identity provider sign-in finished: provider=%s user=%s", provider.name, self.env.uid)
        return provider

    def _forget_server_tokens(self, user):
        """Drop `user`'s tokens at the servers this provider vouched for her at."""
        # sudo: the servers and her grants there are read past her rights (the grants have no access
        # rights at all), and only hers are dropped
        servers = self.env["mcp.server"].sudo().search([("oauth_identity_provider_id", "in", self.ids)])
        self.env["mcp.oauth.token"].sudo().search(
            [("server_id", "in", servers.ids), ("user_id", "=", user.id)]
        ).unlink()

    # -- actions ---------------------------------------------------------------------------------------

    def action_discover(self):
        """Fill the endpoints from the provider's OpenID Connect configuration."""
        self.ensure_one()
        try:
            endpoints = process_hub().run(discover_provider(self.issuer.strip(), self._http()))
        except AiMcpError as exc:
            return notification(
                self.env._("Cannot read %s's configuration", self.name),
                oauth_error_text(self.env, exc),
                "danger",
                sticky=True,
                reload=False,
            )
        self.write(endpoints)
        _logger.info("Identity provider discovered: provider=%s issuer=%s", self.name, self.issuer)
        return notification(
            self.env._("%s found", self.name),
            self.env._("Its endpoints are filled in. Give the provider the Redirect URI shown here."),
            "success",
        )

    def action_sign_in(self):
        """The current user's one sign-in to the provider, in a new tab."""
        self.ensure_one()
        return {"type": "ir.actions.act_url", "url": f"{START_PATH}?provider_id={self.id}", "target": "new"}

    def action_sign_out(self):
        """Forget the current user's ID token and refresh token, and her tokens at the servers they
        were exchanged for."""
        self.ensure_one()
        self.env["mcp.identity.grant"]._of(self, self.env.user).unlink()
        self._forget_server_tokens(self.env.user)
        _logger.info("Identity provider sign-out: provider=%s user=%s", self.name, self.env.uid)
        return True
