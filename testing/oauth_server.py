"""A real OAuth-protected MCP server for tests, built with the mcp SDK's server-side auth.

MCPServer serves the authorization server (RFC 8414 metadata, dynamic client registration,
authorize, token, revoke) and the protected resource (RFC 9728 metadata, bearer checks) on one
127.0.0.1 port. The provider keeps everything in memory. `authorize` sends the browser to a
consent page that a test posts to, as a person would click "Allow", naming the account that
signs in; the page then redirects to the client's redirect URI with `code`, `state` and `iss`
(RFC 9207; `Switches.callback_iss` leaves it out).

It runs in a thread of the test process (`OAuthServer(...).start()`), so a test flips the
switches of `Switches` while it runs (a token endpoint that starts failing, refresh tokens
revoked behind the client's back) without restarting anything.

What the SDK does not do is added here: the client credentials grant of a company client
(`machine_clients`: a client secret, sent as client_secret_basic or client_secret_post, or a public
key that checks a private_key_jwt assertion whose audience is the issuer), client metadata
the JWT bearer grant (RFC 7523) of a workload identity or of an identity assertion grant (ID-JAG)
from an enterprise identity provider (`trusted_issuers`: the public key of each issuer it trusts; an
ID-JAG's client authenticates as a machine client), client metadata
documents (CIMD, the client id is an https URL whose document the server fetches), a per-tool scope that answers 403
insufficient_scope (MCPServer's scopes are for the whole server), the faults, one protocol
generation only (`era`), and a log of the JSON-RPC requests the MCP endpoint received with the
token each bore (`mcp_requests`), so a test counts what reached the server.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qs, unquote

import anyio
import httpx
import jwt
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from . import dpop_server
from .dpop_server import DpopLog
from .mcp_servers import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    MODERN_PROTOCOL_VERSIONS,
    header,
    legacy_only_asgi,
    modern_only_asgi,
    read_body,
    replay,
)
from .thread_server import ThreadServer

READ_SCOPE = "read"
ADMIN_SCOPE = "admin"
STEP_UP_TOOL = "admin_report"
FORBIDDEN_TOKEN_ENDPOINT = "http://169.254.169.254/latest/token"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG_TYPE = "oauth-id-jag+jwt"


@dataclass
class Switches:
    """What the server does; tests may change these while it runs."""

    dcr: bool = True
    cimd: bool = False
    token_lifetime: int = 3600
    refresh: bool = True
    refuse_tokens: bool = False
    token_status: int | None = None  # e.g. 500: the token endpoint answers this instead
    # metadata field -> URL the authorization server metadata advertises instead of its own
    metadata_override: dict[str, str] = field(default_factory=dict)
    # field -> value the registration answer says instead (a client registered otherwise than asked)
    registration_override: dict[str, Any] = field(default_factory=dict)
    # the issuer the metadata names (a mismatch test), and its answers' `iss` with it
    issuer_override: str | None = None
    # False: the authorization answers carry no `iss` (RFC 9207), as many providers' do not
    callback_iss: bool = True
    # a clock running this many seconds ahead of the client's (tokens expire earlier for it)
    clock_skew: int = 0
    # the person who allows every authorization at once, as if they pressed Allow on the consent
    # page: a browser tour's sign-in then runs in the browser itself, redirects and cookies included
    auto_consent_user: str | None = None
    # a refresh request waits until this is set: a test holds one holder's refresh in flight while
    # another holder of the grant reads it
    hold_refresh: threading.Event | None = None
    # False: a server of the 2025-03-26 MCP revision that publishes no OAuth metadata at all
    # (neither protected resource nor authorization server documents, no resource_metadata in its
    # 401): clients fall back to /authorize, /token and /register at its origin
    metadata: bool = True
    # the scope a call of STEP_UP_TOOL without the admin scope is challenged with: the whole set
    # it needs, or only the missing one (the client then asks for it and what it was granted)
    challenge_scope: str = f"{READ_SCOPE} {ADMIN_SCOPE}"
    # JSON-RPC method -> 401 (invalid_token) or 403 (insufficient_scope, `challenge_scope`): how
    # the MCP endpoint answers that method whatever the valid token it bears
    refused_methods: dict[str, int] = field(default_factory=dict)
    # False: token answers leave the scope out, as RFC 6749 (5.1) allows when it is the one asked for
    token_scope: bool = True
    # the metadata lists the client_credentials grant and private_key_jwt (the token endpoint takes
    # them from the clients of `MemoryProvider.machine_clients` whatever it lists)
    client_credentials: bool = False
    # DPoP (testing/dpop_server.py): the metadata offers ES256, a token request with a proof gets
    # tokens bound to its key, and the MCP endpoint takes those only with proofs of that key
    dpop: bool = False
    # the token endpoint / the MCP endpoint ask for a nonce (use_dpop_nonce) before taking a proof
    dpop_as_nonce: bool = False
    dpop_rs_nonce: bool = False
    # a new nonce for every request: no proof ever has the current one
    dpop_nonce_rotates: bool = False
    # the protected resource metadata says dpop_bound_access_tokens_required (RFC 9449 section 5.2)
    dpop_required: bool = False
    # the metadata lists the JWT bearer grant (the token endpoint takes it whatever it lists)
    jwt_bearer: bool = False


@dataclass
class MachineClient:
    """A company client of the client credentials grant: a secret, or a public key (PEM)."""

    secret: str | None = None
    public_key: str | None = None
    scopes: list[str] = field(default_factory=lambda: [READ_SCOPE])


@dataclass
class _Pending:
    client_id: str
    params: AuthorizationParams
    expires_at: float


class MemoryProvider:
    """OAuthAuthorizationServerProvider keeping clients, codes and tokens in memory."""

    def __init__(self, server: OAuthServer) -> None:
        self.server = server
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, _Pending] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.revoked: list[str] = []
        self.token_requests = 0
        self.refresh_requests = 0  # refresh_token grants asked for, refused ones included
        self.refresh_arrived = threading.Semaphore(0)  # released as each one arrives, before any hold
        self.cimd_fetches: list[str] = []
        self.machine_clients: dict[str, MachineClient] = {}
        # (client id, how it authenticated) of each client credentials token issued
        self.machine_tokens: list[tuple[str, str]] = []
        # issuer -> public key (PEM) of the JWTs the JWT bearer grant takes
        self.trusted_issuers: dict[str, str] = {}
        # the subject of each JWT bearer token issued
        self.jwt_bearer_tokens: list[str] = []

    @property
    def switches(self) -> Switches:
        return self.server.switches

    def now(self) -> float:
        return time.time() + self.switches.clock_skew

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id.startswith(("https://", "http://")):
            return await self._client_from_document(client_id) if self.switches.cimd else None
        return self.clients.get(client_id)

    async def _client_from_document(self, url: str) -> OAuthClientInformationFull | None:
        """A client id that is a URL names its metadata document (draft-ietf-oauth-client-id-metadata-document)."""
        self.cimd_fetches.append(url)
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(url)
        if response.status_code != 200:
            return None
        document = response.json()
        if document.get("client_id") != url:
            return None
        # a document does not limit scopes as a registration does: any scope this server knows
        return OAuthClientInformationFull.model_validate(
            {**document, "token_endpoint_auth_method": "none", "scope": f"{READ_SCOPE} {ADMIN_SCOPE}"}
        )

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource and params.resource != self.server.url:
            raise AuthorizeError("invalid_request", f"unknown resource {params.resource}")
        request_id = secrets.token_urlsafe(16)
        self.pending[request_id] = _Pending(client.client_id or "", params, time.time() + 600)
        if self.switches.auto_consent_user:
            return self.consent(request_id, self.switches.auto_consent_user, allow=True)
        return f"{self.server.base_url}/consent?request={request_id}"

    def consent(self, request_id: str, user: str, allow: bool) -> str:
        """The browser's answer on the consent page: the URL it is sent back to."""
        pending = self.pending.pop(request_id, None)
        if pending is None or pending.expires_at < time.time():
            raise KeyError(request_id)
        params = pending.params
        base = str(params.redirect_uri)
        iss = (self.switches.issuer_override or self.server.issuer) if self.switches.callback_iss else None
        if not allow:
            return construct_redirect_uri(base, error="access_denied", state=params.state, iss=iss)
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [READ_SCOPE],
            expires_at=time.time() + 300,
            client_id=pending.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=user,
        )
        return construct_redirect_uri(base, code=code, state=params.state, iss=iss)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(
            client.client_id or "", authorization_code.scopes, authorization_code.resource, authorization_code.subject
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        self.refresh_requests += 1
        self.refresh_arrived.release()
        if self.switches.hold_refresh is not None:
            await anyio.to_thread.run_sync(self.switches.hold_refresh.wait)
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        # rotation, as OAuth 2.1 asks of public clients: a refresh token is spent once, even by
        # two requests that both found it before either spent it
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        return self._issue(
            client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource, refresh_token.subject
        )

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None, refresh: bool = True
    ) -> OAuthToken:
        self.token_requests += 1
        access = f"at-{secrets.token_urlsafe(24)}"
        lifetime = self.switches.token_lifetime
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(self.now() + lifetime),
            resource=resource,
            subject=subject,
        )
        refresh_token = None
        if self.switches.refresh and refresh:
            refresh_token = f"rt-{secrets.token_urlsafe(24)}"
            self.refresh[refresh_token] = RefreshToken(
                token=refresh_token, client_id=client_id, scopes=scopes, resource=resource, subject=subject
            )
        scope = " ".join(scopes) if self.switches.token_scope else None
        return OAuthToken(access_token=access, expires_in=lifetime, scope=scope, refresh_token=refresh_token)

    def client_credentials(self, form: dict[str, str], authorization: str) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON answer) of a client credentials token request (RFC 6749 section 4.4)."""
        client_id, method, problem = self._machine_client(form, authorization)
        if problem:
            return 401, {"error": "invalid_client", "error_description": problem}
        client = self.machine_clients[client_id]
        asked = form.get("scope", "").split() or client.scopes
        if not set(asked) <= set(client.scopes):
            return 400, {"error": "invalid_scope", "error_description": f"{client_id} may not ask for {asked}"}
        if form.get("resource") and form["resource"] != self.server.url:
            return 400, {"error": "invalid_target", "error_description": f"unknown resource {form['resource']}"}
        self.machine_tokens.append((client_id, method))
        token = self._issue(client_id, asked, form.get("resource"), client_id, refresh=False)
        return 200, token.model_dump(mode="json", exclude_none=True)

    def jwt_bearer(self, form: dict[str, str], authorization: str) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON answer) of a JWT bearer token request (RFC 7523 section 2.1): a
        workload's JWT, or an ID-JAG whose client authenticates and is the one it names."""
        assertion = form.get("assertion", "")
        try:
            header, claims = (
                jwt.get_unverified_header(assertion),
                jwt.decode(assertion, options={"verify_signature": False}),
            )
        except jwt.PyJWTError as exc:
            return 400, {"error": "invalid_grant", "error_description": f"not a JWT: {exc}"}
        key = self.trusted_issuers.get(str(claims.get("iss", "")))
        if key is None:
            return 400, {"error": "invalid_grant", "error_description": f"untrusted issuer {claims.get('iss')}"}
        audience = [self.server.issuer, self.server.issuer.rstrip("/")]
        try:
            claims = jwt.decode(assertion, key, algorithms=["ES256", "RS256"], audience=audience, leeway=5)
        except jwt.PyJWTError as exc:
            return 400, {"error": "invalid_grant", "error_description": f"assertion refused: {exc}"}
        client_id = form.get("client_id", "")
        if header.get("typ") == ID_JAG_TYPE:
            client_id, _method, problem = self._machine_client(form, authorization)
            if problem:
                return 401, {"error": "invalid_client", "error_description": problem}
            if claims.get("client_id") != client_id or claims.get("resource") != self.server.url:
                return 400, {
                    "error": "invalid_grant",
                    "error_description": "the ID-JAG is for another client or resource",
                }
        asked = form.get("scope", "").split() or [READ_SCOPE]
        self.jwt_bearer_tokens.append(str(claims["sub"]))
        token = self._issue(client_id, asked, form.get("resource"), str(claims["sub"]), refresh=False)
        return 200, token.model_dump(mode="json", exclude_none=True)

    def _machine_client(self, form: dict[str, str], authorization: str) -> tuple[str, str, str | None]:
        """(client id, method, why it is refused or None)."""
        if authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            client_id, secret, method = unquote(client_id), unquote(secret), "client_secret_basic"
        elif form.get("client_assertion"):
            return self._asserted_client(form)
        else:
            client_id, secret, method = form.get("client_id", ""), form.get("client_secret", ""), "client_secret_post"
        client = self.machine_clients.get(client_id)
        if client is None or client.secret is None or not secrets.compare_digest(client.secret, secret):
            return client_id, method, "unknown client or wrong secret"
        return client_id, method, None

    def _asserted_client(self, form: dict[str, str]) -> tuple[str, str, str | None]:
        method = "private_key_jwt"
        if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return "", method, "wrong client_assertion_type"
        assertion = form["client_assertion"]
        client_id = str(jwt.decode(assertion, options={"verify_signature": False}).get("iss", ""))
        client = self.machine_clients.get(client_id)
        if client is None or client.public_key is None:
            return client_id, method, "unknown client"
        audience = [self.server.issuer, self.server.issuer.rstrip("/")]
        try:
            claims = jwt.decode(
                assertion, client.public_key, algorithms=["RS256", "ES256"], audience=audience, leeway=30
            )
        except jwt.PyJWTError as exc:
            return client_id, method, f"assertion refused: {exc}"
        if claims.get("sub") != client_id:
            return client_id, method, "the assertion's sub is not the client"
        return client_id, method, None

    async def load_access_token(self, token: str) -> AccessToken | None:
        if self.switches.refuse_tokens:
            return None
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < self.now()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.revoked.append(token.token)
        for store in (self.access, self.refresh):
            for key in [k for k, v in store.items() if v.subject == token.subject and v.client_id == token.client_id]:
                del store[key]

    def revoke_refresh_tokens(self) -> None:
        """Behind the client's back, as an admin of the provider would."""
        self.refresh.clear()

    def expire_access_tokens(self) -> None:
        for token in self.access.values():
            token.expires_at = int(self.now()) - 1


