"""OAuth sign-in to a real OAuth-protected MCP server (testing/oauth_server.py): the browser side
runs over real HTTP (authorize redirect, consent form, redirect to the callback), nothing mocked."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp.shared.auth import OAuthClientInformationFull

from services.errors import AuthRequired, ErrorCode, OAuthError
from services.mcp import McpHub
from services.oauth import ClientRegistration, GuardedHttp, discover
from services.oauth import client as oauth_client
from services.oauth.models import RegistrationKind
from services.server_spec import ServerSpec, build_server_spec
from testing.json_document import serve_document
from testing.oauth_server import OAuthServer, Switches
from tests_py.oauth_helpers import CALLBACK, MemoryStore, run, sign_in


@pytest.fixture(params=["streamable-http", "sse"])
def server(request: pytest.FixtureRequest) -> Iterator[OAuthServer]:
    with OAuthServer(request.param) as server:
        yield server


@pytest.fixture
def http_server() -> Iterator[OAuthServer]:
    with OAuthServer() as server:
        yield server


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


def oauth_spec(server: OAuthServer, owner: str | None = None) -> ServerSpec:
    transport = "sse" if server.transport == "sse" else "streamable_http"
    return build_server_spec(
        key="srv", name="Notes", transport=transport, url=server.url, auth_type="oauth", token_owner=owner
    )


def test_sign_in_by_dynamic_registration_then_tools_run_as_that_user(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    signed = sign_in(server, guard, user="alice")

    query = parse_qs(urlsplit(signed.authorize_url).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["resource"] == [server.url]
    assert query["redirect_uri"] == [CALLBACK]
    assert signed.registration.kind is RegistrationKind.DCR
    assert signed.callback_params["iss"] == server.issuer
    assert signed.tokens.scope == "read" and signed.tokens.refresh_token is not None

    source = signed.source(guard)
    result = hub.run(hub.acall_tool(oauth_spec(server, "a"), "whoami", {}, tokens=source))
    assert result.parts[0].text == "alice"


def test_without_a_token_the_server_asks_for_a_sign_in(server: OAuthServer, hub: McpHub) -> None:
    with pytest.raises(AuthRequired) as caught:
        hub.run(hub.alist_tools(oauth_spec(server, "a")))
    assert caught.value.code is ErrorCode.MCP_AUTH_REQUIRED and not caught.value.step_up
    assert caught.value.as_dict()["server"] == "Notes"


def test_client_metadata_document_is_the_client_id_when_the_server_supports_it(guard: GuardedHttp, hub: McpHub) -> None:
    with OAuthServer(switches=Switches(cimd=True, dcr=False)) as server:
        with serve_document(
            "/ai_mcp/oauth/client-metadata.json",
            lambda url: oauth_client.client_metadata(CALLBACK, "Odoo test", client_id=url),
        ) as document_url:
            signed = sign_in(server, guard, metadata_url=document_url)
        assert signed.registration.kind is RegistrationKind.CIMD
        assert signed.registration.client_id == document_url
        assert server.provider.cimd_fetches and not server.provider.clients
        result = hub.run(hub.acall_tool(oauth_spec(server), "whoami", {}, tokens=signed.source(guard)))
        assert result.parts[0].text == "alice"


def test_without_registration_an_entered_client_id_is_needed(guard: GuardedHttp) -> None:
    with OAuthServer(switches=Switches(dcr=False)) as server:
        discovery = run(discover(server.url, guard))
        with pytest.raises(OAuthError) as caught:
            run(oauth_client.register(discovery, guard, CALLBACK, "Odoo"))
        assert caught.value.code is ErrorCode.OAUTH_REGISTRATION_FAILED and caught.value.field == "client_id"

        # what the admin obtained from the provider's console
        server.provider.clients["odoo-client"] = OAuthClientInformationFull(
            client_id="odoo-client",
            client_secret="s3cret",
            token_endpoint_auth_method="client_secret_post",
            redirect_uris=[CALLBACK],
            scope="read admin",  # type: ignore[list-item]
        )
        registration = run(
            oauth_client.register(discovery, guard, CALLBACK, "Odoo", client_id="odoo-client", client_secret="s3cret")
        )
        assert registration.kind is RegistrationKind.MANUAL
        signed = sign_in(server, guard, registration=registration)
        assert signed.tokens.access_token.get_secret_value().startswith("at-")


def test_a_token_about_to_expire_is_refreshed_before_the_call(guard: GuardedHttp, hub: McpHub) -> None:
    # the provider's clock runs an hour ahead of ours: only expires_in counts, never its clock
    with OAuthServer(switches=Switches(token_lifetime=30, clock_skew=3600)) as server:
        signed = sign_in(server, guard)
        store = MemoryStore(signed.tokens)
        source = signed.source(guard, store)
        result = hub.run(hub.acall_tool(oauth_spec(server), "whoami", {}, tokens=source))
        assert result.parts[0].text == "alice"
        # 30 s left is within the 60 s tolerance: refreshed first, the old token never sent
        assert store.saves == 1
        assert store.tokens is not None and store.tokens.access_token != signed.tokens.access_token
        assert server.provider.token_requests == 2


def test_a_refused_token_is_refreshed_once_and_the_call_made_again(
    http_server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    signed = sign_in(http_server, guard)
    store = MemoryStore(signed.tokens)
    source = signed.source(guard, store)
    spec = oauth_spec(http_server, "a")
    assert hub.run(hub.acall_tool(spec, "echo", {"text": "one"}, tokens=source)).parts[0].text == "one"
    http_server.provider.expire_access_tokens()  # the provider ends it early; our clock says it is valid

    assert hub.run(hub.acall_tool(spec, "echo", {"text": "two"}, tokens=source)).parts[0].text == "two"
    assert store.saves == 1


def test_a_revoked_refresh_token_asks_that_user_to_sign_in_again_and_nothing_else(
    http_server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    alice = sign_in(http_server, guard, user="alice")
    bob = sign_in(http_server, guard, user="bob", registration=alice.registration)
    alice_store, bob_store = MemoryStore(alice.tokens), MemoryStore(bob.tokens)
    alice_source, bob_source = alice.source(guard, alice_store), bob.source(guard, bob_store)
    assert (
        hub.run(hub.acall_tool(oauth_spec(http_server, "bob"), "whoami", {}, tokens=bob_source)).parts[0].text == "bob"
    )
    bob_session = hub.pool.get("srv@bob")

    # alice's grant dies at the provider: her access token ends, her refresh token is refused
    for token, access in list(http_server.provider.access.items()):
        if access.subject == "alice":
            del http_server.provider.access[token]
    for token, refresh in list(http_server.provider.refresh.items()):
        if refresh.subject == "alice":
            del http_server.provider.refresh[token]

    with pytest.raises(AuthRequired) as caught:
        hub.run(hub.acall_tool(oauth_spec(http_server, "alice"), "whoami", {}, tokens=alice_source))
    assert caught.value.owner == "alice" and "sign in again" in caught.value.message
    assert alice_store.tokens is None
    # bob's session was neither dropped nor reopened
    assert (
        hub.run(hub.acall_tool(oauth_spec(http_server, "bob"), "whoami", {}, tokens=bob_source)).parts[0].text == "bob"
    )
    assert hub.pool.get("srv@bob") is bob_session


def test_sessions_are_pooled_per_token_owner(http_server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    alice = sign_in(http_server, guard, user="alice")
    bob = sign_in(http_server, guard, user="bob", registration=alice.registration)
    for owner, signed in (("1", alice), ("2", bob), ("1", alice)):
        result = hub.run(hub.acall_tool(oauth_spec(http_server, owner), "whoami", {}, tokens=signed.source(guard)))
        assert result.parts[0].text == ("alice" if owner == "1" else "bob")
    assert hub.pool.get("srv@1") is not hub.pool.get("srv@2")
    assert hub.pool.opened == 2

    # refreshing alice's token replaces her session only
    bob_session = hub.pool.get("srv@2")
    store = MemoryStore(alice.tokens)
    renewed = run(alice.source(guard, store).refresh(alice.tokens))
    result = hub.run(
        hub.acall_tool(oauth_spec(http_server, "1").model_copy(update={"token": renewed.access_token}), "whoami", {})
    )
    assert result.parts[0].text == "alice"
    assert hub.pool.get("srv@2") is bob_session and bob_session is not None and bob_session.alive


def test_insufficient_scope_asks_for_a_wider_sign_in(http_server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    signed = sign_in(http_server, guard)
    spec = oauth_spec(http_server, "a")
    with pytest.raises(AuthRequired) as caught:
        hub.run(hub.acall_tool(spec, "admin_report", {}, tokens=signed.source(guard)))
    assert caught.value.step_up and caught.value.scope == "read admin"
    assert http_server.provider.token_requests == 1  # a step-up is a new consent, not a refresh

    wider = sign_in(http_server, guard, scope=caught.value.scope, registration=signed.registration)
    assert wider.tokens.scopes() == {"read", "admin"}
    result = hub.run(hub.acall_tool(spec, "admin_report", {}, tokens=wider.source(guard)))
    assert result.parts[0].text == "report for alice with read admin"


def test_sign_out_revokes_at_the_provider(http_server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    signed = sign_in(http_server, guard)
    assert run(
        oauth_client.revoke(signed.tokens, signed.discovery.endpoint("revocation_endpoint"), signed.registration, guard)
    )
    assert http_server.provider.revoked
    with pytest.raises(AuthRequired):
        hub.run(hub.acall_tool(oauth_spec(http_server), "whoami", {}, tokens=signed.source(guard, MemoryStore(None))))


def test_a_2025_03_26_server_without_metadata_signs_in_at_default_endpoints(guard: GuardedHttp, hub: McpHub) -> None:
    with OAuthServer(switches=Switches(metadata=False)) as server:
        signed = sign_in(server, guard, user="alice")

        looked_for = {"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server"}
        assert looked_for <= set(server.metadata_misses)
        fields = ("authorization_endpoint", "token_endpoint", "registration_endpoint")
        endpoints = [signed.discovery.endpoint(f) for f in fields]
        assert endpoints == [f"{server.base_url}/authorize", f"{server.base_url}/token", f"{server.base_url}/register"]
        assert signed.registration.kind is RegistrationKind.DCR
        assert signed.registration.client_id in server.provider.clients
        assert signed.authorize_url.startswith(f"{server.base_url}/authorize?")
        result = hub.run(hub.acall_tool(oauth_spec(server, "a"), "whoami", {}, tokens=signed.source(guard)))
        assert result.parts[0].text == "alice"


def test_secrets_stay_out_of_reprs(http_server: OAuthServer, guard: GuardedHttp) -> None:
    signed = sign_in(http_server, guard)
    shown = repr(signed.tokens) + repr(signed.registration)
    assert signed.tokens.access_token.get_secret_value() not in shown
    assert signed.tokens.refresh_token is not None and signed.tokens.refresh_token.get_secret_value() not in shown


def test_registration_kinds_are_ordered_entered_then_cimd_then_dcr() -> None:
    assert oauth_client.usable_metadata_url("https://odoo.example/ai_mcp/oauth/client-metadata.json")
    assert oauth_client.usable_metadata_url("http://127.0.0.1:8069/ai_mcp/oauth/client-metadata.json")
    assert not oauth_client.usable_metadata_url("http://odoo.example/ai_mcp/oauth/client-metadata.json")
    assert not oauth_client.usable_metadata_url("https://odoo.example/")
    ClientRegistration(kind=RegistrationKind.MANUAL, issuer="https://as/", client_id="x", redirect_uri=CALLBACK)


@pytest.mark.parametrize("slash", [True, False])
def test_a_root_issuer_is_the_same_with_or_without_its_slash(guard: GuardedHttp, slash: bool) -> None:
    # the resource metadata names the root issuer as the server is configured; the authorization
    # server's metadata spells it the other way, as a resource server on mcp 1.x and an
    # authorization server on anything else do: they are one server, as they were before
    with OAuthServer(issuer_slash=slash) as server:
        other_spelling = server.base_url if slash else f"{server.base_url}/"
        server.switches.issuer_override = other_spelling
        signed = sign_in(server, guard)
        # the issuer kept is the authorization server's own, the one its answers carry in `iss`
        assert signed.discovery.issuer == other_spelling == signed.callback_params["iss"]
        assert signed.tokens.access_token

        server.switches.issuer_override = f"{server.base_url}/tenant"  # a path is another issuer
        with pytest.raises(OAuthError) as caught:
            run(discover(server.url, guard))
        assert caught.value.code is ErrorCode.OAUTH_METADATA_INVALID and caught.value.field == "issuer"


def test_a_root_issuer_without_its_slash_is_kept_so(guard: GuardedHttp) -> None:
    with OAuthServer(issuer_slash=False) as server:
        signed = sign_in(server, guard)
        assert signed.discovery.issuer == server.base_url == signed.callback_params["iss"]


def test_a_registration_stored_with_the_old_root_issuer_spelling_is_kept() -> None:
    # mcp 1.x stored "https://as.example/"; mcp 2.x reads that provider's issuer as it is written
    assert oauth_client.same_issuer("https://as.example/", "https://as.example")
    assert oauth_client.same_issuer("https://as.example", "https://as.example/")
    assert oauth_client.same_issuer("https://as.example/tenant", "https://as.example/tenant")
    assert not oauth_client.same_issuer("https://as.example/tenant/", "https://as.example/tenant")
    assert not oauth_client.same_issuer("https://as.example/", "https://other.example/")
    assert not oauth_client.same_issuer("https://as.example/", "http://as.example/")


def test_a_client_metadata_document_is_preferred_to_dynamic_registration(guard: GuardedHttp) -> None:
    with OAuthServer(switches=Switches(cimd=True, dcr=True)) as server:
        discovery = run(discover(server.url, guard))
        assert discovery.supports_cimd and discovery.endpoint("registration_endpoint")
        with serve_document(
            "/ai_mcp/oauth/client-metadata.json",
            lambda url: oauth_client.client_metadata(CALLBACK, "Odoo test", client_id=url),
        ) as document_url:
            registration = run(
                oauth_client.register(discovery, guard, CALLBACK, "Odoo test", metadata_url=document_url)
            )
            assert (registration.kind, registration.client_id) == (RegistrationKind.CIMD, document_url)
            assert not server.provider.clients, "no dynamic registration"
            signed = sign_in(server, guard, registration=registration)
            assert signed.tokens.access_token and server.provider.cimd_fetches

            # a client id entered by the administrator comes first
            entered = run(
                oauth_client.register(
                    discovery, guard, CALLBACK, "Odoo test", metadata_url=document_url, client_id="odoo-client"
                )
            )
            assert entered.kind is RegistrationKind.MANUAL

        # dynamic registration is what is left where documents are not taken, or Odoo's URL cannot be one
        server.switches.cimd = False
        for discovered, metadata_url in (
            (run(discover(server.url, guard)), "https://odoo.example/ai_mcp/oauth/client-metadata.json"),
            (discovery, "http://odoo.example/ai_mcp/oauth/client-metadata.json"),
        ):
            registration = run(
                oauth_client.register(discovered, guard, CALLBACK, "Odoo test", metadata_url=metadata_url)
            )
            assert registration.kind is RegistrationKind.DCR and registration.client_id in server.provider.clients
