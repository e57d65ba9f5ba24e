"""Where and how to sign in to an MCP server: the discovery of the MCP authorization spec.

401 with WWW-Authenticate -> protected resource metadata (RFC 9728) -> authorization server
metadata (RFC 8414, then OpenID Connect discovery), its issuer checked. A server of the 2025-03-26
MCP revision may publish neither: its origin's /authorize, /token and /register are then used, as
that revision says. The candidate URLs, the
parsing and the issuer comparison are the mcp SDK's (mcp.client.auth.utils); what is ours is
that each URL goes through the SSRF guard (GuardedHttp) before it is called, since the header
and the documents come from the server, and that every endpoint the metadata names is checked
as soon as it is read, so a refusal names the field.

Written by hand because the SDK's OAuthClientProvider runs the whole flow inside one httpx2 auth
generator, with the browser redirect and the callback in the same process; Odoo's callback lands
in another request, often another worker.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import httpx2
from mcp import types as mcp_types
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    get_client_metadata_scopes,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    issuers_match,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import LATEST_MODERN_VERSION
from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode, OAuthError
from ..manifest import CLIENT_INFO
from .http import GuardedHttp

_logger = logging.getLogger(__name__)

# endpoints of the authorization server metadata a client may call, checked when read
AS_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint")


class Challenge(BaseModel):
    """What a 401/403 answer's WWW-Authenticate header says (RFC 6750, RFC 9728)."""

    model_config = ConfigDict(frozen=True)

    status: int
    error: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None

    @classmethod
    def from_response(cls, response: httpx2.Response) -> Challenge:
        return cls(
            status=response.status_code,
            error=extract_field_from_www_auth(response, "error"),
            scope=extract_scope_from_www_auth(response),
            resource_metadata=extract_resource_metadata_from_www_auth(response),
        )

    @property
    def insufficient_scope(self) -> bool:
        return self.status == 403 and self.error == "insufficient_scope"


class Discovery(BaseModel):
    """Everything the sign-in needs to know about a server, as found."""

    model_config = ConfigDict(frozen=True)

    server_url: str
    resource: str
    protected_resource: ProtectedResourceMetadata | None
    authorization_server: OAuthMetadata
    issuer: str
    scope: str | None
    # no metadata was published: the endpoints and the issuer (the MCP server's origin) are the
    # 2025-03-26 revision's defaults, not the authorization server's word
    defaults: bool = False

    @property
    def supports_cimd(self) -> bool:
        return self.authorization_server.client_id_metadata_document_supported is True

    def endpoint(self, field: str) -> str | None:
        value = getattr(self.authorization_server, field)
        return str(value) if value else None


# The probe is the request a client of 2026-07-28 opens with, `server/discover` with that revision's
# header and envelope. A server of that revision may refuse anything else (a `ping`, which it no
# longer has, a request without the header) for that alone, before it looks at the token, and its
# 401 would never be seen. A server of an earlier revision checks the token first: its answer to
# the probe is a 401 too.
_PROBE = {
    "jsonrpc": "2.0",
    "id": 0,
    **mcp_types.DiscoverRequest(
        params=mcp_types.RequestParams(
            _meta={
                mcp_types.PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
                mcp_types.CLIENT_INFO_META_KEY: CLIENT_INFO.model_dump(mode="json", exclude_none=True),
                mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
            }
        )
    ).model_dump(by_alias=True, mode="json", exclude_none=True),
}
_PROBE_HEADERS = {
    "Accept": "application/json, text/event-stream",
    MCP_PROTOCOL_VERSION_HEADER: LATEST_MODERN_VERSION,
    MCP_METHOD_HEADER: "server/discover",
}


async def probe(server_url: str, http: GuardedHttp, sse: bool = False) -> Challenge | None:
    """Ask the server without a token; its 401 carries where to look. None when it does not refuse."""
    await http.check(server_url, "url")
    async with http.client() as client:
        try:
            if sse:
                async with client.stream("GET", server_url, headers={"Accept": "text/event-stream"}) as response:
                    return Challenge.from_response(response) if response.status_code in (401, 403) else None
            response = await client.post(server_url, json=_PROBE, headers=_PROBE_HEADERS)
        except httpx2.HTTPError as exc:
            raise OAuthError(
                ErrorCode.OAUTH_METADATA_NOT_FOUND, f"Cannot reach {server_url}: {exc}", field="url"
            ) from None
    return Challenge.from_response(response) if response.status_code in (401, 403) else None


