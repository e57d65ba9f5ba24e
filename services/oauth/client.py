"""Odoo as an OAuth 2.1 client of an MCP server's authorization server, one step per call, since
the browser leaves between the steps (redirect to the provider, callback in another request).

authlib does PKCE (S256), the authorization URL, the code exchange, the refresh and the
revocation, on an httpx2 client that only reaches URLs the SSRF guard checked (GuardedHttp). The
mcp SDK builds and reads the registration (RFC 7591) and decides on client metadata documents.
Written by hand: the order of the registration choices (an entered client id first, then a
client metadata document, then dynamic registration, as the MCP authorization spec orders them),
the callback checks (`state`, `iss` of RFC 9207: authlib compares the state only against its own
in-memory copy, which a web client does not have) and the mapping of failures to our codes.
"""

from __future__ import annotations

import hmac
import logging
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import httpx2
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.integrations.httpx_client import OAuthError as AuthlibOAuthError
from mcp.client.auth import OAuthRegistrationError
from mcp.client.auth.oauth2 import check_registration_usable
from mcp.client.auth.utils import (
    create_client_registration_request,
    handle_registration_response,
    issuers_match,
    should_use_client_metadata_url,
)
from mcp.shared.auth import OAuthClientMetadata
from pydantic import SecretStr

from ..errors import ErrorCode, OAuthError
from . import dpop
from .discovery import Discovery
from .http import GuardedHttp
from .models import PENDING_LIFETIME, ClientRegistration, PendingAuthorization, RegistrationKind, TokenSet

_logger = logging.getLogger(__name__)

# authlib 1.7+ builds its client on httpx2 where that is installed (the mcp SDK needs it, so it is)
# and older releases on httpx: catch the failures of whichever it uses
_AUTHLIB_HTTP = sys.modules[
    next(c for c in AsyncOAuth2Client.__mro__ if c.__name__ == "AsyncClient").__module__.split(".")[0]
]
HTTP_ERRORS: tuple[type[Exception], ...] = (httpx2.HTTPError, _AUTHLIB_HTTP.HTTPError)
HTTP_STATUS_ERRORS: tuple[type[Exception], ...] = (httpx2.HTTPStatusError, _AUTHLIB_HTTP.HTTPStatusError)

# authorization servers answer these when a refresh token is no longer good: sign in again
REAUTH_ERRORS = frozenset({"invalid_grant", "invalid_client", "unauthorized_client"})


def client_metadata(
    redirect_uri: str, client_name: str, client_uri: str | None = None, client_id: str | None = None
) -> dict[str, Any]:
    """Odoo's client metadata: the body of a dynamic registration and, with `client_id`, the
    client metadata document Odoo serves at that URL."""
    metadata = OAuthClientMetadata(
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name=client_name,
        client_uri=client_uri,  # type: ignore[arg-type]
    ).model_dump(mode="json", exclude_none=True)
    if client_id:
        metadata = {"client_id": client_id, **metadata}
    return metadata


def usable_metadata_url(url: str | None) -> bool:
    """A client metadata document URL must be https with a path; http is accepted for a loopback
    host only, as OAuth 2.1 accepts it for redirect URIs, so a local Odoo can be tested."""
    if not url:
        return False
    parts = urlsplit(url)
    if parts.path in ("", "/"):
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1"))


def same_issuer(registered: str, discovered: str) -> bool:
    """Whether a registration stored for the issuer `registered` is Odoo's client at the
    authorization server discovered as `discovered`: the SDK's `issuers_match`, plain string
    comparison but for a root issuer with and without its trailing slash. mcp 1.x wrote every root
    issuer with the slash ("https://as.example/") and mcp 2.x keeps the metadata's spelling
    ("https://as.example"): registrations stored before are kept, not silently made again."""
    return issuers_match(registered, discovered)


