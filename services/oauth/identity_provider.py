"""A company's identity provider, as Odoo speaks to it for enterprise-managed authorization (the MCP
extension io.modelcontextprotocol/enterprise-managed-authorization):

- each user signs in to it once (OpenID Connect, the authorization code flow with PKCE, scope
  `openid` and `offline_access`), and Odoo keeps her ID token and refresh token as secrets: Odoo's
  own OAuth login (auth_oauth) keeps no ID token, so a login through the same provider cannot
  stand in for this sign-in;
- her ID token is renewed with the refresh token when it is about to expire;
- the token exchange (RFC 8693) turns her ID token into an identity assertion grant (ID-JAG) for
  one MCP server's authorization server (`audience`, its issuer) and the server (`resource`).

The requests are authlib's (the code flow and the refresh) or one form POST of our own (the token
exchange, which authlib does not make), all through the GuardedHttp of the server or the provider.
Nothing here logs a token.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from typing import Any

from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.integrations.httpx_client import OAuthError as AuthlibOAuthError
from pydantic import BaseModel, ConfigDict, SecretStr

from ..errors import ErrorCode, OAuthError
from .assertion_grant import TokenRefusal, basic_auth, post_token_request
from .client import HTTP_ERRORS, HTTP_STATUS_ERRORS
from .http import GuardedHttp
from .models import CLOCK_SKEW, PENDING_LIFETIME, PendingAuthorization

_logger = logging.getLogger(__name__)

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
DEFAULT_SCOPE = "openid offline_access"


class IdentityProvider(BaseModel):
    """The company's identity provider as an administrator set it up."""

    model_config = ConfigDict(frozen=True)

    name: str
    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None = None
    client_id: str
    client_secret: SecretStr | None = None
    scope: str = DEFAULT_SCOPE

    def authorization(self) -> str | None:
        """The Authorization header of a request of Odoo's client (client_secret_basic); None for
        a public client, which names itself in the form."""
        if not self.client_secret:
            return None
        return basic_auth(self.client_id, self.client_secret.get_secret_value())


class IdentityTokens(BaseModel):
    """A user's sign-in at the provider: her ID token (the subject of the token exchange) and the
    refresh token that renews it. `expires_at`: the ID token's own `exp`."""

    model_config = ConfigDict(frozen=True)

    id_token: SecretStr
    refresh_token: SecretStr | None = None
    expires_at: float | None = None
    subject: str | None = None
    email: str | None = None

    def expiring(self, now: float | None = None, skew: float = CLOCK_SKEW) -> bool:
        if self.expires_at is None:
            return False
        return (now if now is not None else time.time()) + skew >= self.expires_at

    @classmethod
    def from_response(cls, answer: dict[str, Any], previous: IdentityTokens | None = None) -> IdentityTokens:
        """From a token answer carrying an `id_token`; a refresh answer without a new refresh token
        keeps the previous one (RFC 6749 section 6)."""
        id_token = str(answer["id_token"])
        claims = _claims(id_token)
        refresh = answer.get("refresh_token") or (
            previous.refresh_token.get_secret_value() if previous and previous.refresh_token else None
        )
        expires = claims.get("exp")
        return cls(
            id_token=SecretStr(id_token),
            refresh_token=SecretStr(str(refresh)) if refresh else None,
            expires_at=float(expires) if isinstance(expires, (int, float)) else None,
            subject=str(claims["sub"]) if claims.get("sub") else None,
            email=str(claims["email"]) if claims.get("email") else None,
        )


def _claims(jwt_text: str) -> dict[str, Any]:
    """The claims of a JWT the provider just sent over TLS, unverified: read for the expiry and the
    name shown to the user only. The authorization servers it is shown to verify it."""
    parts = jwt_text.split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _failed(provider: IdentityProvider, message: str, field: str) -> OAuthError:
    return OAuthError(ErrorCode.OAUTH_TOKEN_ERROR, f"{provider.name}: {message}", field=field)


# -- setting it up -------------------------------------------------------------------------------


