"""Token requests that present a JWT instead of a secret of Odoo's own: the JWT bearer grant
(RFC 7523 section 2.1, `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) and the token
exchange (RFC 8693). Workload identity and enterprise-managed authorization are both built on
them (workload.py, enterprise.py).

One POST of a form, its answer read: a refusal of the endpoint (RFC 6749 section 5.2) is a
`TokenRefusal` the caller turns into a sentence naming its own fields; an endpoint that cannot be
reached or answers no JSON is an OAuthError naming `url_field`. The request goes through the
GuardedHttp of the server (the SSRF guard, address pinning, no redirects). Nothing here logs a
JWT, a secret or a token."""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from mcp.shared.auth import JWT_BEARER_GRANT_TYPE
from pydantic import SecretStr

from ..errors import ErrorCode, OAuthError
from .client import HTTP_ERRORS, check_bound, token_endpoint_client
from .discovery import Discovery
from .http import GuardedHttp
from .models import TokenSet

_logger = logging.getLogger(__name__)

JWT_BEARER = JWT_BEARER_GRANT_TYPE


class TokenRefusal(Exception):
    """The endpoint's `error` and `error_description` (RFC 6749 section 5.2)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(error)
        self.error = error
        self.description = description

    def said(self) -> str:
        return f"{self.error}: {self.description}".rstrip(": ")


def is_jwt(text: str) -> bool:
    """Whether `text` has the form of a signed JWT (three base64url parts, a JSON header naming an
    algorithm): what is sent as an assertion must be one, so no other text read from a file or an
    environment variable ever leaves Odoo."""
    parts = text.split(".")
    if len(parts) != 3 or not all(parts):
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and bool(header.get("alg"))


def jwt_bearer_endpoint(server_name: str, discovery: Discovery, who: str) -> str:
    """The token endpoint of the authorization server `discovery` found, checked before anything is
    sent: an OAuthError naming Signs In As when it lists its grants without the JWT bearer grant
    (`who`, "a workload identity", cannot sign in there; a server that lists none is asked), naming
    URL when it has no token endpoint."""
    endpoint = discovery.endpoint("token_endpoint")
    if not endpoint:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{server_name}: its authorization server names no token endpoint.",
            field="url",
        )
    offered = discovery.authorization_server.grant_types_supported
    if offered is not None and JWT_BEARER not in offered:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{server_name}: its authorization server {discovery.issuer} does not offer the JWT bearer grant (it "
            f"offers {', '.join(offered) or 'none'}): {who} cannot sign in there. Change Signs In As.",
            field="oauth_flow",
        )
    return endpoint


def basic_auth(client_id: str, secret: str) -> str:
    """client_secret_basic (RFC 6749 section 2.3.1: each part form-encoded first)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


async def post_token_request(
    endpoint: str,
    form: dict[str, str],
    http: GuardedHttp,
    *,
    what: str,
    url_field: str,
    authorization: str | None = None,
    dpop_key: SecretStr | None = None,
) -> dict[str, Any]:
    """The JSON answer of a token request to `endpoint` (checked by the guard first), with a DPoP
    proof of `dpop_key` where there is one. `what` names the endpoint in sentences ("Notes: its
    token endpoint"). Raises TokenRefusal, OAuthError."""
    await http.check(endpoint, url_field)
    headers = {"Accept": "application/json", **({"Authorization": authorization} if authorization else {})}
    try:
        async with token_endpoint_client(http, dpop_key) as client:
            response = await client.post(endpoint, data={k: v for k, v in form.items() if v}, headers=headers)
    except HTTP_ERRORS as exc:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{what} {endpoint} cannot be reached ({type(exc).__name__}); check it, or try again later.",
            field=url_field,
        ) from None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{what} {endpoint} answered HTTP {response.status_code} without a JSON answer; try again later.",
            field=url_field,
        )
    if response.status_code != 200 or "error" in answer:
        raise TokenRefusal(
            str(answer.get("error") or f"HTTP {response.status_code}"), str(answer.get("error_description") or "")
        )
    if not answer.get("access_token"):
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR, f"{what} {endpoint} answered without an access_token.", field=url_field
        )
    return answer


async def jwt_bearer_token(
    endpoint: str,
    discovery: Discovery,
    form: dict[str, str],
    http: GuardedHttp,
    *,
    server_name: str,
    kind: str,
    refused: Callable[[TokenRefusal], OAuthError],
    authorization: str | None = None,
    dpop_key: SecretStr | None = None,
) -> TokenSet:
    """The token a JWT bearer grant's `form` gets at `endpoint` (`jwt_bearer_endpoint` of
    `discovery`), bound to `dpop_key` where there is one; `refused` turns a refusal into the sentence
    for the admin or the user, `kind` names the grant in the log ("workload identity"). Raises
    OAuthError."""
    try:
        answer = await post_token_request(
            endpoint,
            form,
            http,
            what=f"{server_name}: its token endpoint",
            url_field="url",
            authorization=authorization,
            dpop_key=dpop_key,
        )
    except TokenRefusal as refusal:
        _logger.info("OAuth %s refused: server=%s error=%s", kind, server_name, refusal.error)
        raise refused(refusal) from None
    check_bound(answer, dpop_key, discovery.issuer)
    tokens = TokenSet.from_response({**answer, "scope": answer.get("scope") or form.get("scope")}, dpop_key=dpop_key)
    _logger.info(
        "OAuth %s token: server=%s issuer=%s expires_at=%s", kind, server_name, discovery.issuer, tokens.expires_at
    )
    return tokens
