"""Keeping an OAuth grant usable while calls run: refresh before expiry, once more on a 401.

A `TokenStore` is where one owner's tokens live (the Odoo layer keeps them as encrypted secrets;
tests keep them in memory). `RefreshingTokens` hands out a token, refreshing it first when it is
about to expire (clock skew tolerance), and refreshes again when the server refuses it.

A grant may have many holders at once: the turns of a team on a shared grant, in the threads of
one Odoo and in other workers. Refresh tokens rotate (OAuth 2.1 asks it of public clients), so a
refresh token spent by one holder is refused to the next, and the provider may treat its reuse as
a theft. So a grant is refreshed by one holder at a time: one per process here (`_Flights`), one
across processes by the store's `renew`, which locks the stored grant and reads it again. A holder
that finds the grant renewed since it read it uses the stored tokens and asks the provider nothing.

A refresh the provider refuses (a revoked or expired refresh token) drops the stored grant only if
it still holds the refused refresh token; that owner signs in again, nothing else is affected. A
grant another holder renewed meanwhile is kept and used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Protocol, TypeVar

from ..errors import AuthRequired, ErrorCode, McpError, OAuthError
from ..server_spec import AuthType, ServerSpec
from . import client as oauth_client
from .http import GuardedHttp
from .models import CLOCK_SKEW, ClientRegistration, TokenSet

_logger = logging.getLogger(__name__)

T = TypeVar("T")

# what a store runs on the grant it locked and read again: the tokens to keep (the ones it was
# given: nothing changes), or None when the provider refused the refresh token it was given
Renewal = Callable[[TokenSet | None], Awaitable[TokenSet | None]]


class TokenStore(Protocol):
    """One owner's tokens for one server."""

    @property
    def key(self) -> Hashable:
        """The grant: stores of one grant have equal keys, so its holders in a process take turns."""

    async def load(self) -> TokenSet | None: ...

    async def renew(self, renewal: Renewal) -> TokenSet | None:
        """Run `renewal` on the grant as stored, read again while it is locked against every other
        holder (other processes included, where there may be any), and keep what it returns before
        the lock is released. None from `renewal` drops the grant if it still holds the refresh
        token `renewal` was given (compare and delete). Returns the grant as then stored (None: no
        grant); an exception of `renewal` leaves the grant as it was and propagates."""


