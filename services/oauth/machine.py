"""Odoo signing in as a company client: the client credentials grant (OAuth 2.1 section 4.2, the
MCP extension io.modelcontextprotocol/oauth-client-credentials), for a shared server, with no
person and no browser.

Discovery is the sign-in's own (protected resource metadata, then the authorization server's,
through the SSRF guard). The client authenticates with a secret (client_secret_basic or
client_secret_post, as the authorization server lists them) or with a private key (private_key_jwt,
RFC 7523): the assertion is the mcp SDK's (`SignedJWTParameters`, its audience the authorization
server's issuer as the SDK and the extension have it), the token request authlib's. Tokens are kept
in the grant's store and fetched again before they expire; client credentials tokens carry no
refresh token (RFC 6749 section 4.4.3).

Every failure is an OAuthError whose sentence names the server and the setting to fix
(`field`): never OAUTH_REAUTH_REQUIRED, since nobody could sign in to mend it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from enum import Enum
from typing import Any

from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.integrations.httpx_client import OAuthError as AuthlibOAuthError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from mcp.client.auth.extensions.client_credentials import SignedJWTParameters
from pydantic import BaseModel, ConfigDict, SecretStr

from ..errors import AuthRequired, ErrorCode, McpError, OAuthError
from ..server_spec import ServerSpec
from . import dpop
from .client import HTTP_ERRORS, HTTP_STATUS_ERRORS, check_bound, dpop_transport
from .discovery import Discovery, discover
from .http import GuardedHttp
from .models import CLOCK_SKEW, TokenSet
from .tokens import _FLIGHTS, RefreshingTokens, TokenStore, renewed_since


class SavingTokenStore(TokenStore):
    """A TokenStore that also keeps a first grant: there is no sign-in to store one."""

    async def save(self, tokens: TokenSet) -> TokenSet:
        """Keep `tokens` as the grant (made or replaced); returns the grant as stored."""


_logger = logging.getLogger(__name__)

CLIENT_CREDENTIALS = "client_credentials"
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# RSA keys are the ones every identity provider takes (some take no EC key)
GENERATED_KEY_SIZE = 2048


class ClientAuth(str, Enum):
    SECRET = "client_secret"  # client_secret_basic or client_secret_post
    PRIVATE_KEY = "private_key_jwt"


class MachineClient(BaseModel):
    """Odoo's client at the server's authorization server, as an administrator entered it."""

    model_config = ConfigDict(frozen=True)

    server_name: str
    client_id: str
    auth: ClientAuth
    client_secret: SecretStr | None = None
    private_key: SecretStr | None = None  # PEM
    scope: str | None = None
    # its tokens are bound to a key of the grant (DPoP)
    dpop: bool = False


# -- keys ------------------------------------------------------------------------------------------


def generate_private_key() -> str:
    """A new RSA private key, PEM (PKCS#8)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=GENERATED_KEY_SIZE)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _load_private_key(pem: str) -> Any:
    try:
        return serialization.load_pem_private_key(pem.strip().encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise OAuthError(
            ErrorCode.CONFIG_INVALID,
            f"The Private Key is not an unencrypted PEM private key ({exc}): generate a key pair again.",
            field="oauth_private_key",
        ) from None


def signing_algorithm(private_pem: str) -> str:
    """The JWS algorithm of a key: RS256 for RSA, ES256/384/512 for the NIST curves."""
    key = _load_private_key(private_pem)
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        algorithms = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        if key.curve.name in algorithms:
            return algorithms[key.curve.name]
    raise OAuthError(
        ErrorCode.CONFIG_INVALID,
        "The Private Key is neither an RSA key nor an EC key on P-256, P-384 or P-521: generate a key pair again.",
        field="oauth_private_key",
    )


def public_key(private_pem: str) -> tuple[str, str]:
    """(the public JWK as JSON, the public key as PEM) of a private key: what the identity
    provider is given. Nothing secret."""
    algorithm = signing_algorithm(private_pem)
    public = _load_private_key(private_pem).public_key()
    pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    jwk = (RSAAlgorithm if algorithm == "RS256" else ECAlgorithm).to_jwk(public, as_dict=True)
    jwk.pop("key_ops", None)  # RFC 7517: not beside "use"
    document = {**jwk, "use": "sig", "alg": algorithm, "kid": _thumbprint(jwk)}
    return json.dumps(document, indent=2, sort_keys=True), pem


def _thumbprint(jwk: dict[str, Any]) -> str:
    """The key's JWK thumbprint (RFC 7638), its usual key id."""
    members = ("e", "kty", "n") if jwk["kty"] == "RSA" else ("crv", "kty", "x", "y")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


# -- the token request -------------------------------------------------------------------------------


def _refused(client: MachineClient, message: str, field: str) -> OAuthError:
    return OAuthError(ErrorCode.OAUTH_TOKEN_ERROR, f"{client.server_name}: {message}", field=field)


def _check_grant(client: MachineClient, discovery: Discovery) -> None:
    offered = discovery.authorization_server.grant_types_supported
    if offered is not None and CLIENT_CREDENTIALS not in offered:
        raise _refused(
            client,
            f"its authorization server {discovery.issuer} does not offer the client_credentials grant "
            f"(it offers {', '.join(offered) or 'none'}): a company client cannot sign in there. Set Signs In As "
            "to a person, or ask the provider to allow client credentials.",
            "oauth_flow",
        )


def _auth_method(client: MachineClient, discovery: Discovery) -> str:
    """The token endpoint authentication method: the one the administrator chose, in the form the
    authorization server lists (RFC 8414: without a list, client_secret_basic)."""
    metadata = discovery.authorization_server
    supported = metadata.token_endpoint_auth_methods_supported
    if client.auth is ClientAuth.PRIVATE_KEY:
        if supported is not None and "private_key_jwt" not in supported:
            raise _refused(
                client,
                f"its authorization server does not take a private key (it takes {', '.join(supported)}): "
                "set Client Authentication to Client secret.",
                "oauth_client_auth",
            )
        algorithms = metadata.token_endpoint_auth_signing_alg_values_supported
        algorithm = signing_algorithm(client.private_key.get_secret_value() if client.private_key else "")
        if algorithms and algorithm not in algorithms:
            raise _refused(
                client,
                f"its authorization server takes assertions signed with {', '.join(algorithms)}, not {algorithm}: "
                "put a private key of one of those kinds in Private Key.",
                "oauth_private_key",
            )
        return "private_key_jwt"
    for method in ("client_secret_basic", "client_secret_post"):
        if supported is None or method in supported:
            return method
    raise _refused(
        client,
        f"its authorization server does not take a client secret (it takes {', '.join(supported)}): "
        "set Client Authentication to Private key.",
        "oauth_client_auth",
    )


def _check_credentials(client: MachineClient) -> None:
    if not client.client_id:
        raise _refused(client, "no Client ID is set for its company client: enter it.", "oauth_client_id")
    if client.auth is ClientAuth.SECRET and not client.client_secret:
        raise _refused(client, "no Client Secret is set for its company client: enter it.", "oauth_client_secret")
    if client.auth is ClientAuth.PRIVATE_KEY and not client.private_key:
        raise _refused(
            client,
            "no Private Key is set for its company client: generate a key pair and give the public key to the "
            "identity provider.",
            "oauth_private_key",
        )


async def _assertion(client: MachineClient, audience: str) -> str:
    assert client.private_key is not None
    pem = client.private_key.get_secret_value()
    parameters = SignedJWTParameters(
        issuer=client.client_id, subject=client.client_id, signing_key=pem, signing_algorithm=signing_algorithm(pem)
    )
    return await parameters.create_assertion_provider()(audience)


def _credential_field(client: MachineClient) -> str:
    return "oauth_private_key" if client.auth is ClientAuth.PRIVATE_KEY else "oauth_client_secret"


def _token_refusal(client: MachineClient, error: str, description: str) -> OAuthError:
    said = f"{error}: {description}".rstrip(": ")
    if error == "invalid_client":
        if client.auth is ClientAuth.PRIVATE_KEY:
            fix = "check Client ID, and that the identity provider has the public key of Private Key."
        else:
            fix = "check Client ID and Client Secret."
        return _refused(
            client, f"its authorization server refused the company client ({said}): {fix}", "oauth_client_id"
        )
    if error in ("unauthorized_client", "unsupported_grant_type"):
        return _refused(
            client,
            f"its authorization server does not let this client use the client_credentials grant ({said}): allow "
            "it at the provider for Client ID, or set Signs In As to a person.",
            "oauth_flow",
        )
    if error in (dpop.USE_NONCE, dpop.INVALID_PROOF):
        return OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            dpop.refusal_message(client.server_name, "authorization server", error, description),
            field=dpop.FIELD,
        )
    if error == "invalid_scope":
        return _refused(
            client, f"its authorization server refused the scopes asked for ({said}): check Scopes.", "oauth_scopes"
        )
    return _refused(client, f"its token endpoint answered {said}.", _credential_field(client))


async def fetch_token(
    client: MachineClient, discovery: Discovery, http: GuardedHttp, dpop_key: SecretStr | None = None
) -> TokenSet:
    """A new token for `client` from the authorization server `discovery` found, bound to
    `dpop_key` where there is one (DPoP). Raises OAuthError."""
    _check_grant(client, discovery)
    _check_credentials(client)
    dpop.check_offered(discovery, dpop_key is not None, client.server_name)
    method = _auth_method(client, discovery)
    endpoint = discovery.endpoint("token_endpoint")
    if not endpoint:
        raise _refused(client, "its authorization server names no token endpoint.", "url")
    await http.check(endpoint, "token_endpoint")
    scope = client.scope or discovery.scope
    extra: dict[str, str] = {}
    if method == "private_key_jwt":
        extra = {
            "client_assertion_type": JWT_BEARER_ASSERTION,
            "client_assertion": await _assertion(client, discovery.issuer),
        }
    async with AsyncOAuth2Client(
        client_id=client.client_id,
        client_secret=client.client_secret.get_secret_value() if client.client_secret else None,
        # the assertion is in the body: authlib only adds the client_id beside it
        token_endpoint_auth_method="none" if method == "private_key_jwt" else method,
        scope=scope,
        **http.client_kwargs(),
        **dpop_transport(dpop_key),
    ) as oauth:
        try:
            token = dict(
                await oauth.fetch_token(endpoint, grant_type=CLIENT_CREDENTIALS, resource=discovery.resource, **extra)
            )
        except AuthlibOAuthError as exc:
            raise _token_refusal(client, str(exc.error or ""), str(exc.description or "")) from None
        except HTTP_STATUS_ERRORS as exc:
            status = exc.response.status_code  # type: ignore[attr-defined]
            raise _refused(
                client, f"its token endpoint {endpoint} answered HTTP {status}; try again later.", "url"
            ) from None
        except HTTP_ERRORS as exc:
            raise _refused(
                client,
                f"its token endpoint {endpoint} cannot be reached ({type(exc).__name__}); check URL, or try again "
                "later.",
                "url",
            ) from None
        except (ValueError, KeyError) as exc:
            raise _refused(client, f"its token endpoint's answer is not a token ({exc}).", "url") from None
    check_bound(token, dpop_key, discovery.issuer)
    tokens = TokenSet.from_response({**token, "scope": token.get("scope") or scope}, dpop_key=dpop_key)
    _logger.info(
        "OAuth client credentials token: server=%s issuer=%s method=%s dpop=%s expires_at=%s",
        client.server_name,
        discovery.issuer,
        method,
        dpop_key is not None,
        tokens.expires_at,
    )
    return tokens


# -- the tokens a session calls with ------------------------------------------------------------------


class ClientCredentialsTokens(RefreshingTokens):
    """The shared grant of a server Odoo signs in to as a company client: a token fetched when
    there is none or it is about to expire, and once more when the server refuses it. Holders take
    turns as RefreshingTokens' do, so one token request serves them all."""

    def __init__(  # pylint: disable=super-init-not-called
        self,
        store: SavingTokenStore,
        client: MachineClient,
        server_url: str,
        http: GuardedHttp,
        sse: bool = False,
        skew: float = CLOCK_SKEW,
    ) -> None:
        # no registration nor refresh token: RefreshingTokens' refresh is not this one's
        self.store: SavingTokenStore = store
        self.client = client
        self.server_url = server_url
        self.http = http
        self.sse = sse
        self.skew = skew

    async def current(self) -> TokenSet:
        tokens = await self.store.load()
        if tokens is None or tokens.expiring(skew=self.skew):
            return await self.refresh(tokens)
        return tokens

    async def refresh(self, started_from: TokenSet | None) -> TokenSet:  # type: ignore[override]
        """A token in place of `started_from` (None: there was none): the stored one when another
        holder fetched one meanwhile, else a new one. Raises OAuthError."""

        async def renewal(stored: TokenSet | None) -> TokenSet | None:
            return await self.renew(stored, started_from)

        async with _FLIGHTS.one_at_a_time(self.store.key):
            tokens = await self.store.renew(renewal)
            if tokens is None:  # nothing stored yet: the first token
                tokens = await self.fetch()
                tokens = await self.store.save(tokens)
        return tokens

    async def renew(self, stored: TokenSet | None, started_from: TokenSet | None) -> TokenSet | None:  # type: ignore[override]
        """The token to keep, decided on the grant as `stored` now (locked against the other
        holders): the stored one when it is not about to expire and is not the one `started_from`
        the server refused, else a new one."""
        if stored is None:
            return None
        fresh = not stored.expiring(skew=self.skew)
        if fresh and (started_from is None or renewed_since(stored, started_from)):
            return stored
        return await self.fetch(stored.dpop_key)

    async def fetch(self, dpop_key: SecretStr | None = None) -> TokenSet:
        """A new token, bound to the grant's DPoP key `dpop_key` (a new key for a first token)."""
        if not self.client.dpop:
            dpop_key = None
        elif dpop_key is None:
            dpop_key = SecretStr(dpop.generate_key())
        discovery = await discover(self.server_url, self.http, sse=self.sse, pkce=False)
        return await self.request_token(discovery, dpop_key)

    async def request_token(self, discovery: Discovery, dpop_key: SecretStr | None) -> TokenSet:
        """The token request this kind of grant makes at the authorization server `discovery` found."""
        return await fetch_token(self.client, discovery, self.http, dpop_key)

    def refusal(self, spec: ServerSpec, used: TokenSet, exc: AuthRequired) -> McpError:
        """What a turn is told when the server refuses a token just fetched: a sentence for the
        administrator, never a sign-in nobody could make."""
        _logger.warning(
            "OAuth client credentials token refused by the server: server=%s step_up=%s", spec.label(), exc.step_up
        )
        if exc.step_up:
            return McpError(
                ErrorCode.MCP_AUTH_FAILED,
                f"{spec.name} refuses this request to the company client: it needs the scope {exc.scope}. Add it "
                "to Scopes on the server's form, and allow it at the provider for the client.",
            )
        return McpError(
            ErrorCode.MCP_AUTH_FAILED,
            f"{spec.name} refuses the token its authorization server gave the company client: check Client ID "
            "and Scopes on the server's form, and that the provider gives the client access to this server.",
        )
