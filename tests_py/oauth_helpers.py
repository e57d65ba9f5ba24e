"""The browser's side of an OAuth sign-in, over real HTTP, and an in-memory token store."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from services.oauth import ClientRegistration, GuardedHttp, RefreshingTokens, TokenSet, discover
from services.oauth import client as oauth_client
from services.oauth.discovery import Discovery
from services.oauth.tokens import Renewal
from testing.oauth_server import OAuthServer

# Nothing listens there: the test reads the redirect the consent page answers, as a browser would follow it.
CALLBACK = "http://127.0.0.1:9/ai_mcp/oauth/callback"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class MemoryStore:
    """A TokenStore in memory. It locks nothing: two holders renewing at once both run their
    renewal, as two Odoo workers would without the row lock, so what keeps them apart is the
    process's one refresh per grant and the compare and delete of a refused refresh token."""

    def __init__(self, tokens: TokenSet | None = None) -> None:
        self.tokens = tokens
        self.saves = 0

    @property
    def key(self) -> Hashable:
        return id(self)

    async def load(self) -> TokenSet | None:
        return self.tokens

    async def renew(self, renewal: Renewal) -> TokenSet | None:
        stored = self.tokens
        kept = await renewal(stored)
        if kept is None:
            if stored is not None and self.tokens is not None and self.tokens.refresh_token == stored.refresh_token:
                self.tokens = None
        elif kept is not stored:
            self.tokens = kept
            self.saves += 1
        return self.tokens


@dataclass
class SignedIn:
    discovery: Discovery
    registration: ClientRegistration
    tokens: TokenSet
    callback_params: dict[str, str]
    authorize_url: str

    def source(self, http: GuardedHttp, store: MemoryStore | None = None) -> RefreshingTokens:
        store = store or MemoryStore(self.tokens)
        return RefreshingTokens(
            store, self.registration, self.discovery.endpoint("token_endpoint") or "", self.discovery.resource, http
        )


def sign_in(
    server: OAuthServer,
    http: GuardedHttp,
    user: str = "alice",
    scope: str | None = None,
    registration: ClientRegistration | None = None,
    metadata_url: str | None = None,
    granted: str | None = None,
    dpop_bound: bool = False,
) -> SignedIn:
    """`scope`: what to ask for (a step-up's challenge); `granted`: the scope of the grant a
    step-up widens; `dpop_bound`: the grant bound to a DPoP key."""
    discovery = run(discover(server.url, http, sse=server.transport == "sse"))
    if registration is None:
        registration = run(oauth_client.register(discovery, http, CALLBACK, "Odoo test", metadata_url=metadata_url))
    url, pending = run(
        oauth_client.start_authorization(
            discovery, registration, http, scope=scope, granted=granted, dpop_bound=dpop_bound
        )
    )
    back = server.consent(url, user=user)
    assert back.startswith(CALLBACK), back
    params = dict(parse_qsl(urlsplit(back).query))
    code = oauth_client.read_callback(params, pending)
    tokens = run(oauth_client.exchange_code(code, pending, registration, http))
    return SignedIn(discovery, registration, tokens, params, url)