class _Flights:
    """One refresh per grant at a time in this process, whatever thread or event loop asks: a turn
    refreshes on the hub's loop, a test or a request on loops of their own. A waiter cancelled in
    line gives up its place; the holder's release wakes the others, on their own loops."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiting: dict[Hashable, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}

    @contextlib.asynccontextmanager
    async def one_at_a_time(self, key: Hashable) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        while True:
            with self._mutex:
                if key not in self._waiting:
                    self._waiting[key] = []
                    break
                turn: asyncio.Future[None] = loop.create_future()
                self._waiting[key].append((loop, turn))
            await turn
        try:
            yield
        finally:
            with self._mutex:
                waiting = self._waiting.pop(key)
            for other, turn in waiting:
                with contextlib.suppress(RuntimeError):  # that waiter's loop has closed
                    other.call_soon_threadsafe(_wake, turn)


def _wake(turn: asyncio.Future[None]) -> None:
    if not turn.done():
        turn.set_result(None)


_FLIGHTS = _Flights()


def renewed_since(stored: TokenSet, started_from: TokenSet) -> bool:
    """True when the grant was refreshed since a holder read `started_from`: its refresh token
    rotated or its access token changed. Not the expiry, which a store may keep rounded."""
    return (stored.refresh_token, stored.access_token) != (started_from.refresh_token, started_from.access_token)


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

    def refusal(self, spec: ServerSpec, used: TokenSet, exc: AuthRequired) -> McpError:
        """What to raise when the server refuses the token `used`: the sign-in it asks for (a
        step-up's, unless the grant already holds what it names)."""
        return step_up_refusal(spec, used, exc) if exc.step_up else exc

    async def current(self) -> TokenSet | None:
        """The tokens to call with, refreshed first when they expire within the skew."""
        tokens = await self.store.load()
        if tokens is not None and tokens.expiring(skew=self.skew):
            tokens = await self.refresh(tokens)
        return tokens

    async def refresh(self, started_from: TokenSet) -> TokenSet:
        """Tokens to use in place of `started_from` (expiring, or refused by the server): the
        stored ones when another holder renewed them meanwhile, else new ones from the provider.
        Raises OAuthError(OAUTH_REAUTH_REQUIRED) when the grant is gone or the provider refused it."""
        refusal: OAuthError | None = None

        async def renewal(stored: TokenSet | None) -> TokenSet | None:
            nonlocal refusal
            try:
                return await self.renew(stored, started_from)
            except OAuthError as exc:
                if exc.code is not ErrorCode.OAUTH_REAUTH_REQUIRED:
                    raise
                refusal = exc
                return None

        async with _FLIGHTS.one_at_a_time(self.store.key):
            tokens = await self.store.renew(renewal)
        if tokens is None:
            if refusal is not None:
                _logger.info("OAuth refresh refused, sign-in dropped: issuer=%s", self.registration.issuer)
                raise refusal
            raise OAuthError(ErrorCode.OAUTH_REAUTH_REQUIRED, "The sign-in was removed; sign in again.")
        if refusal is not None:
            _logger.info("OAuth refresh refused, the grant renewed meanwhile kept: issuer=%s", self.registration.issuer)
        return tokens

    async def renew(self, stored: TokenSet | None, started_from: TokenSet) -> TokenSet | None:
        """What a holder that started from `started_from` calls with, decided on the grant as
        `stored` now (locked against the other holders): nothing when there is none, the stored
        tokens when another holder renewed them since this one read them (even when they are short
        lived, within the skew: they are as new as a refresh would make them), else a refresh of
        the stored refresh token. Raises OAuthError."""
        if stored is None:
            return None
        if renewed_since(stored, started_from):
            _logger.info("OAuth grant renewed by another holder, used as stored: issuer=%s", self.registration.issuer)
            return stored
        tokens = await oauth_client.refresh(stored, self.token_endpoint, self.resource, self.registration, self.http)
        _logger.info("OAuth token refreshed: issuer=%s expires_at=%s", self.registration.issuer, tokens.expires_at)
        return tokens


async def with_token(
    spec: ServerSpec, tokens: RefreshingTokens | None, action: Callable[[ServerSpec], Awaitable[T]]
) -> T:
    """Run `action` with the spec carrying a current token; on a refusal refresh once and run it
    again. A step-up (403 insufficient_scope) is not refreshed: only a new sign-in widens scopes."""
    if spec.auth_type is not AuthType.OAUTH or tokens is None:
        return await action(spec)
    current = await _current(spec, tokens)
    try:
        return await action(_bearing(spec, current))
    except AuthRequired as exc:
        if exc.step_up:
            raise tokens.refusal(spec, current, exc) from None
        _logger.info("OAuth token refused, refreshing once: server=%s owner=%s", spec.label(), spec.token_owner)
        try:
            renewed = await tokens.refresh(current)
        except OAuthError as refused:
            raise _sign_in_again(spec, refused) from None
    try:
        return await action(_bearing(spec, renewed))
    except AuthRequired as exc:
        raise tokens.refusal(spec, renewed, exc) from None


def step_up_refusal(spec: ServerSpec, tokens: TokenSet, exc: AuthRequired) -> McpError:
    """What to raise for the refusal `exc` of a request made with `tokens`: a step-up's sign-in,
    unless the grant already holds every scope the challenge names: a new sign-in would get the
    same grant and the same refusal, and the user would be asked again and again, so the refusal
    is reported as such. A turn's calls and "Test connection" alike."""
    challenged = set((exc.scope or "").split())
    if not exc.step_up or not challenged or not challenged <= tokens.scopes():
        return exc
    _logger.warning(
        "OAuth step-up for scopes already granted, not asked again: server=%s owner=%s scope=%s",
        spec.label(),
        spec.token_owner,
        exc.scope,
    )
    return McpError(
        ErrorCode.MCP_AUTH_FAILED,
        f"{spec.name} refuses this request although the sign-in holds the permissions it asks for "
        f"({exc.scope}): signing in again would not change that. Ask the server's operator.",
    )


async def _current(spec: ServerSpec, tokens: RefreshingTokens) -> TokenSet:
    try:
        current = await tokens.current()
    except OAuthError as exc:
        raise _sign_in_again(spec, exc) from None
    if current is None:
        raise AuthRequired(spec.key, spec.name, owner=spec.token_owner)
    return current


def _bearing(spec: ServerSpec, tokens: TokenSet) -> ServerSpec:
    return spec.model_copy(update={"token": tokens.access_token, "dpop_key": tokens.dpop_key})


def _sign_in_again(spec: ServerSpec, exc: OAuthError) -> AuthRequired | OAuthError:
    if exc.code is ErrorCode.OAUTH_REAUTH_REQUIRED:
        return AuthRequired(spec.key, spec.name, f"{spec.name}: {exc.message}", owner=spec.token_owner)
    return exc
