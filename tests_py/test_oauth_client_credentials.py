"""Odoo signing in as a company client (client credentials) to a real OAuth-protected MCP server
(testing/oauth_server.py): a client secret or a private key, no person and no browser."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from services.errors import ErrorCode, McpError, OAuthError
from services.mcp import McpHub
from services.oauth import (
    ClientAuth,
    ClientCredentialsTokens,
    GuardedHttp,
    MachineClient,
    TokenSet,
    generate_private_key,
    public_key,
)
from services.server_spec import build_server_spec
from testing.oauth_server import MachineClient as ProviderClient
from testing.oauth_server import OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore, run

SECRET = "s3cret-of-the-company-client"


class SavingStore(MemoryStore):
    async def save(self, tokens: TokenSet) -> TokenSet:
        self.tokens = tokens
        self.saves += 1
        return tokens


@pytest.fixture
def server() -> Iterator[OAuthServer]:
    with OAuthServer(switches=Switches(client_credentials=True)) as server:
        yield server


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


def machine(server: OAuthServer, guard: GuardedHttp, **client: object) -> ClientCredentialsTokens:
    values: dict[str, object] = {"server_name": "Notes", "client_id": "odoo", "auth": ClientAuth.SECRET, **client}
    return ClientCredentialsTokens(SavingStore(), MachineClient.model_validate(values), server.url, guard)


def whoami(hub: McpHub, server: OAuthServer, tokens: ClientCredentialsTokens) -> str:
    spec = build_server_spec(key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth")
    result = hub.run(hub.acall_tool(spec, "whoami", {}, tokens=tokens))
    return result.parts[0].text


def test_a_client_secret_signs_in_with_no_person_and_the_token_is_reused(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    server.provider.machine_clients["odoo"] = ProviderClient(secret=SECRET)
    tokens = machine(server, guard, client_secret=SecretStr(SECRET))
    assert whoami(hub, server, tokens) == "odoo"
    assert whoami(hub, server, tokens) == "odoo"
    # the server lists client_secret_post before client_secret_basic; basic is the RFC's default and is used
    assert server.provider.machine_tokens == [("odoo", "client_secret_basic")], "one token, kept for the second call"
    assert server.provider.pending == {}, "no authorization request: no browser"


def test_a_token_about_to_expire_is_fetched_again(server: OAuthServer, guard: GuardedHttp, hub: McpHub) -> None:
    server.provider.machine_clients["odoo"] = ProviderClient(secret=SECRET)
    server.switches.token_lifetime = 30  # within the clock skew: expiring as soon as it is fetched
    tokens = machine(server, guard, client_secret=SecretStr(SECRET))
    assert whoami(hub, server, tokens) == "odoo"
    first = run(tokens.store.load())
    server.switches.token_lifetime = 3600
    assert whoami(hub, server, tokens) == "odoo"
    assert run(tokens.store.load()) != first
    assert len(server.provider.machine_tokens) == 2


def test_a_private_key_signs_in_with_a_jwt_the_provider_checks_with_the_public_key(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    private = generate_private_key()
    _jwk, pem = public_key(private)
    server.provider.machine_clients["odoo"] = ProviderClient(public_key=pem)
    tokens = machine(server, guard, auth=ClientAuth.PRIVATE_KEY, private_key=SecretStr(private))
    assert whoami(hub, server, tokens) == "odoo"
    assert server.provider.machine_tokens == [("odoo", "private_key_jwt")]

    # another key than the one the provider holds is refused, the sentence says what to check
    other = machine(server, guard, auth=ClientAuth.PRIVATE_KEY, private_key=SecretStr(generate_private_key()))
    with pytest.raises(OAuthError) as refused:
        run(other.current())
    assert "Notes: its authorization server refused the company client (invalid_client" in refused.value.message
    assert "the identity provider has the public key of Private Key" in refused.value.message


def test_a_wrong_secret_is_a_sentence_naming_the_server_and_the_fields(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub, caplog: pytest.LogCaptureFixture
) -> None:
    server.provider.machine_clients["odoo"] = ProviderClient(secret=SECRET)
    tokens = machine(server, guard, client_secret=SecretStr("not-the-secret"))
    spec = build_server_spec(key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth")
    with caplog.at_level(logging.DEBUG), pytest.raises(OAuthError) as refused:
        hub.run(hub.acall_tool(spec, "whoami", {}, tokens=tokens))
    assert refused.value.code is ErrorCode.OAUTH_TOKEN_ERROR, "no sign-in asked for: nobody could make it"
    assert refused.value.message.startswith("Notes: its authorization server refused the company client")
    assert "check Client ID and Client Secret" in refused.value.message
    assert refused.value.field == "oauth_client_id"
    assert "not-the-secret" not in caplog.text


def test_an_authorization_server_without_the_grant_says_so(guard: GuardedHttp) -> None:
    with OAuthServer() as plain:  # the SDK's metadata: authorization_code and refresh_token only
        tokens = machine(plain, guard, client_secret=SecretStr(SECRET))
        with pytest.raises(OAuthError) as refused:
            run(tokens.current())
    assert "does not offer the client_credentials grant" in refused.value.message
    assert "Set Signs In As to a person" in refused.value.message
    assert refused.value.field == "oauth_flow"


def test_an_unreachable_token_endpoint_says_so(server: OAuthServer, guard: GuardedHttp) -> None:
    server.provider.machine_clients["odoo"] = ProviderClient(secret=SECRET)
    server.switches.token_status = 503
    tokens = machine(server, guard, client_secret=SecretStr(SECRET))
    with pytest.raises(OAuthError) as refused:
        run(tokens.current())
    assert refused.value.message.startswith("Notes: its token endpoint ")
    assert "answered HTTP 503" in refused.value.message


def test_a_token_the_server_refuses_is_a_sentence_not_a_sign_in(
    server: OAuthServer, guard: GuardedHttp, hub: McpHub
) -> None:
    server.provider.machine_clients["odoo"] = ProviderClient(secret=SECRET)
    server.switches.refused_methods = {"tools/call": 401}
    tokens = machine(server, guard, client_secret=SecretStr(SECRET))
    spec = build_server_spec(key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth")
    with pytest.raises(McpError) as refused:
        hub.run(hub.acall_tool(spec, "whoami", {}, tokens=tokens))
    assert refused.value.code is ErrorCode.MCP_AUTH_FAILED
    assert "Notes refuses the token its authorization server gave the company client" in refused.value.message
    assert len(server.provider.machine_tokens) == 2, "a new token was tried once"
