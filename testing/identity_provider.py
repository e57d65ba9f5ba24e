"""A company identity provider for tests (what Okta, Entra ID or Keycloak are to a company), on a
127.0.0.1 port in a thread of the test process: OpenID Connect discovery, the authorization code
flow with PKCE (a person signs in at `/authorize`, done here by `sign_in` as a browser would), a
token endpoint for the code, the refresh token and the token exchange of enterprise-managed
authorization.

The token exchange follows the MCP extension io.modelcontextprotocol/enterprise-managed-authorization
and RFC 8693: a confidential client (client_secret_basic) presents a user's ID token it issued
(`subject_token_type` id_token) and asks for an identity assertion grant (`requested_token_type`
id-jag) for an authorization server (`audience`, its issuer) and an MCP server (`resource`). The
ID-JAG is a JWT of type `oauth-id-jag+jwt` signed with the provider's key, naming the user (`sub`),
the authorization server (`aud`), the server (`resource`) and the client Odoo is at that
authorization server (`client_id`, from `clients_at`: the provider knows which client each
authorization server gave the company's host). An authorization server that trusts the provider
(testing/oauth_server.py `trusted_issuers`, given `public_pem`) takes it in the JWT bearer grant.

Only the audiences in `clients_at` are approved: any other is refused (invalid_target), as a
company's provider refuses servers the company did not approve.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .thread_server import ThreadServer

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass
class _Code:
    user: str
    client_id: str
    redirect_uri: str
    challenge: str
    nonce: str | None
    expires_at: float


class IdentityProvider(ThreadServer):
    label = "Identity provider"
    thread_name = "identity-provider"

    def __init__(self, client_id: str = "odoo", client_secret: str = "odoo-secret", id_token_lifetime: int = 3600):
        super().__init__()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.issuer = self.base_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.id_token_lifetime = id_token_lifetime
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.public_pem = (
            self._key.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )
        # authorization server issuer -> the client id it gave the company's Odoo (approved servers)
        self.clients_at: dict[str, str] = {}
        self._codes: dict[str, _Code] = {}
        self._refresh: dict[str, str] = {}  # refresh token -> user
        self._lock = threading.Lock()
        # what was asked of it, for tests to count: ("code" | "refresh" | "exchange", user)
        self.requests: list[tuple[str, str]] = []
        # users whose sign-in the provider revoked (their refresh tokens and ID tokens are refused)
        self.revoked: set[str] = set()

    # -- what a person does in the browser ------------------------------------------------------

    def sign_in(self, authorize_url: str, user: str) -> str:
        """Open the authorization URL and sign in as `user`; the redirect back to Odoo, unfollowed."""
        with httpx.Client(timeout=10) as http:
            # appended: httpx's `params` would replace the URL's query
            response = http.get(f"{authorize_url}&{urlencode({'login': user})}")
        if response.status_code != 302:
            raise RuntimeError(f"authorize answered {response.status_code}: {response.text[:300]}")
        return response.headers["location"]

    # -- tokens ------------------------------------------------------------------------------

    def id_token(self, user: str, nonce: str | None = None, lifetime: int | None = None) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": user,
            "aud": self.client_id,
            "email": f"{user}@example.com",
            "iat": now,
            "exp": now + (self.id_token_lifetime if lifetime is None else lifetime),
            **({"nonce": nonce} if nonce else {}),
        }
        return jwt.encode(claims, self._key, algorithm="ES256")

    def _tokens(self, user: str, nonce: str | None = None) -> dict[str, Any]:
        refresh = f"rt-{secrets.token_urlsafe(24)}"
        self._refresh[refresh] = user
        return {
            "access_token": f"at-{secrets.token_urlsafe(16)}",
            "token_type": "Bearer",
            "expires_in": self.id_token_lifetime,
            "id_token": self.id_token(user, nonce),
            "refresh_token": refresh,
            "scope": "openid offline_access",
        }

    def _id_jag(self, user: str, audience: str, resource: str, client_id: str) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": user,
            "aud": audience,
            "resource": resource,
            "client_id": client_id,
            "iat": now,
            "exp": now + 300,
            "jti": str(uuid.uuid4()),
        }
        return jwt.encode(claims, self._key, algorithm="ES256", headers={"typ": "oauth-id-jag+jwt"})

    # -- the application ----------------------------------------------------------------------

    def _app(self) -> Any:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._configuration),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
            ]
        )

    async def _configuration(self, _request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.base_url}/authorize",
                "token_endpoint": f"{self.base_url}/token",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "id_token_signing_alg_values_supported": ["ES256"],
            }
        )

    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        if query.get("client_id") != self.client_id:
            return JSONResponse({"error": "invalid_request", "error_description": "unknown client_id"}, 400)
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return JSONResponse({"error": "invalid_request", "error_description": "PKCE (S256) is required"}, 400)
        if "openid" not in (query.get("scope") or "").split():
            return JSONResponse({"error": "invalid_scope", "error_description": "openid is required"}, status_code=400)
        code = secrets.token_urlsafe(24)
        self._codes[code] = _Code(
            user=query.get("login") or "alice",
            client_id=self.client_id,
            redirect_uri=query["redirect_uri"],
            challenge=query.get("code_challenge") or "",
            nonce=query.get("nonce"),
            expires_at=time.time() + 300,
        )
        back = (
            f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', ''), 'iss': self.issuer})}"
        )
        return RedirectResponse(back, status_code=302)

    def _client_problem(self, request: Request) -> str | None:
        authorization = request.headers.get("authorization", "")
        if not authorization.startswith("Basic "):
            return "client_secret_basic is required"
        client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
        if unquote(client_id) != self.client_id or not secrets.compare_digest(unquote(secret), self.client_secret):
            return "unknown client or wrong secret"
        return None

    async def _token(self, request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        problem = self._client_problem(request)
        if problem:
            return JSONResponse({"error": "invalid_client", "error_description": problem}, status_code=401)
        grant = form.get("grant_type")
        with self._lock:
            if grant == "authorization_code":
                return self._code_grant(form)
            if grant == "refresh_token":
                return self._refresh_grant(form)
            if grant == TOKEN_EXCHANGE:
                return self._exchange(form)
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    def _code_grant(self, form: dict[str, str]) -> Response:
        code = self._codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if code is None or code.expires_at < time.time() or code.redirect_uri != form.get("redirect_uri"):
            return JSONResponse({"error": "invalid_grant", "error_description": "unknown code"}, status_code=400)
        if challenge != code.challenge:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE check failed"}, status_code=400)
        self.requests.append(("code", code.user))
        return JSONResponse(self._tokens(code.user, code.nonce))

    def _refresh_grant(self, form: dict[str, str]) -> Response:
        # rotated: a refresh token is spent once
        user = self._refresh.pop(form.get("refresh_token", ""), None)
        if user is None or user in self.revoked:
            return JSONResponse({"error": "invalid_grant", "error_description": "refresh token refused"}, 400)
        self.requests.append(("refresh", user))
        return JSONResponse(self._tokens(user))

    def _exchange(self, form: dict[str, str]) -> Response:
        if form.get("subject_token_type") != ID_TOKEN_TYPE or form.get("requested_token_type") != ID_JAG_TYPE:
            return JSONResponse({"error": "invalid_request", "error_description": "id_token for id-jag only"}, 400)
        try:
            claims = jwt.decode(
                form.get("subject_token", ""),
                self.public_pem,
                algorithms=["ES256"],
                audience=self.client_id,
                issuer=self.issuer,
            )
        except jwt.PyJWTError as exc:
            return JSONResponse({"error": "invalid_grant", "error_description": f"ID token refused: {exc}"}, 400)
        user = str(claims["sub"])
        if user in self.revoked:
            return JSONResponse({"error": "invalid_grant", "error_description": "the user's sign-in is revoked"}, 400)
        audience, resource = form.get("audience", ""), form.get("resource", "")
        client_at = self.clients_at.get(audience)
        if client_at is None or not urlsplit(resource).scheme:
            return JSONResponse(
                {"error": "invalid_target", "error_description": f"{audience} is not approved for the company"}, 400
            )
        self.requests.append(("exchange", user))
        return JSONResponse(
            {
                "access_token": self._id_jag(user, audience, resource, client_at),
                "issued_token_type": ID_JAG_TYPE,
                "token_type": "N_A",
                "expires_in": 300,
            }
        )
