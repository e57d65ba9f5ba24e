"""Enterprise-managed authorization (the MCP extension
io.modelcontextprotocol/enterprise-managed-authorization): the company's identity provider vouches
for the user, so she reaches a server her company approved with no consent screen and no browser.

For each user and server: her ID token (identity_provider.py, renewed there) is exchanged at the
provider for an identity assertion grant (ID-JAG) naming the server's authorization server and the
server; the ID-JAG is presented in the JWT bearer grant (RFC 7523) with Odoo's client at that
authorization server authenticating with its secret (client_secret_basic, or client_secret_post where
only that is listed). The access token is the user's grant, kept and renewed as a company client's is
(machine.py `ClientCredentialsTokens`), in her own store: the authorization server issues no refresh
token, a new ID-JAG takes its place.

A user without a sign-in at the provider is told so in a sentence (OAUTH_IDENTITY_REQUIRED), never
sent to the server's sign-in: there is none to make.
"""

from __future__ import annotations

import logging
from typing import Protocol

from pydantic import BaseModel, ConfigDict, SecretStr

from ..errors import AuthRequired, ErrorCode, McpError, OAuthError
from ..server_spec import ServerSpec
from . import dpop
from .assertion_grant import JWT_BEARER, TokenRefusal, basic_auth, jwt_bearer_endpoint, jwt_bearer_token
from .discovery import Discovery
from .http import GuardedHttp
from .identity_provider import IdentityProvider, exchange_for_id_jag
from .machine import ClientCredentialsTokens, SavingTokenStore
from .models import TokenSet

_logger = logging.getLogger(__name__)


class IdentitySource(Protocol):
    """The user's current ID token at the provider (renewed first when about to expire). Raises
    OAuthError(OAUTH_IDENTITY_REQUIRED) when she has none."""

    async def id_token(self) -> SecretStr: ...


class EnterpriseClient(BaseModel):
    """Odoo's client at the server's authorization server and the provider that vouches for users."""

    model_config = ConfigDict(frozen=True)

    server_name: str
    provider: IdentityProvider
    client_id: str
    client_secret: SecretStr | None = None
    scope: str | None = None
    dpop: bool = False


def _refused(client: EnterpriseClient, message: str, field: str) -> OAuthError:
    return OAuthError(ErrorCode.OAUTH_TOKEN_ERROR, f"{client.server_name}: {message}", field=field)


def _auth_method(client: EnterpriseClient, discovery: Discovery) -> str:
    """How Odoo's client authenticates at the authorization server; raises OAuthError when it cannot."""
    if not client.client_id or not client.client_secret:
        raise _refused(
            client,
            "enterprise-managed authorization needs Odoo's client at its authorization server: enter Client ID and "
            "Client Secret.",
            "oauth_client_id" if not client.client_id else "oauth_client_secret",
        )
    methods = discovery.authorization_server.token_endpoint_auth_methods_supported
    if methods is None or "client_secret_basic" in methods:
        return "client_secret_basic"
    if "client_secret_post" in methods:
        return "client_secret_post"
    raise _refused(
        client,
        f"its authorization server does not take a client secret (it takes {', '.join(methods)}).",
        "oauth_client_secret",
    )


def _token_refusal(client: EnterpriseClient, refusal: TokenRefusal) -> OAuthError:
    said = refusal.said()
    if refusal.error == "invalid_client":
        return _refused(
            client,
            f"its authorization server refused Odoo's client ({said}): check Client ID and Client Secret.",
            "oauth_client_id",
        )
    if refusal.error in ("unauthorized_client", "unsupported_grant_type"):
        return _refused(
            client,
            f"its authorization server does not let Odoo's client present identity assertions ({said}): allow the "
            "JWT bearer grant for Client ID at the provider.",
            "oauth_flow",
        )
    if refusal.error == "invalid_grant":
        return _refused(
            client,
            f"its authorization server refused the identity assertion of {client.provider.name} ({said}): check "
            "that it trusts that provider, and that Client ID is the client the provider names.",
            "oauth_identity_provider_id",
        )
    if refusal.error in (dpop.USE_NONCE, dpop.INVALID_PROOF):
        return OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            dpop.refusal_message(client.server_name, "authorization server", refusal.error, refusal.description),
            field=dpop.FIELD,
        )
    if refusal.error == "invalid_scope":
        return _refused(
            client, f"its authorization server refused the scopes asked for ({said}): check Scopes.", "oauth_scopes"
        )
    return _refused(client, f"its token endpoint answered {said}.", "oauth_client_id")


async def fetch_enterprise_token(
    client: EnterpriseClient,
    discovery: Discovery,
    identity: IdentitySource,
    http: GuardedHttp,
    dpop_key: SecretStr | None = None,
) -> TokenSet:
    """The user's access token: her ID token exchanged for an ID-JAG, the ID-JAG presented in the JWT
    bearer grant, bound to `dpop_key` where there is one. Raises OAuthError."""
    endpoint = jwt_bearer_endpoint(client.server_name, discovery, "the company's identity provider")
    method = _auth_method(client, discovery)
    dpop.check_offered(discovery, dpop_key is not None, client.server_name)
    scope = client.scope or discovery.scope
    id_jag = await exchange_for_id_jag(
        client.provider, await identity.id_token(), discovery.issuer, discovery.resource, http, scope=scope
    )
    assert client.client_secret is not None
    secret = client.client_secret.get_secret_value()
    form = {
        "grant_type": JWT_BEARER,
        "assertion": id_jag,
        "resource": discovery.resource,
        "scope": scope or "",
        "client_id": client.client_id,
        **({"client_secret": secret} if method == "client_secret_post" else {}),
    }
    authorization = basic_auth(client.client_id, secret) if method == "client_secret_basic" else None
    return await jwt_bearer_token(
        endpoint,
        discovery,
        form,
        http,
        server_name=client.server_name,
        kind=f"identity assertion of {client.provider.name}",
        refused=lambda refusal: _token_refusal(client, refusal),
        authorization=authorization,
        dpop_key=dpop_key,
    )


class EnterpriseTokens(ClientCredentialsTokens):
    """One user's grant on a server her company's identity provider vouches for her at: kept and
    renewed as a company client's is, in her own store, fetched with her ID token."""

    client: EnterpriseClient  # type: ignore[assignment]

    def __init__(
        self,
        store: SavingTokenStore,
        client: EnterpriseClient,
        server_url: str,
        http: GuardedHttp,
        identity: IdentitySource,
        sse: bool = False,
    ) -> None:
        super().__init__(store, client, server_url, http, sse=sse)  # type: ignore[arg-type]
        self.identity = identity

    async def request_token(self, discovery: Discovery, dpop_key: SecretStr | None) -> TokenSet:
        return await fetch_enterprise_token(self.client, discovery, self.identity, self.http, dpop_key)

    def refusal(self, spec: ServerSpec, used: TokenSet, exc: AuthRequired) -> McpError:
        _logger.warning(
            "OAuth identity assertion token refused by the server: server=%s step_up=%s", spec.label(), exc.step_up
        )
        if exc.step_up:
            return McpError(
                ErrorCode.MCP_AUTH_FAILED,
                f"{spec.name} refuses this request: it needs the scope {exc.scope}. Add it to Scopes on the server's "
                f"form, and have {self.client.provider.name} allow it for the company's users.",
            )
        return McpError(
            ErrorCode.MCP_AUTH_FAILED,
            f"{spec.name} refuses the token its authorization server gave for your identity at "
            f"{self.client.provider.name}: ask an administrator to check the server's Scopes and that the provider "
            "gives you access to it.",
        )