class _ClosedStreamNoise(logging.Filter):
    """mcp 1.x's server logs, as an ERROR with a traceback, a client closing its standalone GET
    stream when it ends the session, which every client does. The other test servers run in
    processes of their own; this one runs in the test's, where Odoo's runner fails a run on any
    ERROR line: this normal close is left out, every other record of the logger kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        closed = record.exc_info is not None and isinstance(record.exc_info[1], anyio.ClosedResourceError)
        return not (closed and record.getMessage().startswith("Error in standalone SSE writer"))


_NOISE = _ClosedStreamNoise()


class OAuthServer(ThreadServer):
    """The server in a thread of this process. `url` is the MCP endpoint (the protected resource)."""

    label = "OAuth test server"
    thread_name = "oauth-server"

    def __init__(
        self,
        transport: str = "streamable-http",
        switches: Switches | None = None,
        name: str = "oauth-test",
        issuer_slash: bool = True,
        era: str = "dual",
    ) -> None:
        """`issuer_slash`: the root issuer as mcp 1.x wrote it ("http://127.0.0.1:port/"), or
        without the slash, as mcp 2.x keeps a root URL given so. `era` (streamable HTTP): "dual"
        (the SDK's default, either generation as the client opens), "modern" (2026-07-28 only: a
        request without its MCP-Protocol-Version header is refused before the token is looked at)
        or "legacy" (the handshake only: a signed-in request at a 2026 revision is refused, so the
        client falls back to `initialize`)."""
        super().__init__()
        self.transport = transport
        self.era = era
        self.switches = switches or Switches()
        self.name = name
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.issuer = f"{self.base_url}/" if issuer_slash else self.base_url
        self.url = f"{self.base_url}/{'mcp' if transport == 'streamable-http' else 'sse'}"
        self.provider = MemoryProvider(self)
        self.metadata_misses: list[str] = []  # metadata documents asked for while `metadata` is off
        # (JSON-RPC method, bearer token or "") of each POST to the MCP endpoint, in order
        self.mcp_requests: list[tuple[str, str]] = []
        self.dpop = DpopLog()

    def start(self, wait: float = 20.0) -> Self:
        logging.getLogger("mcp.server.streamable_http").addFilter(_NOISE)
        return super().start(wait)

    def consent(self, authorize_url: str, user: str = "alice", allow: bool = True) -> str:
        """What a person does in the browser: open the authorization URL, follow it to the consent
        page, press Allow (or Deny) as `user`. Returns the redirect back to the client, unfollowed."""
        with httpx.Client(timeout=10) as http:
            response = http.get(authorize_url)
            if response.status_code != 302:
                raise RuntimeError(f"authorize answered {response.status_code}: {response.text[:300]}")
            consent_page = response.headers["location"]
            if not consent_page.startswith(f"{self.base_url}/consent"):
                raise RuntimeError(f"authorize refused: {consent_page}")
            page = http.get(consent_page)
            page.raise_for_status()
            request_id = parse_qs(httpx.URL(consent_page).query.decode())["request"][0]
            answer = http.post(
                f"{self.base_url}/consent",
                data={"request": request_id, "user": user, "action": "allow" if allow else "deny"},
            )
            if answer.status_code != 302:
                raise RuntimeError(f"consent answered {answer.status_code}: {answer.text[:300]}")
            return answer.headers["location"]

    # -- the application --------------------------------------------------------------------

    def _app(self) -> Any:
        mcp = MCPServer(
            self.name,
            log_level="WARNING",
            auth_server_provider=self.provider,
            auth=AuthSettings(
                issuer_url=self.issuer,  # type: ignore[arg-type]
                resource_server_url=self.url,  # type: ignore[arg-type]
                validate_token_resource=True,
                required_scopes=[READ_SCOPE],
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=[READ_SCOPE, ADMIN_SCOPE], default_scopes=[READ_SCOPE]
                ),
                revocation_options=RevocationOptions(enabled=True),
            ),
        )
        self._tools(mcp)
        self._consent_routes(mcp)
        app = mcp.streamable_http_app() if self.transport == "streamable-http" else mcp.sse_app()
        return self._faults(app)

    @staticmethod
    def _tools(mcp: MCPServer) -> None:
        @mcp.tool()
        def whoami() -> str:
            """Say who signed in."""
            token = get_access_token()
            return token.subject or "" if token else ""

        @mcp.tool()
        def echo(text: str) -> str:
            """Return the text unchanged."""
            return text

        # a prompt and a resource that, like whoami, say whose grant read them
        @mcp.prompt(title="My notes")
        def my_notes() -> str:
            """Summarize the notes of whoever signed in."""
            token = get_access_token()
            return f"Summarize the notes of {token.subject if token else '?'}."

        @mcp.resource("notes://mine", title="My notes", mime_type="text/plain")
        def my_notes_resource() -> str:
            token = get_access_token()
            return f"notes of {token.subject if token else '?'}"

        @mcp.tool(name=STEP_UP_TOOL)
        def admin_report() -> str:
            """A report that needs the admin scope."""
            token = get_access_token()
            return f"report for {token.subject if token else '?'} with {' '.join(token.scopes) if token else ''}"

    def _consent_routes(self, mcp: MCPServer) -> None:
        provider = self.provider

        @mcp.custom_route("/consent", methods=["GET"])
        async def consent_page(request: Request) -> Response:
            request_id = request.query_params.get("request", "")
            pending = provider.pending.get(request_id)
            if pending is None:
                return HTMLResponse("<p>Unknown request</p>", status_code=400)
            scopes = " ".join(pending.params.scopes or [READ_SCOPE])
            return HTMLResponse(
                "<form method='post' action='/consent'>"
                f"<p>{html.escape(pending.client_id)} asks for {html.escape(scopes)}</p>"
                f"<input type='hidden' name='request' value='{html.escape(request_id)}'/>"
                "<input name='user' value='alice'/>"
                "<button name='action' value='allow'>Allow</button><button name='action' "
                "value='deny'>Deny</button></form>"
            )

        @mcp.custom_route("/consent", methods=["POST"])
        async def consent_answer(request: Request) -> Response:
            form = await request.form()
            try:
                target = provider.consent(
                    str(form.get("request", "")), str(form.get("user", "alice")), form.get("action") == "allow"
                )
            except KeyError:
                return HTMLResponse("<p>Unknown or expired request</p>", status_code=400)
            return RedirectResponse(target, status_code=302)

    def _faults(self, app: Any) -> Any:
        """ASGI wrapper for what the SDK's routes do not offer: CIMD and overrides in the
        metadata or the registration answer, DCR off, a failing token endpoint, and step-up for
        one tool."""
        server = self

        async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return await app(scope, receive, send)
            path = scope["path"]
            switches = server.switches
            if not switches.metadata:
                if path.startswith(_METADATA_PATHS):
                    server.metadata_misses.append(path)
                    return await Response(status_code=404)(scope, receive, send)
                send = _without_resource_metadata(send)
            if path == "/.well-known/oauth-authorization-server":
                return await server._metadata(app, scope, receive, send)
            if path == "/register" and not switches.dcr:
                return await Response(status_code=404)(scope, receive, send)
            if path == "/register" and switches.registration_override:
                return await server._registration(app, scope, receive, send)
            if path == "/token" and switches.token_status:
                return await JSONResponse({"error": "server_error"}, status_code=switches.token_status)(
                    scope, receive, send
                )
            if switches.dpop:
                scope = await server._dpop(app, scope, receive, send)
                if scope is None:
                    return None
            if path == "/token" and scope["method"] == "POST":
                body = await read_body(receive)
                form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                grants = {
                    "client_credentials": server.provider.client_credentials,
                    JWT_BEARER: server.provider.jwt_bearer,
                }
                if form.get("grant_type") in grants:
                    status, answer = grants[form["grant_type"]](form, header(scope, b"authorization") or "")
                    headers = {"Cache-Control": "no-store"}
                    return await JSONResponse(answer, status_code=status, headers=headers)(scope, receive, send)
                receive = replay(body, receive)
            if scope["method"] == "POST" and path in ("/mcp", "/messages/"):
                return await server._mcp_post(app, scope, receive, send)
            if path == "/mcp" and server.era == "modern":
                return await modern_only_asgi(app)(scope, receive, send)
            if scope["method"] == "POST" and path == "/revoke":
                return await _public_client_revocation(app, scope, receive, send)
            return await app(scope, receive, send)

        return wrapped

    async def _metadata(self, app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        def change(metadata: dict[str, Any]) -> None:
            if self.switches.cimd:
                metadata["client_id_metadata_document_supported"] = True
            if not self.switches.dcr:
                metadata.pop("registration_endpoint", None)
            if self.switches.client_credentials:
                metadata["grant_types_supported"] = [*metadata["grant_types_supported"], "client_credentials"]
                metadata["token_endpoint_auth_methods_supported"] = [
                    *metadata["token_endpoint_auth_methods_supported"],
                    "private_key_jwt",
                ]
                metadata["token_endpoint_auth_signing_alg_values_supported"] = ["RS256", "ES256"]
            if self.switches.dpop:
                metadata["dpop_signing_alg_values_supported"] = ["ES256"]
            if self.switches.jwt_bearer:
                metadata["grant_types_supported"] = [*metadata["grant_types_supported"], JWT_BEARER]
            if self.switches.issuer_override:
                metadata["issuer"] = self.switches.issuer_override
            metadata.update(self.switches.metadata_override)

        await _rewritten(app, scope, receive, send, change)

    async def _registration(self, app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        def change(client: dict[str, Any]) -> None:
            client.update(self.switches.registration_override)

        await _rewritten(app, scope, receive, send, change)

    async def _mcp_post(self, app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """A JSON-RPC request to the MCP endpoint: logged, then refused as the era and the switches
        say (before the SDK's own bearer check where a real server of that era refuses first)."""
        body = await read_body(receive)
        receive = replay(body, receive)
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = None
        method = str(payload.get("method", "")) if isinstance(payload, dict) else ""
        params = payload.get("params") if isinstance(payload, dict) else None
        bearer = _bearer(scope)
        self.mcp_requests.append((method, bearer))
        version = header(scope, b"mcp-protocol-version")
        if self.era == "modern" and version not in MODERN_PROTOCOL_VERSIONS:
            return await modern_only_asgi(app)(scope, receive, send)
        token = await self.provider.load_access_token(bearer) if bearer else None
        if token is None:
            return await app(scope, receive, send)  # the SDK's 401
        if self.era == "legacy" and version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return await legacy_only_asgi(app)(scope, receive, send)
        refusal = self._refusal(method, params if isinstance(params, dict) else {}, token)
        await (refusal or app)(scope, receive, send)

    def _refusal(self, method: str, params: dict[str, Any], token: AccessToken) -> Response | None:
        """The answer to a valid token the server refuses anyway: a method the switches refuse, or
        a call of STEP_UP_TOOL without the admin scope (403 insufficient_scope at the HTTP level,
        as the MCP spec's scope challenge says)."""
        status = self.switches.refused_methods.get(method)
        if status == 401:
            challenge = f'Bearer error="invalid_token", resource_metadata="{self._resource_metadata_url()}"'
            return JSONResponse({"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": challenge})
        step_up = method == "tools/call" and params.get("name") == STEP_UP_TOOL and ADMIN_SCOPE not in token.scopes
        if status == 403 or step_up:
            challenge = (
                f'Bearer error="insufficient_scope", scope="{self.switches.challenge_scope}", '
                f'resource_metadata="{self._resource_metadata_url()}", '
                f'error_description="{method} needs the {self.switches.challenge_scope} scope"'
            )
            return JSONResponse(
                {"error": "insufficient_scope"}, status_code=403, headers={"WWW-Authenticate": challenge}
            )
        return None

    async def _dpop(self, app: Any, scope: dict[str, Any], receive: Any, send: Any) -> dict[str, Any] | None:
        """The DPoP checks of the token and MCP endpoints: the request to pass on, or None when it
        was answered here."""
        if scope["path"] == "/token" and scope["method"] == "POST":
            await self._dpop_token(app, scope, receive, send)
            return None
        if scope["path"] in ("/mcp", "/sse", "/messages/") and header(scope, b"authorization"):
            return await self._dpop_resource(scope, receive, send)
        if scope["path"].startswith("/.well-known/oauth-protected-resource"):

            def change(metadata: dict[str, Any]) -> None:
                metadata["dpop_signing_alg_values_supported"] = ["ES256"]
                if self.switches.dpop_required:
                    metadata["dpop_bound_access_tokens_required"] = True

            await _rewritten(app, scope, receive, send, change)
            return None
        return scope

    async def _dpop_token(self, app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The token endpoint with DPoP: a request without a proof gets bearer tokens (but for a
        refresh token bound to a key); with one, the proof is checked, a nonce asked for first where
        the switches say, and the tokens issued are bound to the proof's key."""
        body = await read_body(receive)
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        log = self.dpop
        proof = header(scope, b"dpop")
        bound_to = log.bound.get(form.get("refresh_token", ""))
        jkt = None
        if proof is None and bound_to is not None:
            return await dpop_server.token_refusal(log, "invalid_dpop_proof", "the refresh token is bound to a key")(
                scope, receive, send
            )
        if proof is not None:
            jkt, problem = dpop_server.check_proof(proof, "POST", f"{self.base_url}/token", log)
            if problem:
                return await dpop_server.token_refusal(log, "invalid_dpop_proof", problem)(scope, receive, send)
            if self.switches.dpop_as_nonce and dpop_server.nonce_missing(proof, log, self.switches.dpop_nonce_rotates):
                log.nonce_challenges.append("as")
                refusal = dpop_server.token_refusal(log, "use_dpop_nonce", "a nonce is needed", log.nonce)
                return await refusal(scope, receive, send)
            if bound_to is not None and bound_to != jkt:
                return await dpop_server.token_refusal(log, "invalid_dpop_proof", "the refresh token's key differs")(
                    scope, receive, send
                )
            log.token_proofs.append(form.get("grant_type", ""))
        grants = {"client_credentials": self.provider.client_credentials, JWT_BEARER: self.provider.jwt_bearer}
        if form.get("grant_type") in grants:
            status, answer = grants[form["grant_type"]](form, header(scope, b"authorization") or "")
            answer = dpop_server.bind(log, answer, jkt) if jkt and status == 200 else answer
            return await JSONResponse(answer, status_code=status, headers={"Cache-Control": "no-store"})(
                scope, receive, send
            )

        def change(answer: dict[str, Any]) -> None:
            if jkt:
                answer.update(dpop_server.bind(log, answer, jkt))

        await _rewritten(app, scope, replay(body, receive), send, change)

    async def _dpop_resource(self, scope: dict[str, Any], receive: Any, send: Any) -> dict[str, Any] | None:
        """A request to the MCP endpoint that bears a token: a bound one is taken only with a proof
        of its key (then handed to the SDK as a bearer token); None when it was answered here."""
        log = self.dpop
        scheme, token = dpop_server.authorization(scope)
        log.schemes.append(scheme)
        jkt = log.bound.get(token)
        if jkt is None:
            return scope
        if scheme.lower() != "dpop":
            refusal = dpop_server.resource_refusal(log, "invalid_token", f"a DPoP-bound token sent as {scheme}")
            await refusal(scope, receive, send)
            return None
        proof = header(scope, b"dpop")
        url = f"{self.base_url}{scope['path']}"
        proven, problem = dpop_server.check_proof(proof, scope["method"], url, log, access_token=token)
        if problem or proven != jkt:
            refusal = dpop_server.resource_refusal(
                log, "invalid_dpop_proof", problem or "the proof's key is not the token's"
            )
            await refusal(scope, receive, send)
            return None
        assert proof is not None
        if self.switches.dpop_rs_nonce and dpop_server.nonce_missing(proof, log, self.switches.dpop_nonce_rotates):
            log.nonce_challenges.append("rs")
            await dpop_server.resource_refusal(log, "use_dpop_nonce", "a nonce is needed", log.nonce)(
                scope, receive, send
            )
            return None
        return dpop_server.as_bearer(scope, token)

    def _resource_metadata_url(self) -> str:
        return f"{self.base_url}/.well-known/oauth-protected-resource/{self.url.rsplit('/', 1)[1]}"


_METADATA_PATHS = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)


async def _rewritten(
    app: Any, scope: dict[str, Any], receive: Any, send: Any, change: Callable[[dict[str, Any]], None]
) -> None:
    """The app's JSON answer, changed by `change` in place."""
    captured: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def capture(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            captured.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, capture)
    document = json.loads(b"".join(chunks))
    change(document)
    await JSONResponse(document, status_code=captured.get("status", 200))(scope, receive, send)


def _without_resource_metadata(send: Any) -> Any:
    """A 401 as a server of the 2025-03-26 revision answers it: a bare Bearer challenge, without
    the RFC 9728 resource_metadata parameter that revision did not know."""

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            bare = b'Bearer error="invalid_token"'
            headers = [(k, bare if k.lower() == b"www-authenticate" else v) for k, v in message.get("headers", [])]
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _public_client_revocation(app: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
    """mcp's revocation handler (1.30 and 2.3 alike) requires a client_secret field even from a public
    client (token_endpoint_auth_method none), which sends none (RFC 7009 section 2.1): give it an empty one."""
    body = await read_body(receive)
    if b"client_secret=" not in body:
        body += b"&client_secret="
    await app(_with_length(scope, len(body)), replay(body, receive), send)


def _with_length(scope: dict[str, Any], length: int) -> dict[str, Any]:
    headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}


def _bearer(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value.lower().startswith(b"bearer "):
            return value[7:].decode()
    return ""