async def register(
    discovery: Discovery,
    http: GuardedHttp,
    redirect_uri: str,
    client_name: str,
    metadata_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> ClientRegistration:
    """Who Odoo is to this authorization server, in the MCP spec's order of preference."""
    issuer = discovery.issuer
    if client_id:
        method = "client_secret_post" if client_secret else "none"
        supported = discovery.authorization_server.token_endpoint_auth_methods_supported or []
        if client_secret and "client_secret_basic" in supported and "client_secret_post" not in supported:
            method = "client_secret_basic"
        return ClientRegistration(
            kind=RegistrationKind.MANUAL,
            issuer=issuer,
            client_id=client_id,
            client_secret=SecretStr(client_secret) if client_secret else None,
            auth_method=method,
            redirect_uri=redirect_uri,
        )
    if usable_metadata_url(metadata_url) and should_use_client_metadata_url(
        discovery.authorization_server, metadata_url
    ):
        assert metadata_url is not None
        return ClientRegistration(
            kind=RegistrationKind.CIMD, issuer=issuer, client_id=metadata_url, redirect_uri=redirect_uri
        )
    endpoint = discovery.endpoint("registration_endpoint")
    if not endpoint:
        raise OAuthError(
            ErrorCode.OAUTH_REGISTRATION_FAILED,
            "The authorization server offers neither client metadata documents nor dynamic registration: "
            "register Odoo with the provider and enter the client id (and secret) on the server.",
            field="client_id",
        )
    await http.check(endpoint, "registration_endpoint")
    body = OAuthClientMetadata.model_validate(client_metadata(redirect_uri, client_name))
    # the registered scope bounds every later request: register all the server offers, so a
    # step-up (a wider scope for one tool) needs a new consent but not a new registration
    offered = discovery.authorization_server.scopes_supported
    scope = " ".join(offered) if offered else discovery.scope
    if scope:
        body = body.model_copy(update={"scope": scope})
    request = create_client_registration_request(discovery.authorization_server, body, discovery.server_url)
    async with http.client() as client:
        try:
            response = await client.send(request)
            info = await handle_registration_response(response)
            # a registration the provider changed into one Odoo cannot use (a private_key_jwt
            # client, a secret method without a secret) fails here, not later at the token endpoint
            check_registration_usable(info)
        except httpx2.HTTPError as exc:
            raise OAuthError(
                ErrorCode.OAUTH_REGISTRATION_FAILED,
                f"Registration at {endpoint} failed: {exc}",
                field="registration_endpoint",
            ) from None
        except OAuthRegistrationError as exc:
            raise OAuthError(
                ErrorCode.OAUTH_REGISTRATION_FAILED, str(exc)[:500], field="registration_endpoint"
            ) from None
    if not info.client_id:
        raise OAuthError(
            ErrorCode.OAUTH_REGISTRATION_FAILED,
            "The registration answer has no client_id.",
            field="registration_endpoint",
        )
    _logger.info("OAuth client registered: issuer=%s client_id=%s", issuer, info.client_id)
    return ClientRegistration(
        kind=RegistrationKind.DCR,
        issuer=issuer,
        client_id=info.client_id,
        client_secret=SecretStr(info.client_secret) if info.client_secret else None,
        auth_method=info.token_endpoint_auth_method or ("client_secret_post" if info.client_secret else "none"),
        redirect_uri=redirect_uri,
    )


def _oauth_client(
    registration: ClientRegistration,
    http: GuardedHttp,
    scope: str | None = None,
    dpop_key: SecretStr | None = None,
) -> AsyncOAuth2Client:
    return AsyncOAuth2Client(
        client_id=registration.client_id,
        client_secret=registration.secret(),
        token_endpoint_auth_method=registration.auth_method,
        revocation_endpoint_auth_method=registration.auth_method,
        redirect_uri=registration.redirect_uri,
        scope=scope,
        code_challenge_method="S256",
        **http.client_kwargs(),
        **dpop_transport(dpop_key),
    )


def dpop_transport(dpop_key: SecretStr | None) -> dict[str, Any]:
    """The `transport` of a token endpoint client whose requests carry DPoP proofs of `dpop_key`
    (none without a key)."""
    if dpop_key is None:
        return {}
    # the transport of authlib's own HTTP library (httpx2, or httpx for an authlib before 1.7)
    inner = _AUTHLIB_HTTP.AsyncHTTPTransport()
    return {"transport": dpop.DpopTransport(dpop.DpopKey(dpop_key.get_secret_value()), inner)}


def token_endpoint_client(http: GuardedHttp, dpop_key: SecretStr | None) -> Any:
    """An HTTP client for a token request of our own making (not authlib's): the guard's, or, with a
    DPoP key, one of authlib's HTTP library whose requests carry proofs of it (the DPoP transport
    wraps that library's transport)."""
    if dpop_key is None:
        return http.client()
    return _AUTHLIB_HTTP.AsyncClient(**http.client_kwargs(), **dpop_transport(dpop_key))


def check_bound(token: dict[str, Any], dpop_key: SecretStr | None, issuer: str) -> None:
    """A token asked for with a DPoP proof must come bound to its key (token_type DPoP): an
    authorization server that answers a bearer token does not take DPoP, and its bearer token
    would be refused by a server that expects DPoP, or sent unbound where it does not."""
    if dpop_key is None or str(token.get("token_type") or "").lower() == "dpop":
        return
    raise OAuthError(
        ErrorCode.OAUTH_TOKEN_ERROR,
        f"The authorization server {issuer} answered a {token.get('token_type') or 'bearer'} token although Odoo "
        "asked for a DPoP-bound one: it does not take DPoP. Turn off DPoP on the server's form.",
        field=dpop.FIELD,
    )


async def start_authorization(
    discovery: Discovery,
    registration: ClientRegistration,
    http: GuardedHttp,
    scope: str | None = None,
    now: float | None = None,
    granted: str | None = None,
    dpop_bound: bool = False,
) -> tuple[str, PendingAuthorization]:
    """The provider's URL to send the browser to, and what the callback will need. `scope`: what
    to ask for (a step-up's challenge; by default what discovery found); `granted`: the scope of
    the grant this sign-in replaces, asked for again with it (`widened_scope`); `dpop_bound`: the
    grant is bound to a key of its own, made now (DPoP)."""
    now = now if now is not None else time.time()
    authorize = discovery.endpoint("authorization_endpoint") or ""
    token_endpoint = discovery.endpoint("token_endpoint") or ""
    await http.check(authorize, "authorization_endpoint")
    await http.check(token_endpoint, "token_endpoint")
    dpop.check_offered(discovery, dpop_bound, discovery.server_url)
    scope = widened_scope(granted, scope or discovery.scope)
    verifier = generate_token(64)
    async with _oauth_client(registration, http, scope) as client:
        url, state = client.create_authorization_url(
            authorize, state=generate_token(32), code_verifier=verifier, resource=discovery.resource
        )
    pending = PendingAuthorization(
        state=state,
        code_verifier=SecretStr(verifier),
        redirect_uri=registration.redirect_uri,
        resource=discovery.resource,
        scope=scope,
        issuer=discovery.issuer,
        iss_required=discovery.authorization_server.authorization_response_iss_parameter_supported is True,
        issuer_assumed=discovery.defaults,
        token_endpoint=token_endpoint,
        dpop_key=SecretStr(dpop.generate_key()) if dpop_bound else None,
        created_at=now,
        expires_at=now + PENDING_LIFETIME,
    )
    return url, pending


def widened_scope(granted: str | None, wanted: str | None) -> str | None:
    """The scope a new sign-in asks for: what the grant it replaces holds plus what is wanted now.
    A step-up challenge may name only the scope a request lacks; a token granted that alone would
    lose what the first sign-in allowed, the server would refuse the next request for it, and the
    user would be asked to sign in again and again (MCP authorization, scope challenge handling:
    ask for the union)."""
    scopes = dict.fromkeys([*(granted or "").split(), *(wanted or "").split()])
    return " ".join(scopes) or None


def read_callback(params: dict[str, str], pending: PendingAuthorization, now: float | None = None) -> str:
    """The authorization code of a callback, after checking it answers `pending`. The caller has
    found `pending` by the callback's state and removed it (single use)."""
    if not hmac.compare_digest(params.get("state", ""), pending.state):
        raise OAuthError(ErrorCode.OAUTH_STATE_INVALID)
    if pending.expired(now):
        raise OAuthError(ErrorCode.OAUTH_STATE_INVALID, "This sign-in took too long and has expired; start it again.")
    check_answer_issuer(params.get("iss"), pending)
    if params.get("error"):
        code = ErrorCode.OAUTH_ACCESS_DENIED if params["error"] == "access_denied" else ErrorCode.OAUTH_TOKEN_ERROR
        raise OAuthError(
            code, f"The provider answered {params['error']}: {params.get('error_description', '')}".strip(": ")
        )
    code = params.get("code")
    if not code:
        raise OAuthError(ErrorCode.OAUTH_STATE_INVALID, "The sign-in answer carries no authorization code.")
    return code


def check_answer_issuer(iss: str | None, pending: PendingAuthorization) -> None:
    """RFC 9207, the mcp SDK's rule (`validate_authorization_response_iss`): an `iss` in the answer
    must be the issuer the sign-in was sent to, compared as plain strings, and an authorization
    server that advertises `authorization_response_iss_parameter_supported` must send one. Either
    failure may be a mix-up attack: another authorization server's answer replayed to Odoo.

    Where the server published no metadata, the issuer is its origin by assumption, spelled by
    nobody: there an `iss` naming that origin with or without the trailing slash is taken. (The
    SDK, having no metadata to compare with, refuses every `iss` there.)"""
    if iss is not None and pending.issuer_assumed and issuers_match(iss, pending.issuer):
        return
    if iss is not None and iss != pending.issuer:
        raise OAuthError(
            ErrorCode.OAUTH_STATE_INVALID,
            f"The sign-in answer says it comes from {iss}, not from {pending.issuer} where the sign-in was sent, "
            "so it was refused (it may be another provider's answer). Start the sign-in again; if this happens "
            "again, ask the server's operator to check its authorization server's issuer.",
            field="iss",
        )
    if iss is None and pending.iss_required:
        raise OAuthError(
            ErrorCode.OAUTH_STATE_INVALID,
            f"The sign-in answer does not say which provider sent it, although {pending.issuer} announces that "
            "its answers always do, so it was refused (it may be another provider's answer). Start the sign-in "
            "again; if this happens again, ask the server's operator.",
            field="iss",
        )


async def exchange_code(
    code: str, pending: PendingAuthorization, registration: ClientRegistration, http: GuardedHttp
) -> TokenSet:
    await http.check(pending.token_endpoint, "token_endpoint")
    async with _oauth_client(registration, http, pending.scope, pending.dpop_key) as client:
        token = await _token_call(
            client.fetch_token(
                pending.token_endpoint,
                grant_type="authorization_code",
                code=code,
                code_verifier=pending.code_verifier.get_secret_value(),
                redirect_uri=pending.redirect_uri,
                resource=pending.resource,
            ),
            reauth_on_grant=False,
            issuer=pending.issuer,
        )
    check_bound(token, pending.dpop_key, pending.issuer)
    # an answer without a scope grants the one asked for (RFC 6749 section 5.1): kept, since a
    # step-up's sign-in asks for it again
    return TokenSet.from_response({**token, "scope": token.get("scope") or pending.scope}, dpop_key=pending.dpop_key)


async def refresh(
    tokens: TokenSet, token_endpoint: str, resource: str, registration: ClientRegistration, http: GuardedHttp
) -> TokenSet:
    """New tokens from the refresh token; OAUTH_REAUTH_REQUIRED when there is none or it is refused."""
    if tokens.refresh_token is None:
        raise OAuthError(
            ErrorCode.OAUTH_REAUTH_REQUIRED,
            "The sign-in expired and the provider gave no refresh token; sign in again.",
        )
    await http.check(token_endpoint, "token_endpoint")
    async with _oauth_client(registration, http, dpop_key=tokens.dpop_key) as client:
        token = await _token_call(
            client.refresh_token(
                token_endpoint, refresh_token=tokens.refresh_token.get_secret_value(), resource=resource
            ),
            reauth_on_grant=True,
            issuer=registration.issuer,
        )
    check_bound(token, tokens.dpop_key, registration.issuer)
    return TokenSet.from_response(dict(token), previous=tokens)


async def revoke(
    tokens: TokenSet, revocation_endpoint: str | None, registration: ClientRegistration, http: GuardedHttp
) -> bool:
    """Revoke the grant at the provider (RFC 7009) where it offers revocation; False when it does not."""
    if not revocation_endpoint:
        return False
    await http.check(revocation_endpoint, "revocation_endpoint")
    token, hint = (
        (tokens.refresh_token, "refresh_token") if tokens.refresh_token else (tokens.access_token, "access_token")
    )
    async with _oauth_client(registration, http) as client:
        try:
            response = await client.revoke_token(
                revocation_endpoint, token=token.get_secret_value(), token_type_hint=hint
            )
        except HTTP_ERRORS as exc:
            raise OAuthError(
                ErrorCode.OAUTH_TOKEN_ERROR, f"Revocation at {revocation_endpoint} failed: {exc}"
            ) from None
    if response.status_code >= 400:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR, f"The provider refused the revocation (HTTP {response.status_code})."
        )
    return True


