"""GuardedHttp on httpx2: the requests the mcp SDK builds (httpx2.Request) and authlib's token
requests go only to checked hosts, at the address that was checked, and never follow a redirect.
No network: DNS is answered by the event loop below, HTTP by a mock transport."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import pytest
from mcp.client.auth.utils import create_client_registration_request, create_oauth_metadata_request
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata

from services.errors import ErrorCode, OAuthError
from services.oauth import ClientRegistration, GuardedHttp, TokenSet
from services.oauth import client as oauth_client
from services.oauth.models import RegistrationKind

NAME = "as.pin.test"
ADDRESS = "127.0.0.7"


class FixedDnsLoop(asyncio.SelectorEventLoop):
    """An event loop whose DNS answers ADDRESS for NAME."""

    async def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host != NAME:
            return await super().getaddrinfo(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (ADDRESS, port or 0))]


def on_fixed_dns(make: Callable[[], Awaitable[Any]]) -> Any:
    with asyncio.Runner(loop_factory=FixedDnsLoop) as runner:
        return runner.run(make())


class Recording(GuardedHttp):
    """A guard whose clients answer from `answer` instead of the network, recording each request
    as it reaches the transport (after the guard's hooks)."""

    def __init__(self, answer: Callable[[httpx2.Request], httpx2.Response], **kwargs: Any) -> None:
        super().__init__([NAME], **kwargs)
        self.sent: list[httpx2.Request] = []

        def handler(request: httpx2.Request) -> httpx2.Response:
            self.sent.append(request)
            return answer(request)

        self.transport = httpx2.MockTransport(handler)

    def client_kwargs(self) -> dict[str, Any]:
        return {**super().client_kwargs(), "transport": self.transport}


def test_sdk_requests_go_to_the_checked_address_under_their_name() -> None:
    guard = Recording(lambda request: httpx2.Response(200, json={}))
    url = f"https://{NAME}:8443/.well-known/oauth-authorization-server"
    metadata = OAuthMetadata.model_validate(
        {
            "issuer": f"https://{NAME}",
            "authorization_endpoint": f"https://{NAME}/authorize",
            "token_endpoint": f"https://{NAME}/token",
            "registration_endpoint": f"https://{NAME}:8443/register",
        }
    )
    body = OAuthClientMetadata.model_validate(oauth_client.client_metadata("https://odoo.example/cb", "Odoo"))

    async def fetch() -> list[int]:
        await guard.check(url, "authorization_servers")
        async with guard.client() as client:
            answers = [await client.send(create_oauth_metadata_request(url))]
            request = create_client_registration_request(metadata, body, f"https://{NAME}")
            answers.append(await client.send(request))
        return [answer.status_code for answer in answers]

    assert on_fixed_dns(fetch) == [200, 200]
    for request in guard.sent:
        assert (request.url.host, request.url.port) == (ADDRESS, 8443)
        assert request.headers["host"] == f"{NAME}:8443"
        assert request.extensions["sni_hostname"] == NAME
    assert [r.url.path for r in guard.sent] == ["/.well-known/oauth-authorization-server", "/register"]


def test_a_url_not_checked_is_not_called() -> None:
    guard = Recording(lambda request: httpx2.Response(200))

    async def fetch() -> None:
        async with guard.client() as client:
            await client.send(create_oauth_metadata_request(f"https://{NAME}/.well-known/oauth-authorization-server"))

    with pytest.raises(OAuthError) as caught:
        on_fixed_dns(fetch)
    assert caught.value.code is ErrorCode.OAUTH_FORBIDDEN_URL and not guard.sent


def test_a_redirect_is_not_followed() -> None:
    guard = Recording(lambda request: httpx2.Response(302, headers={"Location": "http://169.254.169.254/latest/"}))
    url = f"https://{NAME}/.well-known/oauth-authorization-server"

    async def fetch() -> int:
        await guard.check(url, "authorization_servers")
        async with guard.client() as client:
            return (await client.send(create_oauth_metadata_request(url))).status_code

    assert on_fixed_dns(fetch) == 302
    assert len(guard.sent) == 1


def test_the_token_exchange_goes_to_the_checked_address_too() -> None:
    guard = Recording(
        lambda request: httpx2.Response(
            200, json={"access_token": "at", "token_type": "Bearer", "expires_in": 60, "refresh_token": "rt"}
        )
    )
    registration = ClientRegistration(
        kind=RegistrationKind.DCR, issuer=f"https://{NAME}", client_id="odoo", redirect_uri="https://odoo.example/cb"
    )
    tokens = TokenSet(access_token="old", refresh_token="rt0")  # type: ignore[arg-type]
    renewed = on_fixed_dns(
        lambda: oauth_client.refresh(tokens, f"https://{NAME}/token", "https://mcp.example/mcp", registration, guard)
    )
    assert renewed.access_token.get_secret_value() == "at"
    (request,) = guard.sent
    assert (request.url.host, request.headers["host"], request.extensions["sni_hostname"]) == (ADDRESS, NAME, NAME)
    assert b"grant_type=refresh_token" in request.content and b"resource=" in request.content


def test_a_metadata_address_is_refused_even_when_listed() -> None:
    guard = GuardedHttp(["169.254.169.254"])
    with pytest.raises(OAuthError) as caught:
        asyncio.run(guard.check("http://169.254.169.254/latest/token", "token_endpoint"))
    assert caught.value.code is ErrorCode.OAUTH_FORBIDDEN_URL and caught.value.field == "token_endpoint"
