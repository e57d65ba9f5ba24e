"""How a server's 401/403 challenges are answered, against a real OAuth-protected MCP server
(testing/oauth_server.py) of each protocol generation: a step-up asks for the scope the grant
holds plus the one challenged, a refusal at the first request of a 2026-07-28 connection asks
for a sign-in (or refreshes), a refused request is sent again only with new credentials, and the
discovery probe is a request a 2026-07-28-only server takes."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from services.errors import AuthRequired, ErrorCode, McpError
from services.mcp import McpHub
from services.oauth import GuardedHttp, discover
from services.oauth.discovery import probe
from services.server_spec import ServerSpec, build_server_spec
from testing.oauth_server import ADMIN_SCOPE, STEP_UP_TOOL, OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore, run, sign_in


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


@pytest.fixture
def modern() -> Iterator[OAuthServer]:
    """A server of 2026-07-28 only: it refuses a request without that revision's header before it
    looks at the token, and its `server/discover` needs a token."""
    with OAuthServer(era="modern") as server:
        yield server


def oauth_spec(server: OAuthServer) -> ServerSpec:
    return build_server_spec(
        key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth", token_owner="7"
    )


def sent(server: OAuthServer, method: str) -> list[str]:
    """The tokens `method` was sent with, in order."""
    return [token for name, token in server.mcp_requests if name == method]


# -- a step-up keeps what was granted --------------------------------------------------------------


@pytest.mark.parametrize("era", ["dual", "legacy"])
def test_a_step_up_challenge_naming_only_the_missing_scope_is_signed_in_with_both(
    era: str, guard: GuardedHttp, hub: McpHub
) -> None:
    # the server challenges with the scope it misses only; the grant's scope is not repeated
    with OAuthServer(era=era, switches=Switches(challenge_scope=ADMIN_SCOPE)) as server:
        signed = sign_in(server, guard)
        spec = oauth_spec(server)
        with pytest.raises(AuthRequired) as caught:
            hub.run(hub.acall_tool(spec, STEP_UP_TOOL, {}, tokens=signed.source(guard)))
        assert caught.value.step_up and caught.value.scope == ADMIN_SCOPE

        wider = sign_in(server, guard, scope=caught.value.scope, granted=signed.tokens.scope)
        assert parse_qs(urlsplit(wider.authorize_url).query)["scope"] == ["read admin"]
        source = wider.source(guard)
        # the tool that asked for more runs, and the ones the first sign-in allowed still do
        assert hub.run(hub.acall_tool(spec, STEP_UP_TOOL, {}, tokens=source)).parts[0].text == (
            "report for alice with read admin"
        )
        assert hub.run(hub.acall_tool(spec, "whoami", {}, tokens=source)).parts[0].text == "alice"
        # the generation asked for was served: the handshake only where the server knows nothing newer
        assert any(method == "initialize" for method, _token in server.mcp_requests) is (era == "legacy")


def test_a_grant_whose_token_answer_named_no_scope_holds_the_scope_asked_for(guard: GuardedHttp, hub: McpHub) -> None:
    with OAuthServer(switches=Switches(token_scope=False, challenge_scope=ADMIN_SCOPE)) as server:
        signed = sign_in(server, guard)
        asked = parse_qs(urlsplit(signed.authorize_url).query)["scope"]
        assert [signed.tokens.scope] == asked == ["read"]
        with pytest.raises(AuthRequired) as caught:
            hub.run(hub.acall_tool(oauth_spec(server), STEP_UP_TOOL, {}, tokens=signed.source(guard)))
        wider = sign_in(server, guard, scope=caught.value.scope, granted=signed.tokens.scope)
        assert parse_qs(urlsplit(wider.authorize_url).query)["scope"] == ["read admin"]
        assert wider.tokens.scope == "read admin"


# -- a refusal at the first request of a 2026-07-28 connection --------------------------------------


def test_a_2026_server_refusing_its_discovery_asks_for_a_sign_in(modern: OAuthServer, hub: McpHub) -> None:
    with pytest.raises(AuthRequired) as caught:
        hub.run(hub.alist_tools(oauth_spec(modern)))
    assert caught.value.code is ErrorCode.MCP_AUTH_REQUIRED and not caught.value.step_up
    assert caught.value.resource_metadata == f"{modern.base_url}/.well-known/oauth-protected-resource/mcp"


def test_a_2026_server_refusing_an_ended_token_at_discovery_gets_a_refreshed_one(
    modern: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    signed = sign_in(modern, guard)
    modern.provider.expire_access_tokens()  # the provider ends it early; our clock says it is valid
    store = MemoryStore(signed.tokens)
    result = hub.run(hub.acall_tool(oauth_spec(modern), "whoami", {}, tokens=signed.source(guard, store)))
    assert result.parts[0].text == "alice"
    assert modern.provider.refresh_requests == 1 and store.saves == 1


# -- a refused request is asked again only with new credentials -------------------------------------


def test_a_listing_refused_401_is_asked_again_only_with_the_refreshed_token(guard: GuardedHttp, hub: McpHub) -> None:
    with OAuthServer(switches=Switches(refused_methods={"tools/list": 401})) as server:
        signed = sign_in(server, guard)
        store = MemoryStore(signed.tokens)
        with pytest.raises(AuthRequired):
            hub.run(hub.alist_tools(oauth_spec(server), tokens=signed.source(guard, store)))
        listed = sent(server, "tools/list")
        assert store.tokens is not None
        assert listed == [signed.tokens.access_token.get_secret_value(), store.tokens.access_token.get_secret_value()]


def test_a_listing_refused_for_its_scope_is_not_asked_again(guard: GuardedHttp, hub: McpHub) -> None:
    with OAuthServer(switches=Switches(refused_methods={"tools/list": 403}, challenge_scope=ADMIN_SCOPE)) as server:
        signed = sign_in(server, guard)
        with pytest.raises(AuthRequired) as caught:
            hub.run(hub.alist_tools(oauth_spec(server), tokens=signed.source(guard)))
        assert caught.value.step_up
        assert sent(server, "tools/list") == [signed.tokens.access_token.get_secret_value()]
        assert server.provider.refresh_requests == 0


def test_a_step_up_for_scopes_already_granted_is_not_asked_of_the_user_again(guard: GuardedHttp, hub: McpHub) -> None:
    # a server that refuses the admin scope's calls whatever the grant holds: signing in again
    # would only bring the same grant and the same refusal
    switches = Switches(refused_methods={"tools/call": 403}, challenge_scope=ADMIN_SCOPE)
    with OAuthServer(switches=switches) as server:
        signed = sign_in(server, guard, scope="read admin")
        with pytest.raises(McpError) as caught:
            hub.run(hub.acall_tool(oauth_spec(server), "echo", {"text": "hi"}, tokens=signed.source(guard)))
        assert not isinstance(caught.value, AuthRequired) and caught.value.code is ErrorCode.MCP_AUTH_FAILED
        assert "holds the permissions it asks for (admin)" in caught.value.message
        assert len(sent(server, "tools/call")) == 1 and server.provider.refresh_requests == 0

        # a grant without that scope is asked to sign in with it, as before
        narrow = sign_in(server, guard)
        with pytest.raises(AuthRequired) as asked:
            hub.run(hub.acall_tool(oauth_spec(server), "echo", {"text": "hi"}, tokens=narrow.source(guard)))
        assert asked.value.step_up and asked.value.scope == ADMIN_SCOPE


# -- the discovery probe -----------------------------------------------------------------------------


def test_the_probe_is_refused_by_a_2026_server_for_its_token_not_its_revision(
    modern: OAuthServer, guard: GuardedHttp
) -> None:
    challenge = run(probe(modern.url, guard))
    assert challenge is not None and challenge.status == 401
    assert challenge.resource_metadata == f"{modern.base_url}/.well-known/oauth-protected-resource/mcp"
    discovery = run(discover(modern.url, guard))
    assert discovery.resource == modern.url and discovery.issuer == modern.issuer


def test_the_probe_still_finds_the_challenge_of_a_handshake_era_server(guard: GuardedHttp) -> None:
    with OAuthServer(era="legacy") as server:
        challenge = run(probe(server.url, guard))
    assert challenge is not None and challenge.status == 401
