"""What goes wrong in an OAuth sign-in, against the real test server: each failure is refused with
a code (and the field at fault), and nothing else breaks."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services.errors import AuthRequired, ErrorCode, OAuthError
from services.mcp import McpHub
from services.oauth import GuardedHttp, discover, oauth_allowed_hosts
from services.oauth import client as oauth_client
from services.server_spec import build_server_spec
from testing.mcp_servers import free_port, serve_http
from testing.oauth_server import OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore, run, sign_in


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


@pytest.fixture
def server() -> Iterator[OAuthServer]:
    with OAuthServer() as server:
        yield server


def spec_for(server: OAuthServer):  # type: ignore[no-untyped-def]
    return build_server_spec(key="srv", name="Notes", url=server.url, auth_type="oauth", token_owner="a")


def test_authorization_server_down(guard: GuardedHttp) -> None:
    with pytest.raises(OAuthError) as caught:
        run(discover(f"http://127.0.0.1:{free_port()}/mcp", guard))
    assert caught.value.code is ErrorCode.OAUTH_METADATA_NOT_FOUND and caught.value.field == "url"


def test_authorization_server_down_at_refresh_keeps_the_sign_in(guard: GuardedHttp, hub: McpHub) -> None:
    server = OAuthServer().start()
    signed = sign_in(server, guard)
    store = MemoryStore(signed.tokens)
    server.stop()
    with pytest.raises(OAuthError) as caught:
        run(signed.source(guard, store).refresh(signed.tokens))
    assert caught.value.code is ErrorCode.OAUTH_TOKEN_ERROR
    assert store.tokens == signed.tokens  # a provider that is down is no reason to sign in again


def test_token_endpoint_500(server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    signed = sign_in(server, guard)
    store = MemoryStore(signed.tokens)
    source = signed.source(guard, store)
    server.switches.token_status = 500
    server.provider.expire_access_tokens()
    with pytest.raises(OAuthError) as caught:
        hub.run(hub.acall_tool(spec_for(server), "whoami", {}, tokens=source))
    assert caught.value.code is ErrorCode.OAUTH_TOKEN_ERROR and "HTTP 500" in caught.value.message
    assert store.tokens == signed.tokens

    server.switches.token_status = None  # the provider is back: the same grant works again
    assert hub.run(hub.acall_tool(spec_for(server), "whoami", {}, tokens=source)).parts[0].text == "alice"


def test_token_endpoint_500_at_sign_in(server: OAuthServer, guard: GuardedHttp) -> None:
    server.switches.token_status = 500
    with pytest.raises(OAuthError) as caught:
        sign_in(server, guard)
    assert caught.value.code is ErrorCode.OAUTH_TOKEN_ERROR and caught.value.field == "token_endpoint"


def test_refusing_every_token_asks_for_a_sign_in_after_one_refresh(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    signed = sign_in(server, guard)
    store = MemoryStore(signed.tokens)
    server.switches.refuse_tokens = True
    with pytest.raises(AuthRequired):
        hub.run(hub.acall_tool(spec_for(server), "whoami", {}, tokens=signed.source(guard, store)))
    assert store.saves == 1  # refreshed once, not in a loop


@pytest.mark.parametrize(
    ("field", "url"),
    [
        ("token_endpoint", "http://169.254.169.254/latest/token"),
        ("authorization_endpoint", "http://10.0.0.5/authorize"),
        ("registration_endpoint", "http://[::ffff:169.254.169.254]/register"),
        ("revocation_endpoint", "http://metadata.google.internal/revoke"),
        ("token_endpoint", "http://0.0.0.0:8069/token"),
    ],
)
def test_metadata_pointing_at_a_forbidden_address_is_refused_naming_the_field(
    field: str, url: str, guard: GuardedHttp
) -> None:
    with OAuthServer(switches=Switches(metadata_override={field: url})) as server:
        with pytest.raises(OAuthError) as caught:
            run(discover(server.url, guard))
    assert caught.value.code is ErrorCode.OAUTH_FORBIDDEN_URL
    assert caught.value.field == field and field in caught.value.message


def test_a_user_server_may_not_reach_loopback_through_its_metadata() -> None:
    with OAuthServer() as server:
        # an admin's server on 127.0.0.1: its own host is allowed, nothing else private
        assert oauth_allowed_hosts(server.url, (), public_only=False) == ("127.0.0.1",)
        with pytest.raises(OAuthError) as caught:
            run(discover(server.url, GuardedHttp(oauth_allowed_hosts(server.url, (), public_only=True))))
    assert caught.value.code is ErrorCode.OAUTH_FORBIDDEN_URL and caught.value.field == "url"


class RebindingLoop(asyncio.SelectorEventLoop):
    """An event loop whose DNS answers for `name` as a hostile DNS server would: 127.0.0.1 (where
    the test server is) until `rebound()`, the cloud metadata address after."""

    def __init__(self, name: str, rebound: Callable[[], bool]) -> None:
        super().__init__()
        self.name = name
        self.rebound = rebound

    async def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host != self.name:
            return await super().getaddrinfo(host, port, *args, **kwargs)
        address = "169.254.169.254" if self.rebound() else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port or 0))]


def test_a_default_endpoint_resolving_to_a_forbidden_address_is_refused(guard: GuardedHttp) -> None:
    with OAuthServer(switches=Switches(metadata=False)) as server:
        # the server's name leads to it while its metadata is looked for, then to the cloud
        # metadata address when the default endpoints at its origin are checked
        url = server.url.replace("127.0.0.1", "mcp.rebind.test")
        looked_for = "/.well-known/oauth-authorization-server"
        rebinding = RebindingLoop("mcp.rebind.test", lambda: looked_for in server.metadata_misses)
        with asyncio.Runner(loop_factory=lambda: rebinding) as runner:
            with pytest.raises(OAuthError) as caught:
                runner.run(discover(url, guard))
    assert looked_for in server.metadata_misses, "the default endpoints are checked after the metadata was looked for"
    assert caught.value.code is ErrorCode.OAUTH_FORBIDDEN_URL
    assert caught.value.field == "authorization_endpoint" and "169.254.169.254" in caught.value.message
    assert not server.provider.clients, "nothing was registered"


def test_a_server_that_asks_for_no_sign_in_gets_no_default_endpoints(guard: GuardedHttp) -> None:
    with serve_http("streamable-http") as plain:
        with pytest.raises(OAuthError) as caught:
            run(discover(plain.url, guard))
    assert caught.value.code is ErrorCode.OAUTH_METADATA_NOT_FOUND and caught.value.field == "authorization_servers"


def test_issuer_mismatch_is_refused(guard: GuardedHttp) -> None:
    with OAuthServer(switches=Switches(issuer_override="http://127.0.0.1:1/")) as server:
        with pytest.raises(OAuthError) as caught:
            run(discover(server.url, guard))
    assert caught.value.code is ErrorCode.OAUTH_METADATA_INVALID and caught.value.field == "issuer"


def test_no_pkce_s256_is_refused(guard: GuardedHttp) -> None:
    with OAuthServer(switches=Switches(metadata_override={"code_challenge_methods_supported": ["plain"]})) as server:  # type: ignore[dict-item]
        with pytest.raises(OAuthError) as caught:
            run(discover(server.url, guard))
    assert caught.value.field == "code_challenge_methods_supported"


def _pending(server: OAuthServer, guard: GuardedHttp):  # type: ignore[no-untyped-def]
    discovery = run(discover(server.url, guard))
    registration = run(oauth_client.register(discovery, guard, "http://127.0.0.1:9/cb", "Odoo"))
    url, pending = run(oauth_client.start_authorization(discovery, registration, guard))
    return url, pending


def test_callback_checks(server: OAuthServer, guard: GuardedHttp) -> None:
    url, pending = _pending(server, guard)
    good = {"code": "c", "state": pending.state, "iss": server.issuer}
    assert oauth_client.read_callback(good, pending) == "c"

    cases = [
        ({**good, "state": "another-state-of-32-characters!!"}, ErrorCode.OAUTH_STATE_INVALID, None),
        ({**good, "iss": "https://evil.example/"}, ErrorCode.OAUTH_STATE_INVALID, "iss"),
        ({"state": pending.state, "error": "access_denied", "iss": server.issuer}, ErrorCode.OAUTH_ACCESS_DENIED, None),
        ({"state": pending.state}, ErrorCode.OAUTH_STATE_INVALID, None),
    ]
    for params, code, field in cases:
        with pytest.raises(OAuthError) as caught:
            oauth_client.read_callback(params, pending)
        assert caught.value.code is code and caught.value.field == field, params
    with pytest.raises(OAuthError) as caught:
        oauth_client.read_callback(good, pending, now=time.time() + 3600)
    assert "expired" in caught.value.message


def test_declining_at_the_provider_comes_back_as_access_denied(server: OAuthServer, guard: GuardedHttp) -> None:
    from urllib.parse import parse_qsl, urlsplit

    url, pending = _pending(server, guard)
    back = server.consent(url, allow=False)
    with pytest.raises(OAuthError) as caught:
        oauth_client.read_callback(dict(parse_qsl(urlsplit(back).query)), pending)
    assert caught.value.code is ErrorCode.OAUTH_ACCESS_DENIED


def test_a_code_is_single_use(server: OAuthServer, guard: GuardedHttp) -> None:
    from urllib.parse import parse_qsl, urlsplit

    discovery = run(discover(server.url, guard))
    registration = run(oauth_client.register(discovery, guard, "http://127.0.0.1:9/cb", "Odoo"))
    url, pending = run(oauth_client.start_authorization(discovery, registration, guard))
    code = oauth_client.read_callback(dict(parse_qsl(urlsplit(server.consent(url)).query)), pending)
    run(oauth_client.exchange_code(code, pending, registration, guard))
    with pytest.raises(OAuthError) as caught:
        run(oauth_client.exchange_code(code, pending, registration, guard))
    assert caught.value.code is ErrorCode.OAUTH_TOKEN_ERROR


def test_an_answer_names_the_issuer_exactly(server: OAuthServer, guard: GuardedHttp) -> None:
    _url, pending = _pending(server, guard)
    assert pending.issuer == server.issuer == f"{server.base_url}/" and not pending.iss_required
    # RFC 9207 compares as plain strings: the root issuer without its slash is not the one asked
    for iss in (server.base_url, server.issuer.upper(), f"{server.issuer}x"):
        with pytest.raises(OAuthError) as caught:
            oauth_client.read_callback({"code": "c", "state": pending.state, "iss": iss}, pending)
        assert caught.value.code is ErrorCode.OAUTH_STATE_INVALID and caught.value.field == "iss", iss
        assert f"comes from {iss}, not from {server.issuer}" in caught.value.message


def test_a_provider_announcing_iss_must_send_it(guard: GuardedHttp) -> None:
    from urllib.parse import parse_qsl, urlsplit

    announced = {"authorization_response_iss_parameter_supported": True}
    with OAuthServer(switches=Switches(metadata_override=announced, callback_iss=False)) as server:  # type: ignore[arg-type]
        url, pending = _pending(server, guard)
        assert pending.iss_required
        params = dict(parse_qsl(urlsplit(server.consent(url)).query))
        assert "iss" not in params and params["code"]
        with pytest.raises(OAuthError) as caught:
            oauth_client.read_callback(params, pending)
        assert caught.value.code is ErrorCode.OAUTH_STATE_INVALID and caught.value.field == "iss"
        assert "does not say which provider sent it" in caught.value.message

        # with `iss`, the same provider's answer signs in
        server.switches.callback_iss = True
        signed = sign_in(server, guard)
        assert signed.callback_params["iss"] == server.issuer and signed.tokens.access_token


def test_an_answer_without_iss_is_taken_from_a_provider_that_does_not_announce_it(
    server: OAuthServer, guard: GuardedHttp
) -> None:
    server.switches.callback_iss = False
    signed = sign_in(server, guard)
    assert "iss" not in signed.callback_params and signed.tokens.access_token


@pytest.mark.parametrize("announced", [True, False, None])
def test_the_answer_issuer_check_is_the_sdks(announced: bool | None) -> None:
    from mcp.client.auth import OAuthFlowError
    from mcp.client.auth.utils import validate_authorization_response_iss
    from mcp.shared.auth import OAuthMetadata

    from services.oauth import PendingAuthorization

    for issuer in ("https://as.example", "https://as.example/", "https://as.example/tenant"):
        metadata = OAuthMetadata.model_validate(
            {
                "issuer": issuer,
                "authorization_endpoint": "https://as.example/authorize",
                "token_endpoint": "https://as.example/token",
                "authorization_response_iss_parameter_supported": announced,
            }
        )
        pending = PendingAuthorization(
            state="s" * 32,
            code_verifier="v",  # type: ignore[arg-type]
            redirect_uri="https://odoo.example/cb",
            resource="https://mcp.example/mcp",
            issuer=str(metadata.issuer),
            iss_required=announced is True,
            token_endpoint="https://as.example/token",
            created_at=0,
            expires_at=time.time() + 60,
        )
        for iss in (None, "", issuer, issuer.rstrip("/"), f"{issuer.rstrip('/')}/", "https://other.example"):
            try:
                validate_authorization_response_iss(iss, metadata)
                sdk_refuses = False
            except OAuthFlowError:
                sdk_refuses = True
            try:
                oauth_client.check_answer_issuer(iss, pending)
                we_refuse = False
            except OAuthError:
                we_refuse = True
            assert we_refuse == sdk_refuses, (issuer, iss, announced)


@pytest.mark.parametrize(
    "answer",
    [
        {"token_endpoint_auth_method": "private_key_jwt"},  # Odoo holds no key to sign with
        {"token_endpoint_auth_method": "client_secret_post", "client_secret": None},  # a secret method, no secret
    ],
)
def test_a_registration_odoo_cannot_use_is_refused_when_made(guard: GuardedHttp, answer: dict[str, Any]) -> None:
    with OAuthServer(switches=Switches(registration_override=answer)) as server:
        discovery = run(discover(server.url, guard))
        with pytest.raises(OAuthError) as caught:
            run(oauth_client.register(discovery, guard, "http://127.0.0.1:9/cb", "Odoo"))
    assert caught.value.code is ErrorCode.OAUTH_REGISTRATION_FAILED and caught.value.field == "registration_endpoint"
    assert "token_endpoint_auth_method" in caught.value.message or "client_secret" in caught.value.message


def test_without_metadata_the_answer_may_name_the_origin_either_way() -> None:
    from services.oauth import PendingAuthorization

    pending = PendingAuthorization(
        state="s" * 32,
        code_verifier="v",  # type: ignore[arg-type]
        redirect_uri="https://odoo.example/cb",
        resource="https://mcp.example/mcp",
        issuer="https://mcp.example",
        issuer_assumed=True,
        token_endpoint="https://mcp.example/token",
        created_at=0,
        expires_at=time.time() + 60,
    )
    for iss in (None, "https://mcp.example", "https://mcp.example/"):
        oauth_client.check_answer_issuer(iss, pending)
    for iss in ("https://mcp.example/tenant", "https://other.example/", "http://mcp.example"):
        with pytest.raises(OAuthError) as caught:
            oauth_client.check_answer_issuer(iss, pending)
        assert caught.value.field == "iss", iss
