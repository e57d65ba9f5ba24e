"""mcp.server, signing in with OAuth: the settings an administrator chooses, the sign-in started
and finished for a user (or for the shared grant), sign-out, and the grants a turn calls with.

The protocol is in services/oauth/; this file only maps records to it. Odoo is the OAuth
client: it registers once per server (the registration is a secret of the server, shared by its
users), and each user, or the server's manager for a shared grant, consents at the provider."""

import json
import logging
from urllib.parse import urlencode

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError

from ...companies import company_allows
from ...hub_process import process_hub
from ...notify import notification, oauth_error_text
from ...services.errors import AiMcpError, AuthRequired, ErrorCode, OAuthError
from ...services.oauth import (
    ClientAuth,
    ClientCredentialsTokens,
    ClientRegistration,
    GuardedHttp,
    MachineClient,
    RefreshingTokens,
    discover,
    exchange_code,
    generate_private_key,
    oauth_allowed_hosts,
    public_key,
    read_callback,
    register,
    revoke,
    same_issuer,
    start_authorization,
)
from .mcp_oauth_token import OdooTokenStore

_logger = logging.getLogger(__name__)

CALLBACK_PATH = "/ai_mcp/oauth/callback"
START_PATH = "/ai_mcp/oauth/start"
CLIENT_METADATA_PATH = "/ai_mcp/oauth/client-metadata.json"


# a change of any of them makes the registration and the grants ones of another client
OAUTH_CLIENT_FIELDS = frozenset({"url", "oauth_client_id", "oauth_client_secret"})
# a change of any of them makes a company client's token one of another client
MACHINE_CLIENT_FIELDS = frozenset(
    {
        "url",
        "oauth_flow",
        "oauth_client_id",
        "oauth_client_auth",
        "oauth_client_secret",
        "oauth_private_key",
        "oauth_scopes",
        "oauth_workload_token",
        "oauth_identity_provider_id",
    }
)