async def discover_provider(issuer: str, http: GuardedHttp) -> dict[str, str]:
    """The endpoints the provider publishes (OpenID Connect discovery): authorization_endpoint and
    token_endpoint. Raises OAuthError naming `issuer`."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    await http.check(url, "issuer")
    try:
        async with http.client() as client:
            response = await client.get(url, headers={"Accept": "application/json"})
        document = response.json() if response.status_code == 200 else None
    except HTTP_ERRORS as exc:
        raise OAuthError(
            ErrorCode.OAUTH_METADATA_NOT_FOUND,
            f"{url} cannot be reached ({type(exc).__name__}): check Issuer.",
            field="issuer",
        ) from None
    except ValueError:
        document = None
    if not isinstance(document, dict) or not document.get("token_endpoint"):
        raise OAuthError(
            ErrorCode.OAUTH_METADATA_NOT_FOUND,
            f"{url} is not an OpenID Connect configuration naming a token endpoint: check Issuer.",
            field="issuer",
        )
    if str(document.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
        raise OAuthError(
            ErrorCode.OAUTH_METADATA_INVALID,
            f"{url} names the issuer {document.get('issuer')}, not {issuer}: check Issuer.",
            field="issuer",
        )
    return {key: str(document[key]) for key in ("authorization_endpoint", "token_endpoint") if document.get(key)}


# -- a user's sign-in ------------------------------------------------------------------------------


def _oauth_client(provider: IdentityProvider, http: GuardedHttp, redirect_uri: str | None = None) -> AsyncOAuth2Client:
    return AsyncOAuth2Client(
        client_id=provider.client_id,
        client_secret=provider.client_secret.get_secret_value() if provider.client_secret else None,
        token_endpoint_auth_method="client_secret_basic" if provider.client_secret else "none",
        redirect_uri=redirect_uri,
        scope=provider.scope,
        code_challenge_method="S256",
        **http.client_kwargs(),
    )


async def start_sign_in(
    provider: IdentityProvider, redirect_uri: str, http: GuardedHttp, now: float | None = None
) -> tuple[str, PendingAuthorization]:
    """The provider's URL to send the user's browser to, and what its callback will need."""
    now = now if now is not None else time.time()
    if not provider.authorization_endpoint:
        raise _failed(provider, "no authorization endpoint is known: press Discover on the provider's form.", "issuer")
    await http.check(provider.authorization_endpoint, "authorization_endpoint")
    await http.check(provider.token_endpoint, "token_endpoint")
    verifier = generate_token(64)
    async with _oauth_client(provider, http, redirect_uri) as client:
        url, state = client.create_authorization_url(
            provider.authorization_endpoint, state=generate_token(32), code_verifier=verifier, nonce=generate_token(24)
        )
    pending = PendingAuthorization(
        state=state,
        code_verifier=SecretStr(verifier),
        redirect_uri=redirect_uri,
        resource="",
        scope=provider.scope,
        issuer=provider.issuer,
        token_endpoint=provider.token_endpoint,
        created_at=now,
        expires_at=now + PENDING_LIFETIME,
    )
    return url, pending


async def finish_sign_in(
    code: str, pending: PendingAuthorization, provider: IdentityProvider, http: GuardedHttp
) -> IdentityTokens:
    """The user's tokens for the code her browser brought back. Raises OAuthError."""
    answer = await _token_call(
        provider,
        http,
        pending.redirect_uri,
        grant_type="authorization_code",
        code=code,
        code_verifier=pending.code_verifier.get_secret_value(),
        redirect_uri=pending.redirect_uri,
    )
    tokens = _identity(provider, answer)
    _logger.info("Identity provider sign-in: provider=%s subject=%s", provider.name, tokens.subject)
    return tokens


async def refresh_identity(provider: IdentityProvider, tokens: IdentityTokens, http: GuardedHttp) -> IdentityTokens:
    """A new ID token from the refresh token. Raises OAuthError(OAUTH_IDENTITY_REQUIRED) when there
    is no refresh token or the provider refuses it: the user signs in to the provider again."""
    if tokens.refresh_token is None:
        raise identity_required(provider, "her sign-in to it expired")
    try:
        answer = await _token_call(
            provider, http, None, grant_type="refresh_token", refresh_token=tokens.refresh_token.get_secret_value()
        )
    except OAuthError as exc:
        if exc.field == "refresh_token":
            raise identity_required(provider, "it no longer renews her sign-in") from None
        raise
    return _identity(provider, answer, tokens)


