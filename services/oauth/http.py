"""The HTTP client of the OAuth flow: every URL it calls is a URL a server handed us.

Discovery, registration, token, refresh and revocation requests go to URLs read from a server's
metadata, which a malicious server chooses. Each is checked by the SSRF guard before it is called
(`check`, naming the metadata field it came from) and the request is sent to the address that was
checked (address pinning, as McpSession does for a user's URL). Redirects are never followed: a
metadata or token endpoint that redirects is treated as not being there, so no request can be
bounced to another host.

Hosts that may be private: those in the `ai_mcp.allowed_hosts` list and, for a server an
administrator configured (not a user's), the host of the MCP server itself, since an intranet
server's authorization server is often on the same host. Cloud metadata addresses stay closed
whatever the lists say (url_guard).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

import httpx2

from ..address_pin import checked_pin
from ..errors import ConfigError, ErrorCode, OAuthError

_logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 15.0


class GuardedHttp:
    """Checks URLs against the SSRF guard and builds httpx2 clients that only reach checked hosts.

    httpx2, not httpx: the mcp SDK builds its OAuth requests (metadata, registration) as
    httpx2.Request, which an httpx client refuses, and authlib's OAuth client is an
    httpx2.AsyncClient where httpx2 is installed, which the SDK requires."""

    def __init__(self, allowed_hosts: Collection[str] = (), timeout: float = DEFAULT_TIMEOUT) -> None:
        self.allowed_hosts = tuple(allowed_hosts)
        self.timeout = timeout
        self._pins: dict[str, str | None] = {}

    async def check(self, url: str | None, field: str) -> str:
        """Raise OAuthError(OAUTH_FORBIDDEN_URL, field=...) unless `url` may be called; return it."""
        try:
            pin = await checked_pin(url, self.allowed_hosts)
        except ConfigError as exc:
            _logger.warning("OAuth URL refused: field=%s url=%s reason=%s", field, url, exc.problem)
            raise OAuthError(
                ErrorCode.OAUTH_FORBIDDEN_URL,
                f"The server's OAuth metadata gives {field} = {url}, which Odoo may not call: {exc.problem}",
                field=field,
            ) from None
        host = urlsplit(url or "").hostname or ""
        self._pins[host] = pin.address if pin is not None else None
        return url or ""

    async def _pin(self, request: httpx2.Request) -> None:
        host = request.url.host
        if host not in self._pins:
            # every URL is checked where it is read; this is the net under that rule
            raise OAuthError(ErrorCode.OAUTH_FORBIDDEN_URL, f"{request.url} was not checked before it was called.")
        address = self._pins[host]
        if address is not None:
            request.extensions = {**request.extensions, "sni_hostname": host}
            request.url = request.url.copy_with(host=address)

    def client_kwargs(self) -> dict[str, Any]:
        """What an httpx2.AsyncClient (or authlib's AsyncOAuth2Client, one of them) needs to go only
        where this guard allows."""
        return {
            "timeout": self.timeout,
            "follow_redirects": False,
            "event_hooks": {"request": [self._pin], "response": []},
        }

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(**self.client_kwargs())


def oauth_allowed_hosts(server_url: str | None, allowed_hosts: Collection[str], public_only: bool) -> tuple[str, ...]:
    """The hosts metadata URLs may reach beyond public ones: see the module docstring."""
    hosts = tuple(allowed_hosts)
    if not public_only and server_url:
        host = urlsplit(server_url).hostname
        if host:
            hosts += (host,)
    return hosts