async def discover(
    server_url: str, http: GuardedHttp, challenge: Challenge | None = None, sse: bool = False, pkce: bool = True
) -> Discovery:
    """Find the authorization server of the MCP server at `server_url`. Raises OAuthError.
    `pkce`: the sign-in is an authorization code's, which must have PKCE S256 (a company client's
    client credentials grant has no authorization code to protect)."""
    if challenge is None:
        challenge = await probe(server_url, http, sse=sse)
    www_auth_url = challenge.resource_metadata if challenge else None
    protected = await _protected_resource(server_url, www_auth_url, http)
    resource = resource_url_from_server_url(server_url)
    if protected is not None:
        if not check_resource_allowed(resource, str(protected.resource)):
            raise OAuthError(
                ErrorCode.OAUTH_METADATA_INVALID,
                f"The protected resource metadata names {protected.resource}, not this server ({resource}).",
                field="resource",
            )
        resource = str(protected.resource)
        if protected.jwks_uri:
            await http.check(str(protected.jwks_uri), "jwks_uri")
    auth_server_url = str(protected.authorization_servers[0]) if protected else None
    # default endpoints only for a server that asked for a sign-in: one that did not may not use OAuth at all
    metadata, defaults = await _authorization_server(auth_server_url, server_url, http, defaults=challenge is not None)
    issuer = str(metadata.issuer)
    for field in AS_ENDPOINTS:
        value = getattr(metadata, field)
        if value:
            await http.check(str(value), field)
    if pkce and "S256" not in (metadata.code_challenge_methods_supported or []):
        # MCP authorization: a client must refuse to go on without PKCE S256
        raise OAuthError(
            ErrorCode.OAUTH_METADATA_INVALID,
            "The authorization server does not offer PKCE with S256, which the MCP specification requires.",
            field="code_challenge_methods_supported",
        )
    scope = get_client_metadata_scopes(challenge.scope if challenge else None, protected, metadata)
    _logger.info("OAuth discovered: server=%s issuer=%s resource=%s scope=%s", server_url, issuer, resource, scope)
    return Discovery(
        server_url=server_url,
        resource=resource,
        protected_resource=protected,
        authorization_server=metadata,
        issuer=issuer,
        scope=scope,
        defaults=defaults,
    )


async def _fetch(client: httpx2.AsyncClient, http: GuardedHttp, url: str, field: str) -> httpx2.Response:
    """One metadata document candidate, its URL checked first; `field` names it in a refusal."""
    await http.check(url, field)
    try:
        return await client.send(create_oauth_metadata_request(url))
    except httpx2.HTTPError as exc:
        raise OAuthError(ErrorCode.OAUTH_METADATA_NOT_FOUND, f"Cannot fetch {url}: {exc}", field=field) from None


async def _protected_resource(
    server_url: str, www_auth_url: str | None, http: GuardedHttp
) -> ProtectedResourceMetadata | None:
    urls = build_protected_resource_metadata_discovery_urls(www_auth_url, server_url)
    async with http.client() as client:
        for url in urls:
            response = await _fetch(client, http, url, "resource_metadata")
            metadata = await handle_protected_resource_response(response)
            if metadata is not None:
                return metadata
    # servers of the 2025-03-26 revision publish no resource metadata: the authorization server
    # is then found at the MCP server's origin, from its metadata or, without any, by default paths
    return None


async def _authorization_server(
    auth_server_url: str | None, server_url: str, http: GuardedHttp, defaults: bool
) -> tuple[OAuthMetadata, bool]:
    """The authorization server's metadata, and whether it is the default endpoints'."""
    urls = build_oauth_authorization_server_metadata_discovery_urls(auth_server_url, server_url)
    async with http.client() as client:
        for url in urls:
            response = await _fetch(client, http, url, "authorization_servers")
            go_on, metadata = await handle_auth_metadata_response(response)
            if metadata is not None:
                if auth_server_url is not None:
                    _check_issuer(metadata, auth_server_url)
                return metadata, False
            if not go_on:
                raise OAuthError(
                    ErrorCode.OAUTH_METADATA_NOT_FOUND,
                    f"The authorization server answered HTTP {response.status_code} at {url}.",
                    field="authorization_servers",
                )
    if auth_server_url is None and defaults:
        return _default_endpoints(server_url), True
    raise OAuthError(
        ErrorCode.OAUTH_METADATA_NOT_FOUND,
        f"No OAuth authorization server metadata was found for {server_url} (tried {', '.join(urls)}).",
        field="authorization_servers",
    )


def _check_issuer(metadata: OAuthMetadata, expected: str) -> None:
    """The metadata must name the authorization server the resource metadata points to (RFC 8414
    section 3.3: simple string comparison), a root issuer with and without its trailing slash
    counting as one (the SDK's `issuers_match`). mcp 1.x wrote every root URL with the slash, so a
    resource server on it names "https://as.example/" for an authorization server whose issuer is
    "https://as.example": that pair signed in before and still does. The issuer kept is the
    metadata's own spelling, the one the provider puts in its answers' `iss` (RFC 9207)."""
    if not issuers_match(str(metadata.issuer), expected):
        raise OAuthError(
            ErrorCode.OAUTH_METADATA_INVALID,
            f"The authorization server's metadata names the issuer {metadata.issuer}, not {expected} "
            "where the server's resource metadata points.",
            field="issuer",
        )


def _default_endpoints(server_url: str) -> OAuthMetadata:
    """The authorization server of a server of the 2025-03-26 MCP revision that publishes no
    metadata: that revision has clients use /authorize, /token and /register at the MCP server's
    origin (its path dropped). It also requires PKCE of every client, so S256 is taken as offered.
    The endpoints are checked by the SSRF guard as read metadata is (`discover`)."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    _logger.info("OAuth metadata not published, default endpoints used: server=%s origin=%s", server_url, origin)
    return OAuthMetadata.model_validate(
        {
            "issuer": origin,
            "authorization_endpoint": f"{origin}/authorize",
            "token_endpoint": f"{origin}/token",
            "registration_endpoint": f"{origin}/register",
            "code_challenge_methods_supported": ["S256"],
        }
    )