def identity_required(provider: IdentityProvider, why: str) -> OAuthError:
    return OAuthError(
        ErrorCode.OAUTH_IDENTITY_REQUIRED,
        f"You are not signed in to {provider.name}, your company's identity provider ({why}). Sign in to it once: "
        "AI › Company Sign-in, then Sign In.",
        field="identity_provider",
    )


def _identity(
    provider: IdentityProvider, answer: dict[str, Any], previous: IdentityTokens | None = None
) -> IdentityTokens:
    if not answer.get("id_token"):
        raise _failed(
            provider,
            "its token endpoint answered without an ID token: check that Scopes holds openid and that the client "
            "is an OpenID Connect client.",
            "scopes",
        )
    return IdentityTokens.from_response(answer, previous)


async def _token_call(
    provider: IdentityProvider, http: GuardedHttp, client_redirect: str | None, **form: str
) -> dict[str, Any]:
    await http.check(provider.token_endpoint, "token_endpoint")
    async with _oauth_client(provider, http, client_redirect) as client:
        try:
            return dict(await client.fetch_token(provider.token_endpoint, **form))
        except AuthlibOAuthError as exc:
            error = str(exc.error or "")
            said = f"{error}: {exc.description or ''}".rstrip(": ")
            if error == "invalid_client":
                raise _failed(
                    provider, f"it refused Odoo's client ({said}): check Client ID and Client Secret.", "client_id"
                ) from None
            field = "refresh_token" if form.get("grant_type") == "refresh_token" else "token_endpoint"
            raise _failed(provider, f"its token endpoint answered {said}.", field) from None
        except HTTP_STATUS_ERRORS as exc:
            status = exc.response.status_code  # type: ignore[attr-defined]
            raise _failed(
                provider, f"its token endpoint answered HTTP {status}; try again later.", "token_endpoint"
            ) from None
        except HTTP_ERRORS as exc:
            raise _failed(
                provider,
                f"its token endpoint {provider.token_endpoint} cannot be reached ({type(exc).__name__}); check "
                "Token Endpoint, or try again later.",
                "token_endpoint",
            ) from None


# -- the token exchange ------------------------------------------------------------------------------


async def exchange_for_id_jag(
    provider: IdentityProvider,
    id_token: SecretStr,
    audience: str,
    resource: str,
    http: GuardedHttp,
    scope: str | None = None,
) -> str:
    """The ID-JAG the provider issues for the user of `id_token`, to present to the authorization
    server `audience` (its issuer) for the MCP server `resource` (RFC 8693 with the requested token
    type of the ID-JAG). Raises OAuthError: OAUTH_IDENTITY_REQUIRED when the provider refuses the ID
    token itself (expired, revoked: she signs in again), else a sentence naming the field to fix."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG_TYPE,
        "subject_token": id_token.get_secret_value(),
        "subject_token_type": ID_TOKEN_TYPE,
        "audience": audience,
        "resource": resource,
        "scope": scope or "",
        # a public client names itself; a confidential one authenticates in the header
        "client_id": "" if provider.client_secret else provider.client_id,
    }
    try:
        answer = await post_token_request(
            provider.token_endpoint,
            form,
            http,
            what=f"{provider.name}: its token endpoint",
            url_field="token_endpoint",
            authorization=provider.authorization(),
        )
    except TokenRefusal as refusal:
        _logger.info("Identity provider token exchange refused: provider=%s error=%s", provider.name, refusal.error)
        if refusal.error == "invalid_grant":
            raise identity_required(provider, f"it refused her sign-in: {refusal.said()}") from None
        if refusal.error in ("invalid_client", "unauthorized_client"):
            raise _failed(
                provider,
                f"it refused Odoo's client for the token exchange ({refusal.said()}): check Client ID and Client "
                "Secret, and that the provider lets this client exchange tokens.",
                "client_id",
            ) from None
        raise _failed(
            provider,
            f"it refused the token exchange for {resource} ({refusal.said()}): check that the provider gives the "
            "company's users access to this server.",
            "token_endpoint",
        ) from None
    if answer.get("issued_token_type") not in (None, ID_JAG_TYPE):
        raise _failed(
            provider,
            f"the token exchange answered a {answer.get('issued_token_type')}, not an identity assertion grant "
            "(ID-JAG): the provider does not support enterprise-managed authorization.",
            "issuer",
        )
    return str(answer["access_token"])
