"""Keeping an OAuth grant usable while calls run: refresh before expiry, once more on a 401.

A `TokenStore` is where one owner's tokens live (the Odoo layer keeps them as encrypted secrets;
tests keep them in memory). `RefreshingTokens` hands out a token, refreshing it first when it is
about to expire (clock skew tolerance), and refreshes again when the server refuses it. A refresh
the provider refuses (a revoked or expired refresh token) drops the stored tokens and becomes
AuthRequired: that owner signs in again, nothing else is affected.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from . import oauth_client
from .errors import AuthRequired, ErrorCode, OAuthError
from .oauth_http import GuardedHttp
from .oauth_models import CLOCK_SKEW, ClientRegistration, TokenSet
from .server_spec import AuthType, ServerSpec

_logger = logging.getLogger(__name__)

T = TypeVar("T")


class TokenStore(Protocol):
    """One owner's tokens for one server."""

    async def load(self) -> TokenSet | None: ...

    async def save(self, tokens: TokenSet) -> None: ...

    async def drop(self) -> None: ...


class RefreshingTokens:
    """The tokens of one owner for one server, refreshed as needed."""

    def __init__(
        self,
        store: TokenStore,
        registration: ClientRegistration,
        token_endpoint: str,
        resource: str,
        http: GuardedHttp,
        skew: float = CLOCK_SKEW,
    ) -> None:
        self.store = store
        self.registration = registration
        self.token_endpoint = token_endpoint
        self.resource = resource
        self.http = http
        self.skew = skew
        self._lock = asyncio.Lock()

    async def current(self) -> TokenSet | None:
        """The tokens to call with, refreshed first when they expire within the skew."""
        tokens = await self.store.load()
        if tokens is not None and tokens.expiring(skew=self.skew):
            tokens = await self.refresh(tokens)
        return tokens

    async def refresh(self, rejected: TokenSet) -> TokenSet:
        """New tokens in place of `rejected`; raises OAuthError(OAUTH_REAUTH_REQUIRED) after
        dropping the stored ones when the provider refuses."""
        async with self._lock:
            stored = await self.store.load()
            if stored is None:
                raise OAuthError(ErrorCode.OAUTH_REAUTH_REQUIRED, "The sign-in was removed; sign in again.")
            if stored.access_token.get_secret_value() != rejected.access_token.get_secret_value() and not stored.expiring(skew=self.skew):
                return stored  # another caller refreshed meanwhile: refresh tokens rotate, do not spend this one twice
            try:
                tokens = await oauth_client.refresh(stored, self.token_endpoint, self.resource, self.registration, self.http)
            except OAuthError as exc:
                if exc.code is ErrorCode.OAUTH_REAUTH_REQUIRED:
                    _logger.info("OAuth refresh refused, sign-in dropped: issuer=%s", self.registration.issuer)
                    await self.store.drop()
                raise
            await self.store.save(tokens)
            _logger.info("OAuth token refreshed: issuer=%s expires_at=%s", self.registration.issuer, tokens.expires_at)
            return tokens


async def with_token(spec: ServerSpec, tokens: RefreshingTokens | None, action: Callable[[ServerSpec], Awaitable[T]]) -> T:
    """Run `action` with the spec carrying a current token; on a refusal refresh once and run it
    again. A step-up (403 insufficient_scope) is not refreshed: only a new sign-in widens scopes."""
    if spec.auth_type is not AuthType.OAUTH or tokens is None:
        return await action(spec)
    current = await _current(spec, tokens)
    try:
        return await action(_bearing(spec, current))
    except AuthRequired as exc:
        if exc.step_up:
            raise
        _logger.info("OAuth token refused, refreshing once: server=%s owner=%s", spec.label(), spec.token_owner)
        try:
            renewed = await tokens.refresh(current)
        except OAuthError as refused:
            raise _sign_in_again(spec, refused) from None
        return await action(_bearing(spec, renewed))


async def _current(spec: ServerSpec, tokens: RefreshingTokens) -> TokenSet:
    try:
        current = await tokens.current()
    except OAuthError as exc:
        raise _sign_in_again(spec, exc) from None
    if current is None:
        raise AuthRequired(spec.key, spec.name, owner=spec.token_owner)
    return current


def _bearing(spec: ServerSpec, tokens: TokenSet) -> ServerSpec:
    return spec.model_copy(update={"token": tokens.access_token})


def _sign_in_again(spec: ServerSpec, exc: OAuthError) -> AuthRequired | OAuthError:
    if exc.code is ErrorCode.OAUTH_REAUTH_REQUIRED:
        return AuthRequired(spec.key, spec.name, f"{spec.name}: {exc.message}", owner=spec.token_owner)
    return exc