async def _token_call(call: Any, reauth_on_grant: bool, issuer: str) -> dict[str, Any]:
    try:
        return dict(await call)
    except AuthlibOAuthError as exc:
        error = str(getattr(exc, "error", "") or "")
        if error in (dpop.USE_NONCE, dpop.INVALID_PROOF):
            raise OAuthError(
                ErrorCode.OAUTH_TOKEN_ERROR,
                dpop.refusal_message(
                    f"The authorization server {issuer}", "token endpoint", error, str(exc.description or "")
                ),
                field=dpop.FIELD,
            ) from None
        if reauth_on_grant and error in REAUTH_ERRORS:
            raise OAuthError(
                ErrorCode.OAUTH_REAUTH_REQUIRED, f"The provider refused the refresh ({error}); sign in again."
            ) from None
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"The token endpoint answered {error}: {getattr(exc, 'description', '') or ''}".rstrip(": "),
        ) from None
    except HTTP_STATUS_ERRORS as exc:
        status = exc.response.status_code  # type: ignore[attr-defined]
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR, f"The token endpoint answered HTTP {status}.", field="token_endpoint"
        ) from None
    except HTTP_ERRORS as exc:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"The token endpoint cannot be reached: {type(exc).__name__}: {exc}",
            field="token_endpoint",
        ) from None
    except (ValueError, KeyError) as exc:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR, f"The token endpoint's answer is not a token: {exc}", field="token_endpoint"
        ) from None
