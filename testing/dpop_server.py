"""DPoP (RFC 9449) on the side of testing/oauth_server.py's servers: the token endpoint binds the
tokens of a request that carries a valid proof to the proof's key (token_type DPoP, refresh
tokens included), and the MCP endpoint takes a bound token only as `Authorization: DPoP` with a
fresh proof of that key naming the token (`ath`). Either may ask for a nonce first.

Proofs are checked here independently of the client's code: PyJWT verifies the signature with
the JWK of the proof's header, the claims and the thumbprint (RFC 7638) are compared by hand.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from starlette.responses import JSONResponse

from .mcp_asgi import header

ALGORITHMS = ["ES256", "ES384", "RS256", "PS256", "EdDSA"]
# how far a proof's iat may be from the server's clock
IAT_WINDOW = 300


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    members = ("e", "kty", "n") if jwk.get("kty") == "RSA" else ("crv", "kty", "x", "y")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode()).digest())


@dataclass
class DpopLog:
    """What the server saw and decided; tests read it."""

    # access or refresh token -> thumbprint of the key it is bound to
    bound: dict[str, str] = field(default_factory=dict)
    jtis: set[str] = field(default_factory=set)
    # why requests were refused, in order
    refusals: list[str] = field(default_factory=list)
    # "as" or "rs" for each use_dpop_nonce answered
    nonce_challenges: list[str] = field(default_factory=list)
    # the Authorization scheme of each request to the MCP endpoint that bore a token
    schemes: list[str] = field(default_factory=list)
    # proofs taken at the token endpoint, by grant type
    token_proofs: list[str] = field(default_factory=list)
    nonce: str = field(default_factory=lambda: secrets.token_urlsafe(12))


def check_proof(
    proof: str | None, method: str, url: str, log: DpopLog, access_token: str | None = None
) -> tuple[str | None, str | None]:
    """(the thumbprint of the proof's key, None) or (None, why the proof is refused)."""
    if not proof or "," in proof:
        return None, "no single DPoP proof"
    try:
        head = jwt.get_unverified_header(proof)
        if head.get("typ") != "dpop+jwt" or head.get("alg") not in ALGORITHMS:
            return None, "typ or alg"
        jwk = head.get("jwk")
        if not isinstance(jwk, dict) or "d" in jwk:
            return None, "jwk missing or private"
        key = jwt.PyJWK(jwk, algorithm=head["alg"])
        claims = jwt.decode(proof, key.key, algorithms=ALGORITHMS)
    except jwt.PyJWTError as exc:
        return None, f"bad proof: {exc}"
    if claims.get("htm") != method:
        return None, "htm"
    htu = str(claims.get("htu", ""))
    if "?" in htu or "#" in htu or htu.rstrip("/") != url.rstrip("/"):
        return None, f"htu {htu} is not {url}"
    if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > IAT_WINDOW:
        return None, "iat"
    jti = claims.get("jti")
    if not isinstance(jti, str) or jti in log.jtis:
        return None, "jti missing or replayed"
    log.jtis.add(jti)
    if access_token is not None:
        ath = _b64(hashlib.sha256(access_token.encode()).digest())
        if claims.get("ath") != ath:
            return None, "ath"
    return jwk_thumbprint(jwk), None


def proof_nonce(proof: str) -> str | None:
    return jwt.decode(proof, options={"verify_signature": False}).get("nonce")


def nonce_missing(proof: str, log: DpopLog, rotates: bool) -> bool:
    """Whether the proof lacks the server's current nonce. `rotates`: a new nonce for every
    request, which no proof can have (a client must give up, not loop)."""
    if rotates:
        log.nonce = secrets.token_urlsafe(12)
    return proof_nonce(proof) != log.nonce


def token_refusal(log: DpopLog, error: str, why: str, nonce: str | None = None) -> JSONResponse:
    log.refusals.append(f"token: {error}: {why}")
    headers = {"Cache-Control": "no-store", **({"DPoP-Nonce": nonce} if nonce else {})}
    return JSONResponse({"error": error, "error_description": why}, status_code=400, headers=headers)


def resource_refusal(log: DpopLog, error: str, why: str, nonce: str | None = None) -> JSONResponse:
    log.refusals.append(f"resource: {error}: {why}")
    headers = {"WWW-Authenticate": f'DPoP error="{error}", algs="ES256"', **({"DPoP-Nonce": nonce} if nonce else {})}
    return JSONResponse({"error": error, "error_description": why}, status_code=401, headers=headers)


def bind(log: DpopLog, answer: dict[str, Any], jkt: str) -> dict[str, Any]:
    """A token answer bound to the key `jkt`."""
    if "access_token" not in answer:
        return answer
    log.bound[answer["access_token"]] = jkt
    if answer.get("refresh_token"):
        log.bound[answer["refresh_token"]] = jkt
    return {**answer, "token_type": "DPoP"}


def authorization(scope: dict[str, Any]) -> tuple[str, str]:
    """(scheme, token) of the request's Authorization header; ("", "") without one."""
    scheme, _, token = (header(scope, b"authorization") or "").partition(" ")
    return scheme, token.strip()


def as_bearer(scope: dict[str, Any], token: str) -> dict[str, Any]:
    """The request as the SDK's bearer check reads it, once its DPoP proof was checked here."""
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
    return {**scope, "headers": [*headers, (b"authorization", f"Bearer {token}".encode())]}
