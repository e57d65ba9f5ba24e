"""DPoP (RFC 9449; the MCP extension io.modelcontextprotocol/auth/dpop): tokens bound to a key pair
Odoo holds, so a token copied without the key is refused by the server.

Each grant has its own EC P-256 key (ES256), made by Odoo and kept as a secret beside the grant's
tokens. Every request to the token endpoint and to the MCP server carries a proof: a JWT signed
with that key naming the request's method and URL (no query nor fragment), when it was made and a
unique id, and, for the MCP server, a hash of the access token (`ath`). A server may ask for a
nonce of its own in the proof (`use_dpop_nonce`, with a `DPoP-Nonce` header): the request is made
again, once, with it; a second request for a nonce is a failure, never a loop.

PyJWT signs the proofs (the key's public JWK in the header); what no library does is written
here: the proof's claims, the JWK thumbprint and the retry on a nonce, as an httpx2 transport
under the clients (authlib's at the token endpoint, the MCP session's), so every request of theirs
is proven and the client's hooks only see the final answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from ..errors import ErrorCode, OAuthError

if TYPE_CHECKING:
    from .discovery import Discovery

_logger = logging.getLogger(__name__)

ALGORITHM = "ES256"
HEADER = "DPoP"
NONCE_HEADER = "DPoP-Nonce"
USE_NONCE = "use_dpop_nonce"
INVALID_PROOF = "invalid_dpop_proof"
# the form's field an administrator turns DPoP on or off with
FIELD = "oauth_dpop"


def generate_key() -> str:
    """A new DPoP key pair, the private key as PEM (PKCS#8)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def access_token_hash(token: str) -> str:
    """`ath`: the base64url SHA-256 of the access token (RFC 9449 section 4.2)."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


def thumbprint(jwk: dict[str, Any]) -> str:
    """The JWK SHA-256 thumbprint of an EC public key (RFC 7638): what a bound token's `cnf.jkt` names."""
    canonical = json.dumps({m: jwk[m] for m in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode()).digest())


class DpopKey:
    """One grant's key, loaded once: makes its proofs."""

    def __init__(self, pem: str) -> None:
        try:
            self._key = serialization.load_pem_private_key(pem.encode(), password=None)
        except (ValueError, TypeError):
            raise OAuthError(
                ErrorCode.CONFIG_INVALID, "The grant's DPoP key cannot be read: sign in again.", field=FIELD
            ) from None
        if not isinstance(self._key, ec.EllipticCurvePrivateKey):
            raise OAuthError(ErrorCode.CONFIG_INVALID, "The grant's DPoP key is not an EC key: sign in again.")
        public = ECAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        self.jwk = {m: public[m] for m in ("kty", "crv", "x", "y")}

    @property
    def jkt(self) -> str:
        return thumbprint(self.jwk)

    def proof(
        self,
        method: str,
        url: str,
        access_token: str | None = None,
        nonce: str | None = None,
        now: float | None = None,
    ) -> str:
        """A proof for one request: `url` without its query and fragment (RFC 9449 section 4.2)."""
        target = httpx2.URL(url).copy_with(query=None, fragment=None)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": str(target),
            "iat": int(now if now is not None else time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers={"typ": "dpop+jwt", "jwk": self.jwk})


def _origin(url: httpx2.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


def _public_url(request: httpx2.Request) -> httpx2.URL:
    """The URL the request was made for: an address pin sends it to the checked address but keeps
    the Host header, which is what the server compares `htu` with."""
    host = request.headers.get("host")
    return request.url.copy_with(netloc=host.encode()) if host else request.url


def _bound_token(request: httpx2.Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "dpop" and token.strip() else None


async def asks_for_nonce(response: httpx2.Response) -> bool:
    """Whether an answer asks for the server's nonce: a resource server's 401 with
    `WWW-Authenticate: DPoP error="use_dpop_nonce"`, an authorization server's 400 (or 401) with
    the error `use_dpop_nonce` (RFC 9449 sections 8 and 9)."""
    if NONCE_HEADER.lower() not in response.headers:
        return False
    if response.status_code == 401 and USE_NONCE in response.headers.get("www-authenticate", ""):
        return True
    if response.status_code not in (400, 401):
        return False
    await response.aread()
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error") == USE_NONCE


class DpopTransport(httpx2.AsyncBaseTransport):
    """Proves every request it sends with `key`, and answers a server's request for a nonce by
    sending the request once more with it. The last nonce each origin gave is used from then on
    (servers send new ones in any answer). `inner` is an httpx2 transport, or an httpx one under
    an authlib that is built on httpx: only what both libraries share is used."""

    def __init__(
        self,
        key: DpopKey,
        inner: httpx2.AsyncBaseTransport,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.key = key
        self.inner = inner
        self.clock = clock
        self.nonces: dict[str, str] = {}

    def _prove(self, request: httpx2.Request) -> None:
        url = _public_url(request)
        nonce = self.nonces.get(_origin(url))
        request.headers[HEADER] = self.key.proof(
            request.method, str(url), _bound_token(request), nonce=nonce, now=self.clock()
        )

    def _keep_nonce(self, request: httpx2.Request, response: httpx2.Response) -> None:
        nonce = response.headers.get(NONCE_HEADER)
        if nonce:
            self.nonces[_origin(_public_url(request))] = nonce

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # read whole first, so that it can be sent again (a JSON-RPC message, a token request form)
        await request.aread()
        self._prove(request)
        response = await self.inner.handle_async_request(request)
        self._keep_nonce(request, response)
        if not await asks_for_nonce(response):
            return response
        await response.aclose()
        _logger.info("DPoP nonce asked for, the request sent again with it: url=%s", _public_url(request))
        self._prove(request)
        retried = await self.inner.handle_async_request(request)
        self._keep_nonce(request, retried)
        if await asks_for_nonce(retried):
            _logger.warning("DPoP nonce asked for again after the nonce was sent: url=%s", _public_url(request))
        return retried

    async def aclose(self) -> None:
        await self.inner.aclose()


def check_offered(discovery: Discovery, bound: bool, server_name: str) -> None:
    """Refuse, before any sign-in, what could only end refused, as the server's resource metadata
    (RFC 9728, RFC 9449 section 5.2) says: DPoP off where it takes only DPoP-bound tokens (its
    bearer tokens would be refused, and the user asked to sign in again and again), or DPoP on
    where the algorithms it lists for proofs leave out ES256."""
    resource = discovery.protected_resource
    if resource is None:
        return
    if not bound and resource.dpop_bound_access_tokens_required:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{server_name} takes only DPoP-bound tokens (its resource metadata says "
            "dpop_bound_access_tokens_required): turn on DPoP on the server's form.",
            field=FIELD,
        )
    offered = resource.dpop_signing_alg_values_supported
    if bound and offered is not None and ALGORITHM not in offered:
        raise OAuthError(
            ErrorCode.OAUTH_TOKEN_ERROR,
            f"{server_name} takes DPoP proofs signed with {', '.join(offered) or 'nothing'}, not {ALGORITHM} as "
            "Odoo signs them: turn off DPoP on the server's form.",
            field=FIELD,
        )


def refusal_message(server_name: str, who: str, error: str, description: str = "") -> str:
    """The sentence for a server that refuses Odoo's DPoP proofs, its nonce or DPoP itself."""
    said = f"{error}: {description}".rstrip(": ")
    if error == USE_NONCE:
        return (
            f"{server_name}: its {who} asked for a new DPoP nonce again after Odoo sent the one it asked for "
            f"({said}), so Odoo stopped rather than ask forever. Ask the server's operator, or turn off DPoP on "
            "the server's form."
        )
    return (
        f"{server_name}: its {who} refused Odoo's DPoP proof ({said}). Check that the server takes DPoP "
        "(ES256) and that this machine's clock is right, or turn off DPoP on the server's form."
    )