class McpServer(models.Model):
    _inherit = "mcp.server"
    _secret_fields = (
        "api_key",
        "headers",
        "env_vars",
        "oauth_client_secret",
        "oauth_registration",
        "oauth_private_key",
    )

    # -- OAuth settings --------------------------------------------------------------------------
    oauth_token_scope = fields.Selection(
        [("user", "Per user"), ("shared", "Shared")],
        string="Sign-in",
        default="user",
        required=True,
        help="Per user: each user signs in with their own account the first time a conversation needs this server. "
        "Shared: the server's manager signs in once, and every conversation that may use the server uses that grant.",
    )
    oauth_flow = fields.Selection(
        [
            ("authorization_code", "A person (authorization code)"),
            ("client_credentials", "Company client (client credentials)"),
        ],
        string="Signs In As",
        default="authorization_code",
        required=True,
        help="A person: a user (or, for a shared sign-in, the server's manager) signs in at the provider in the "
        "browser. Company client: Odoo signs in by itself with a client the identity provider made for it (client "
        "id and a secret or a private key), with no person and no browser; only for a shared sign-in.",
    )
    oauth_client_auth = fields.Selection(
        [("client_secret", "Client secret"), ("private_key_jwt", "Private key (JWT)")],
        string="Client Authentication",
        default="client_secret",
        required=True,
        help="How the company client proves who it is to the provider: the client secret it was given, or a JWT "
        "signed with a private key kept in Odoo, whose public key the provider holds.",
    )
    oauth_private_key = fields.Text(
        string="Private Key",
        compute="_compute_oauth_private_key",
        inverse="_inverse_oauth_private_key",
        copy=False,
        help="Write-only: the company client's private key (PEM). Generate one with the button, or paste the one the "
        "provider gave. Leave empty to keep the stored key.",
    )
    oauth_private_key_set = fields.Boolean(compute="_compute_secrets_set")
    oauth_public_jwk = fields.Text(
        string="Public Key (JWK)",
        compute="_compute_oauth_public_key",
        help="Give this to the identity provider as the client's key: it checks the client's JWTs with it.",
    )
    oauth_public_pem = fields.Text(string="Public Key (PEM)", compute="_compute_oauth_public_key")
    oauth_scopes = fields.Char(
        string="Scopes", help="Scopes to ask for, separated by spaces. Empty: what the server advertises."
    )
    oauth_client_id = fields.Char(
        string="Client ID",
        help="Only for providers that offer neither client metadata documents nor dynamic registration: "
        "register Odoo with the provider (redirect URI below) and enter the client id it gives.",
    )
    oauth_client_secret = fields.Char(
        string="Client Secret",
        compute="_compute_oauth_client_secret",
        inverse="_inverse_oauth_client_secret",
        copy=False,
        help="Write-only, with the client id above when the provider gave one.",
    )
    oauth_client_secret_set = fields.Boolean(compute="_compute_secrets_set")
    # how Odoo is registered with the provider and where its endpoints are (JSON): secret, as the
    # registration may hold a client secret
    oauth_registration = fields.Text(
        compute="_compute_oauth_registration", inverse="_inverse_oauth_registration", copy=False
    )
    oauth_registration_set = fields.Boolean(compute="_compute_secrets_set")
    oauth_redirect_uri = fields.Char(string="Redirect URI", compute="_compute_oauth_redirect_uri")

    # -- the sign-in of the current user (or the shared one), as the form shows it ----------------
    oauth_signed_in = fields.Boolean(compute="_compute_oauth_status")
    oauth_status = fields.Char(string="Signed In", compute="_compute_oauth_status")
    oauth_granted_scopes = fields.Char(string="Granted Scopes", compute="_compute_oauth_status")
    oauth_refreshed_at = fields.Datetime(string="Last Refresh", compute="_compute_oauth_status")

    def _compute_oauth_client_secret(self):
        self._secret_compute("oauth_client_secret")

    def _inverse_oauth_client_secret(self):
        self._secret_inverse("oauth_client_secret")

    def _compute_oauth_private_key(self):
        self._secret_compute("oauth_private_key")

    def _inverse_oauth_private_key(self):
        self._secret_inverse("oauth_private_key")

    @api.depends("oauth_private_key_set")
    def _compute_oauth_public_key(self):
        for server in self:
            # the public half of the key is no secret: the administrator copies it to the provider
            pem = server._origin.sudo()._secret_value("oauth_private_key") if server._origin.id else None
            try:
                server.oauth_public_jwk, server.oauth_public_pem = public_key(pem) if pem else (False, False)
            except OAuthError as exc:
                server.oauth_public_jwk, server.oauth_public_pem = exc.message, False

    @api.constrains("oauth_flow", "oauth_token_scope", "auth_type")
    def _check_oauth_flow(self):
        for server in self:
            if server._oauth_machine() and server.oauth_token_scope != "shared":
                raise ValidationError(
                    self.env._(
                        "%s cannot sign in as a company client while its Sign-in is Per user: a company client's "
                        "sign-in is shared by every user. Set Sign-in to Shared, or Signs In As to a person.",
                        server.name,
                    )
                )

    def _oauth_machine(self):
        """Whether Odoo signs in to this server as a company client (client credentials)."""
        self.ensure_one()
        return self.auth_type == "oauth" and self.oauth_flow == "client_credentials"

    def _oauth_by_itself(self):
        """Whether Odoo gets this server's tokens without anyone signing in at the server: a company
        client's, and the kinds of sign-in that extend this one's (oauth_*.py)."""
        return self._oauth_machine()

    def _compute_oauth_registration(self):
        self._secret_compute("oauth_registration")

    def _inverse_oauth_registration(self):
        self._secret_inverse("oauth_registration")

    def _compute_oauth_redirect_uri(self):
        uri = self._oauth_url(CALLBACK_PATH)
        for server in self:
            server.oauth_redirect_uri = uri

    @api.depends_context("uid")
    def _compute_oauth_status(self):
        Token = self.env["mcp.oauth.token"]
        for server in self:
            grant = (
                Token._grant_of(server, self.env.user)
                if server.auth_type == "oauth" and isinstance(server.id, int)
                else Token
            )
            server.oauth_signed_in = bool(grant)
            server.oauth_granted_scopes = grant.scope if grant else False
            server.oauth_refreshed_at = grant.refreshed_at if grant else False
            if not grant:
                server.oauth_status = False
            elif grant.expires_at:
                server.oauth_status = self.env._(
                    "%(who)s, until %(when)s",
                    who=server._oauth_signed_in_as(grant),
                    when=fields.Datetime.context_timestamp(self, grant.expires_at).strftime("%Y-%m-%d %H:%M"),
                )
            else:
                server.oauth_status = server._oauth_signed_in_as(grant)

    def _oauth_signed_in_as(self, grant):
        if self.oauth_flow == "client_credentials":
            return self.env._("Company client %s", self.oauth_client_id or "")
        return grant.signed_in_by_id.name or self.env._("unknown")

    @api.onchange("auth_type")
    def _onchange_auth_type_oauth(self):
        if self.auth_type == "oauth" and self.transport == "stdio":
            self.transport = "streamable_http"

    # -- the grants a connection uses ------------------------------------------------------------

    def _oauth_owner(self, user):
        """Whose grant `user` connects with: the user's own on a per-user server, else the shared one (False)."""
        self.ensure_one()
        return user.id if self.oauth_token_scope == "user" else False

    def _oauth_grant(self, user):
        """RefreshingTokens for `user` on this server (refreshing writes in its own transaction), or
        None until Odoo is registered with the server's provider."""
        self.ensure_one()
        if not company_allows(self, user):
            # the grants of another company's server are never lent, whatever reads them as superuser
            return None
        if self._oauth_machine():
            return self._oauth_machine_grant()
        registration = self._oauth_registration_data()
        if registration is None:
            return None
        return RefreshingTokens(
            OdooTokenStore(self.env.registry, self.id, self._oauth_owner(user)),
            ClientRegistration.model_validate(registration["client"]),
            registration["token_endpoint"],
            registration["resource"],
            self._oauth_http(),
        )

    def _oauth_machine_client(self):
        # sudo: the company client's credentials are read by the code that connects, for any user of the server
        server = self.sudo()
        secret = server._secret_value("oauth_client_secret")
        key = server._secret_value("oauth_private_key")
        return MachineClient(
            server_name=self.name,
            client_id=(self.oauth_client_id or "").strip(),
            auth=ClientAuth(self.oauth_client_auth),
            client_secret=secret or None,
            private_key=key or None,
            scope=self.oauth_scopes or None,
            dpop=self.oauth_dpop,
        )

    def _oauth_machine_grant(self):
        """ClientCredentialsTokens of this server's shared grant (writing in transactions of its own)."""
        self.ensure_one()
        return ClientCredentialsTokens(
            OdooTokenStore(self.env.registry, self.id, False),
            self._oauth_machine_client(),
            self.url,
            self._oauth_http(),
            sse=self.transport == "sse",
        )

    def _oauth_tokens_for(self, user):
        """What the hub is given as `tokens=` when `user` reads this server (prompts, resources):
        their grant on an OAuth server, None on any other."""
        self.ensure_one()
        return self._oauth_grant(user) if self.auth_type == "oauth" else None

    def _oauth_sign_in_url(self, conversation=None):
        query = {"server_id": self.id, **({"conversation_id": conversation.id} if conversation else {})}
        return f"{START_PATH}?{urlencode(query)}"

    def _oauth_bearing(self):
        """(the spec to test or sync this server with, the TokenSet whose token it bears). An OAuth
        server's spec carries the token of the shared grant, or of the current user's (else, for
        the daily sync, its owner's), refreshed if it is about to expire; another server's bears
        none (None). Raises AuthRequired when there is none."""
        self.ensure_one()
        spec = self._server_spec()
        if self.auth_type != "oauth":
            return spec, None
        untold = None
        for user in (self.env.user, self.owner_id) if self.oauth_token_scope == "user" else (self.env.user,):
            try:
                tokens = self._oauth_current_tokens(user)
            except OAuthError as exc:
                # a user not signed in at her company's identity provider: the next one may be
                if exc.code is not ErrorCode.OAUTH_IDENTITY_REQUIRED:
                    raise
                untold, tokens = untold or exc, None
            if tokens is not None:
                owner = str(user.id) if self.oauth_token_scope == "user" else None
                bearing = {"token": tokens.access_token, "dpop_key": tokens.dpop_key, "token_owner": owner}
                return spec.model_copy(update=bearing), tokens
        if untold is not None:
            raise untold
        raise AuthRequired(
            spec.key, self.name, self.env._("Sign in to %s first (Sign in, on the server's form).", self.name)
        )

    def _oauth_current_tokens(self, user):
        """`user`'s tokens (or the shared ones), refreshed first when about to expire, in this
        transaction: the request's own, which a TokenStore's cursor would wait for. The grant's row
        is locked for the refresh, as OdooTokenStore does, so a holder in another worker that
        refreshed it first is seen and its tokens used. None when there are none or the provider
        refused the refresh (the grant is then dropped, unless another holder renewed it)."""
        if self._oauth_by_itself():
            return self._oauth_fetched_tokens(user)
        grant = self.env["mcp.oauth.token"]._grant_of(self, user)
        started_from = grant._token_set() if grant else None
        source = self._oauth_grant(user)
        if started_from is None or source is None or not started_from.expiring():
            return started_from
        hub = process_hub()

        def renewing(stored):
            try:
                return hub.run(source.renew(stored, started_from))
            except OAuthError as exc:
                if exc.code is not ErrorCode.OAUTH_REAUTH_REQUIRED:
                    raise
                _logger.info("OAuth refresh refused: server=%s user=%s", self.name, user.id)
                return None

        return grant._renew(renewing)

    def _oauth_fetched_tokens(self, user, refused=None):
        """The tokens `user` calls with on a server Odoo gets them for by itself (`_oauth_by_itself`),
        fetched in this transaction when needed. Raises OAuthError."""
        return self._oauth_machine_tokens(refused=refused)

    def _oauth_machine_tokens(self, refused=None):
        """The company client's token, fetched in this transaction when there is none, it is about
        to expire or it is `refused` (a TokenSet the server refused), the grant's row locked meanwhile
        as `_oauth_current_tokens` does. Raises OAuthError."""
        source = self._oauth_machine_grant()
        hub = process_hub()
        grant = self.env["mcp.oauth.token"]._owned(self.id, False)
        if not grant:
            tokens = hub.run(source.fetch())
            self.env["mcp.oauth.token"]._store(self, False, tokens)
            return tokens
        return grant._renew(lambda stored: hub.run(source.renew(stored, refused)))

    def write(self, vals):
        moved = self._fields_changed_by(vals, OAUTH_CLIENT_FIELDS)
        machine_moved = self._fields_changed_by(vals, MACHINE_CLIENT_FIELDS)
        machines = self.filtered(lambda s: s._oauth_by_itself())
        result = super().write(vals)
        # a server that becomes a company client, or stops being one, too: its grant was the other kind's
        machines |= self.filtered(lambda s: s._oauth_by_itself())
        if machine_moved and machines and not self.env.context.get("ai_mcp_keep_state"):
            # a token of the client as it was: the next call fetches one for the client as it is
            self.env["mcp.oauth.token"].sudo().search([("server_id", "in", machines.ids)]).unlink()
        if moved and not self.env.context.get("ai_mcp_keep_state"):
            # another server or client: the registration and the grants were for the old one
            for server in self.filtered(lambda s: s.oauth_registration_set):
                server.sudo()._secret_clear("oauth_registration")
            if "url" in moved:
                self.env["mcp.oauth.token"].sudo().search([("server_id", "in", self.ids)]).unlink()
        return result

    def _oauth_registration_data(self):
        text = self.sudo()._secret_value("oauth_registration")
        if not text:
            return None
        data = json.loads(text)
        if data.get("client", {}).get("redirect_uri") != self._oauth_url(CALLBACK_PATH):
            return None  # Odoo's address changed since it registered: register again
        return data

    def _oauth_http(self):
        hosts = tuple(h.strip() for h in self._allowed_hosts() if h.strip())
        return GuardedHttp(oauth_allowed_hosts(self.url, hosts, public_only=self.scope == "user"))

    def _oauth_url(self, path):
        return self.get_base_url().rstrip("/") + path

    # -- signing in ------------------------------------------------------------------------------

    def _oauth_check_may_sign_in(self):
        """Who may sign in: anyone who may use the server for a per-user grant; for the shared
        grant, AI managers (system servers) or the cloud service's owner (user servers)."""
        self.ensure_one()
        server = self.sudo()  # a user may sign in to a server whose configuration they cannot read
        if not company_allows(server):
            raise AccessError(self.env._("You may not use %s.", server.name))
        if server.auth_type != "oauth":
            raise UserError(self.env._("%s does not sign in with OAuth: its Authentication is not OAuth.", server.name))
        if server._oauth_machine():
            raise UserError(
                self.env._(
                    "Nobody signs in to %s: Odoo signs in by itself as its company client (Signs In As).", server.name
                )
            )
        if server.oauth_token_scope == "shared":
            manager = (
                self.env.user.has_group("ai_mcp.group_ai_manager")
                if server.scope == "system"
                else server.owner_id == self.env.user
            )
            if not manager:
                raise AccessError(
                    self.env._("Only the manager of %s may sign in for everyone who uses it.", server.name)
                )
        elif not server._oauth_user_may_use():
            raise AccessError(self.env._("You may not use %s.", server.name))

    def _oauth_user_may_use(self):
        user = self.env.user
        if self.scope == "user":
            return bool(self.cloud_service_id) and self.cloud_service_id._user_may_use(user)
        assistants = self.env["ai.assistant"].search([("mcp_server_ids", "in", self.ids)])
        return user.has_group("ai_mcp.group_ai_manager") or any(a._user_may_use(user) for a in assistants)

    def _oauth_begin(self, session_id, conversation=None, scope=None):
        """Register with the provider if needed and return the URL to send the browser to; the
        pending sign-in is bound to the current user and `session_id`. `scope`: a step-up's
        challenge, asked for with the scope of the grant it widens, which may name only what the
        refused request lacked. Raises OAuthError."""
        self.ensure_one()
        self._oauth_check_may_sign_in()
        server = self.sudo()
        http = server._oauth_http()
        hub = process_hub()
        discovery = hub.run(discover(server.url, http, sse=server.transport == "sse"))
        registration = server._oauth_register(discovery, http)
        wanted = scope or server.oauth_scopes or None
        grant = self.env["mcp.oauth.token"]._grant_of(server, self.env.user)
        url, pending = hub.run(
            start_authorization(
                discovery,
                registration,
                http,
                scope=wanted,
                granted=grant.scope if grant else None,
                dpop_bound=server.oauth_dpop,
            )
        )
        owner = self.env.user if self.oauth_token_scope == "user" else None
        self.env["mcp.oauth.pending"]._begin(server, pending, session_id, owner, conversation)
        _logger.info("OAuth sign-in started: server=%s user=%s issuer=%s", server.name, self.env.uid, discovery.issuer)
        return url

    def _oauth_register(self, discovery, http):
        data = self._oauth_registration_data()
        if (
            data
            and same_issuer(data["client"]["issuer"], discovery.issuer)
            and data["client"].get("client_id")
            and (not self.oauth_client_id or data["client"]["client_id"] == self.oauth_client_id)
        ):
            return ClientRegistration.model_validate(data["client"])
        hub = process_hub()
        registration = hub.run(
            register(
                discovery,
                http,
                self._oauth_url(CALLBACK_PATH),
                self._oauth_client_name(),
                metadata_url=self._oauth_url(CLIENT_METADATA_PATH),
                client_id=(self.oauth_client_id or "").strip() or None,
                client_secret=self._secret_value("oauth_client_secret") or None,
            )
        )
        self.oauth_registration = json.dumps(
            {
                "client": {**registration.model_dump(mode="json"), "client_secret": registration.secret()},
                "token_endpoint": discovery.endpoint("token_endpoint"),
                "revocation_endpoint": discovery.endpoint("revocation_endpoint"),
                "resource": discovery.resource,
            }
        )
        return registration

    @api.model
    def _oauth_client_name(self):
        return self.env.company.name or "Odoo"

    @api.model
    def _oauth_finish(self, params, session_id):
        """The callback: check it answers a sign-in of this user and session, exchange the code,
        store the grant, tell the user's open tabs. Returns (the server, the conversation the sign-in
        was started from: empty when it was started from the server's form). Raises OAuthError."""
        pending, started = self.env["mcp.oauth.pending"]._take(params.get("state"), session_id)
        if not started["server"]:
            raise OAuthError(ErrorCode.OAUTH_STATE_INVALID)  # a sign-in at an identity provider: not this callback's
        server = started["server"].sudo()
        code = read_callback(params, pending)
        data = server._oauth_registration_data()
        if data is None:
            raise OAuthError(
                ErrorCode.OAUTH_STATE_INVALID,
                self.env._("The server's sign-in settings changed meanwhile; sign in again."),
            )
        registration = ClientRegistration.model_validate(data["client"])
        tokens = process_hub().run(exchange_code(code, pending, registration, server._oauth_http()))
        self.env["mcp.oauth.token"]._store(server, started["owner"].id or False, tokens, signed_in_by=self.env.user)
        server._close_sessions(owner=str(started["owner"].id) if started["owner"] else None)
        self.env.user.partner_id._bus_send("ai_mcp.oauth_signed_in", {"server_id": server.id})
        _logger.info("OAuth sign-in finished: server=%s user=%s scope=%s", server.name, self.env.uid, tokens.scope)
        return server, started["conversation"]

    # -- actions ---------------------------------------------------------------------------------

    def action_oauth_sign_in(self):
        self.ensure_one()
        self._oauth_check_may_sign_in()
        # the sign-in tab discovers again; this look first makes a server whose OAuth metadata
        # cannot be found say so on its form, where the admin is, rather than in a new tab
        server = self.sudo()
        try:
            process_hub().run(discover(server.url, server._oauth_http(), sse=server.transport == "sse"))
        except AiMcpError as exc:
            _logger.info("OAuth sign-in not started: server=%s code=%s", server.name, exc.code.value)
            return notification(
                self.env._("Cannot sign in to %s", self.name),
                oauth_error_text(self.env, exc),
                "danger",
                sticky=True,
                reload=False,
            )
        return {"type": "ir.actions.act_url", "url": self._oauth_sign_in_url(), "target": "new"}

    def action_oauth_generate_key(self):
        """A new key pair for the company client: the private key kept as a secret, the public key
        shown to copy into the identity provider. The token of the old key is dropped."""
        self.ensure_one()
        self.check_access("write")
        self.oauth_private_key = generate_private_key()
        self.invalidate_recordset(["oauth_public_jwk", "oauth_public_pem"])
        _logger.info("OAuth company client key pair generated: server=%s user=%s", self.name, self.env.uid)
        return True

    def action_oauth_sign_out(self):
        """Forget the current user's grant (or the shared one), revoking it at the provider where it
        offers revocation."""
        self.ensure_one()
        if self.oauth_token_scope == "shared":
            self._oauth_check_may_sign_in()
        grant = self.env["mcp.oauth.token"]._grant_of(self, self.env.user)
        if not grant:
            return True
        server = self.sudo()
        data = server._oauth_registration_data()
        tokens = grant._token_set()
        revoked = False
        if data and tokens:
            try:
                revoked = process_hub().run(
                    revoke(
                        tokens,
                        data.get("revocation_endpoint"),
                        ClientRegistration.model_validate(data["client"]),
                        server._oauth_http(),
                    )
                )
            except OAuthError as exc:
                _logger.info(
                    "OAuth revocation failed, grant forgotten anyway: server=%s error=%s", server.name, exc.message
                )
        owner = grant.user_id.id or False
        grant.unlink()
        server._close_sessions(owner=str(owner) if owner else None)
        _logger.info("OAuth sign-out: server=%s user=%s revoked=%s", server.name, self.env.uid, revoked)
        return True
