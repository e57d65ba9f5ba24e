"""DPoP-bound tokens (RFC 9449) against a real authorization server and MCP server on 127.0.0.1
(testing/oauth_server.py with testing/dpop_server.py): a person's sign-in, a company client's,
the refresh, the nonces both servers may ask for, and a token copied without its key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from services.errors import AiMcpError, AuthRequired, ErrorCode, McpError, OAuthError
from services.mcp import McpHub
from services.oauth import ClientAuth, ClientCredentialsTokens, GuardedHttp, MachineClient, TokenSet, dpop
from services.oauth.tokens import RefreshingTokens
from services.server_spec import ServerSpec, build_server_spec
from testing.oauth_server import MachineClient as ProviderClient
from testing.oauth_server import OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore, run, sign_in


class SavingStore(MemoryStore):
    async def save(self, tokens: TokenSet) -> TokenSet:
        self.tokens = tokens
        return tokens


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


def serve(**switches: object) -> Iterator[OAuthServer]:
    with OAuthServer(switches=Switches(dpop=True, **switches)) as server:  # type: ignore[arg-type]
        yield server


@pytest.fixture
def server() -> Iterator[OAuthServer]:
    yield from serve()


def spec_of(server: OAuthServer, **values: object) -> ServerSpec:
    data: dict[str, object] = {
        "key": "notes",
        "name": "Notes",
        "transport": "streamable_http",
        "url": server.url,
        "auth_type": "oauth",
        **values,
    }
    return build_server_spec(**data)


def whoami(hub: McpHub, server: OAuthServer, tokens: RefreshingTokens, **values: object) -> str:
    result = hub.run(hub.acall_tool(spec_of(server, **values), "whoami", {}, tokens=tokens))
    return result.parts[0].text


def test_a_dpop_sign_in_calls_a_tool_with_a_token_bound_to_the_grants_key(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    signed = sign_in(server, guard, dpop_bound=True)
    assert signed.tokens.token_type == "DPoP"
    assert signed.tokens.dpop_key is not None
    key = dpop.DpopKey(signed.tokens.dpop_key.get_secret_value())
    assert server.dpop.bound[signed.tokens.access_token.get_secret_value()] == key.jkt, "bound to the grant's key"
    assert whoami(hub, server, signed.source(guard)) == "alice"
    assert server.dpop.schemes and set(server.dpop.schemes) == {"DPoP"}, "never sent as Bearer"
    assert server.dpop.refusals == []


def test_a_token_copied_without_its_key_is_refused(server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    signed = sign_in(server, guard, dpop_bound=True)
    stolen = signed.tokens.access_token
    bearer = spec_of(server, auth_type="bearer", token=stolen)
    with pytest.raises(McpError):
        hub.run(hub.acall_tool(bearer, "whoami", {}))
    assert any("sent as Bearer" in why for why in server.dpop.refusals)
    # the same token with a proof of another key
    thief = TokenSet(access_token=stolen, token_type="DPoP", dpop_key=SecretStr(dpop.generate_key()))
    with pytest.raises(AiMcpError):
        whoami(hub, server, signed.source(guard, MemoryStore(thief)))
    assert any("not the token's" in why for why in server.dpop.refusals)


def test_a_refresh_is_proven_with_the_same_key_and_stays_bound_to_it(guard: GuardedHttp, hub: McpHub) -> None:
    for server in serve(token_lifetime=30):  # within the clock skew: refreshed before the call
        signed = sign_in(server, guard, dpop_bound=True)
        store = MemoryStore(signed.tokens)
        assert whoami(hub, server, signed.source(guard, store)) == "alice"
        assert store.tokens is not None and store.tokens.access_token != signed.tokens.access_token, "refreshed"
        assert store.tokens.dpop_key == signed.tokens.dpop_key
        assert server.dpop.token_proofs == ["authorization_code", "refresh_token"]
        assert server.dpop.refusals == []


def test_the_nonces_of_the_authorization_server_and_the_mcp_server_are_sent_after_one_retry(
    guard: GuardedHttp, hub: McpHub
) -> None:
    for server in serve(dpop_as_nonce=True, dpop_rs_nonce=True):
        signed = sign_in(server, guard, dpop_bound=True)
        assert signed.tokens.token_type == "DPoP"
        assert whoami(hub, server, signed.source(guard)) == "alice"
        assert whoami(hub, server, signed.source(guard)) == "alice"
        assert server.dpop.nonce_challenges[0] == "as"
        assert server.dpop.nonce_challenges.count("as") == 1
        assert server.dpop.nonce_challenges.count("rs") == 1, "the session keeps the server's nonce"


def test_a_server_that_never_takes_its_nonce_is_a_sentence_not_a_loop(guard: GuardedHttp, hub: McpHub) -> None:
    for server in serve():
        signed = sign_in(server, guard, dpop_bound=True)
        server.switches.dpop_rs_nonce = server.switches.dpop_nonce_rotates = True
        with pytest.raises(McpError) as raised:
            whoami(hub, server, signed.source(guard))
        assert not isinstance(raised.value, AuthRequired), "no sign-in asked for"
        assert "Notes" in raised.value.message and "DPoP" in raised.value.message
        assert len(server.dpop.nonce_challenges) <= 4, "asked again once per request, then given up"


def test_an_authorization_server_that_ignores_dpop_names_the_option_to_turn_off(guard: GuardedHttp) -> None:
    with OAuthServer() as server:  # no DPoP: a proof is ignored, a bearer token answered
        with pytest.raises(OAuthError) as raised:
            sign_in(server, guard, dpop_bound=True)
    assert raised.value.field == "oauth_dpop"
    assert raised.value.code is ErrorCode.OAUTH_TOKEN_ERROR
    assert "DPoP" in raised.value.message and server.issuer.rstrip("/") in raised.value.message


def test_a_company_client_gets_a_bound_token_and_its_nonce(guard: GuardedHttp, hub: McpHub) -> None:
    for server in serve(client_credentials=True, dpop_as_nonce=True, dpop_rs_nonce=True):
        server.provider.machine_clients["odoo"] = ProviderClient(secret="s3cret")
        client = MachineClient(
            server_name="Notes", client_id="odoo", auth=ClientAuth.SECRET, client_secret=SecretStr("s3cret"), dpop=True
        )
        store = SavingStore()
        tokens = ClientCredentialsTokens(store, client, server.url, guard)
        assert whoami(hub, server, tokens) == "odoo"
        assert store.tokens is not None and store.tokens.token_type == "DPoP" and store.tokens.dpop_key is not None
        assert server.dpop.token_proofs == ["client_credentials"]
        assert set(server.dpop.schemes) == {"DPoP"}
        assert run(store.load()) is store.tokens


def test_a_server_that_requires_dpop_while_it_is_off_names_the_option_before_any_sign_in(
    guard: GuardedHttp,
) -> None:
    for server in serve(dpop_required=True):
        with pytest.raises(OAuthError) as raised:
            sign_in(server, guard)
        assert raised.value.field == "oauth_dpop"
        assert "turn on DPoP" in raised.value.message
        assert server.provider.pending == {} and server.provider.token_requests == 0, "nobody sent to sign in"
