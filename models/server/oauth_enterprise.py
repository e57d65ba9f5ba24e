"""mcp.server, signing each user in through her company's identity provider (enterprise-managed
authorization, services/oauth/enterprise.py): her ID token at the provider (mcp.identity.grant) is
exchanged for an identity assertion grant that Odoo's client presents to the server's authorization
server. Each user has her own grant, as on a per-user server, but nobody signs in at the server:
no consent screen, no browser, and a user without a sign-in at the provider is told so in a sentence."""

from odoo import api, fields, models
from odoo.exceptions import UserError, ValidationError

from ...companies import company_allows
from ...hub_process import process_hub
from ...services.oauth import EnterpriseClient, EnterpriseTokens, GuardedHttp, IdentityProvider
from ..mcp_identity_grant import NoIdentity, OdooIdentity
from .mcp_oauth_token import OdooTokenStore

ENTERPRISE_FLOW = "enterprise"


class McpServer(models.Model):
    _inherit = "mcp.server"

    oauth_flow = fields.Selection(
        selection_add=[(ENTERPRISE_FLOW, "Each user, vouched for by the company's identity provider")],
        ondelete={ENTERPRISE_FLOW: "set default"},
    )
    oauth_identity_provider_id = fields.Many2one(
        "mcp.identity.provider",
        string="Identity Provider",
        ondelete="restrict",
        help="The company's identity provider that vouches for each user at this server's authorization server. "
        "Users sign in to it once (AI › Company Sign-in); Client ID and Client Secret are Odoo's client at the "
        "server's authorization server, which must trust the provider.",
    )

    @api.constrains("oauth_flow", "oauth_token_scope", "scope", "auth_type")
    def _check_oauth_enterprise(self):
        for server in self:
            if not server._oauth_enterprise():
                continue
            if server.oauth_token_scope != "user":
                raise ValidationError(
                    self.env._(
                        "%s: the identity provider vouches for each user, so the Sign-in is Per user. Set Sign-in to "
                        "Per user.",
                        server.name,
                    )
                )
            if server.scope != "system":
                raise ValidationError(
                    self.env._(
                        "%s: only a server an administrator set up can sign users in through the company's identity "
                        "provider.",
                        server.name,
                    )
                )

    def _oauth_enterprise(self):
        self.ensure_one()
        return self.auth_type == "oauth" and self.oauth_flow == ENTERPRISE_FLOW

    def _oauth_by_itself(self):
        return super()._oauth_by_itself() or self._oauth_enterprise()

    def _oauth_grant(self, user):
        if not self._oauth_enterprise():
            return super()._oauth_grant(user)
        if not company_allows(self, user):
            return None
        # sudo: Odoo's client at the authorization server is read by the code that connects, for any user
        server = self.sudo()
        provider = server.oauth_identity_provider_id
        client = EnterpriseClient(
            server_name=self.name,
            provider=_provider_spec(provider),
            client_id=(server.oauth_client_id or "").strip(),
            client_secret=server._secret_value("oauth_client_secret") or None,
            scope=server.oauth_scopes or None,
            dpop=server.oauth_dpop,
        )
        http = server._oauth_enterprise_http()
        return EnterpriseTokens(
            OdooTokenStore(self.env.registry, self.id, user.id),
            client,
            self.url,
            http,
            server._oauth_identity_of(user, client.provider, http),
            sse=self.transport == "sse",
        )

    def _oauth_identity_of(self, user, spec, http):
        """Where `user`'s ID token comes from: her sign-in at the server's provider, if the provider
        vouches for her company; else a sentence saying why not."""
        provider = self.oauth_identity_provider_id
        if not provider.token_endpoint:
            return NoIdentity(
                self.env._(
                    "%s: no Identity Provider is chosen on the server's form, or its Token Endpoint is not set: an AI "
                    "manager sets them.",
                    self.name,
                )
            )
        if not provider._user_may_sign_in(user):
            return NoIdentity(
                self.env._(
                    "%(server)s signs users in through %(provider)s, the identity provider of %(company)s, which does "
                    "not vouch for you.",
                    server=self.name,
                    provider=provider.name,
                    company=provider.company_id.name,
                )
            )
        return OdooIdentity(self.env.registry, provider, spec, http, user.id)

    def _oauth_enterprise_http(self):
        """The server's guard, with the provider's hosts, which an administrator set as the server's."""
        guard = self._oauth_http()
        provider = self.oauth_identity_provider_id
        hosts = provider._http().allowed_hosts if provider else ()
        return GuardedHttp(tuple(dict.fromkeys(guard.allowed_hosts + hosts)))

    def _oauth_fetched_tokens(self, user, refused=None):
        if not self._oauth_enterprise():
            return super()._oauth_fetched_tokens(user, refused)
        source = self._oauth_grant(user)
        hub = process_hub()
        grant = self.env["mcp.oauth.token"]._owned(self.id, user.id)
        if not grant:
            tokens = hub.run(source.fetch())
            self.env["mcp.oauth.token"]._store(self, user.id, tokens)
            return tokens
        return grant._renew(lambda stored: hub.run(source.renew(stored, refused)))

    def _oauth_check_may_sign_in(self):
        # sudo: how a server signs in is told to any user who tries, as the base method does
        if self.sudo()._oauth_enterprise():
            raise UserError(
                self.env._(
                    "Nobody signs in to %s: your company's identity provider vouches for you. Sign in to it once "
                    "instead: AI › Company Sign-in.",
                    self.sudo().name,
                )
            )
        return super()._oauth_check_may_sign_in()

    def _oauth_signed_in_as(self, grant):
        if self.oauth_flow == ENTERPRISE_FLOW:
            return self.env._("You, through %s", self.oauth_identity_provider_id.name or "")
        return super()._oauth_signed_in_as(grant)


def _provider_spec(provider):
    """The provider the services speak to; a blank one for a server whose provider is not set up
    (its users are then told so before anything is sent: `_oauth_identity_of`)."""
    if provider.token_endpoint:
        return provider._spec()
    return IdentityProvider(name=provider.name or "", issuer=provider.issuer or "", token_endpoint="", client_id="")
