"""Holders of one grant refreshing it at the same moment, against the real test server, whose
refresh tokens rotate (a refresh token is spent once): one refresh reaches the provider, every
holder goes on with its answer, and nobody has to sign in again."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from services.errors import OAuthError
from services.oauth import GuardedHttp, TokenSet
from services.oauth.tokens import Renewal
from testing.oauth_server import OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore, SignedIn, run, sign_in

# a lifetime inside the refresh tolerance (60 s): every holder finds the token expiring
SHORT = 30


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


@pytest.fixture
def server() -> Iterator[OAuthServer]:
    with OAuthServer(switches=Switches(token_lifetime=SHORT)) as server:
        yield server


class WatchedStore(MemoryStore):
    """A MemoryStore that tells the test each time a holder has read the grant."""

    def __init__(self, tokens: TokenSet | None) -> None:
        super().__init__(tokens)
        self.read = threading.Semaphore(0)

    async def load(self) -> TokenSet | None:
        tokens = await super().load()
        self.read.release()
        return tokens


def test_two_threads_refreshing_one_grant_make_one_refresh_and_keep_it(server: OAuthServer, guard: GuardedHttp) -> None:
    signed = sign_in(server, guard)
    store = WatchedStore(signed.tokens)
    # the first refresh to reach the provider waits there until both holders have read the grant,
    # so both start from the same expiring tokens whatever the threads' timing
    hold = server.switches.hold_refresh = threading.Event()
    results: dict[str, TokenSet | OAuthError] = {}

    def holder(name: str) -> None:
        try:
            results[name] = asyncio.run(signed.source(guard, store).current())  # type: ignore[arg-type]
        except OAuthError as exc:
            results[name] = exc

    threads = [threading.Thread(target=holder, args=(name,)) for name in ("turn A", "turn B")]
    for thread in threads:
        thread.start()
    for _ in threads:
        assert store.read.acquire(timeout=30), "a holder never read the grant"
    hold.set()
    for thread in threads:
        thread.join(30)

    assert not [r for r in results.values() if isinstance(r, OAuthError)], results
    assert server.provider.refresh_requests == 1
    assert store.tokens is not None and store.tokens != signed.tokens, "the grant is kept, renewed"
    assert results["turn A"] == results["turn B"] == store.tokens


def test_two_tasks_of_one_loop_make_one_refresh(server: OAuthServer, guard: GuardedHttp) -> None:
    signed = sign_in(server, guard)
    store = MemoryStore(signed.tokens)

    async def both() -> list[TokenSet | None]:
        return list(await asyncio.gather(signed.source(guard, store).current(), signed.source(guard, store).current()))

    first, second = run(both())
    assert first == second == store.tokens and store.tokens is not None
    assert server.provider.refresh_requests == 1 and store.saves == 1


def test_a_refused_spent_token_keeps_the_grant_renewed_elsewhere(server: OAuthServer, guard: GuardedHttp) -> None:
    signed = sign_in(server, guard)
    renewed = renewed_elsewhere(signed, guard)
    store = Renewing(signed.tokens, renewed)

    kept = run(signed.source(guard, store).refresh(signed.tokens))

    assert server.provider.refresh_requests == 2, "this holder's refresh reached the provider and was refused"
    assert kept == renewed and store.tokens == renewed, "the refusal dropped nothing newer: the renewed grant is used"


class Renewing(MemoryStore):
    """A store whose grant another process renews (to `renewed`) while this holder is at the provider."""

    def __init__(self, tokens: TokenSet, renewed: TokenSet) -> None:
        super().__init__(tokens)
        self.renewed = renewed

    async def renew(self, renewal: Renewal) -> TokenSet | None:
        async def meanwhile(stored: TokenSet | None) -> TokenSet | None:
            self.tokens = self.renewed
            return await renewal(stored)

        return await super().renew(meanwhile)


def renewed_elsewhere(signed: SignedIn, guard: GuardedHttp) -> TokenSet:
    """The grant as another process refreshed it: the signed-in refresh token is spent."""
    return run(signed.source(guard, MemoryStore(signed.tokens)).refresh(signed.tokens))
