"""Enterprise-managed authorization against a real OAuth-protected MCP server (testing/oauth_server.py)
that trusts a real company identity provider (testing/identity_provider.py): a user's ID token is
exchanged at the provider for an ID-JAG, presented in the JWT bearer grant with Odoo's client at the
authorization server. Every refusal is a sentence naming the server or the provider and the field to
fix; a user whose sign-in the provider refuses is told to sign in to it, never sent to a loop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from services.errors import ErrorCode, McpError, OAuthError
from services.mcp import McpHub
from services.oauth import (
    EnterpriseClient,
    EnterpriseTokens,
    GuardedHttp,
    TokenSet,
    dpop,
)
from services.oauth import (
    IdentityProvider as ProviderSpec,
)
from services.server_spec import build_server_spec
from testing.identity_provider import IdentityProvider
from testing.oauth_server import MachineClient, OAuthServer, Switches
from tests_py.oauth_helpers import MemoryStore

AS_CLIENT = "odoo-at-notes"
AS_SECRET = "notes-secret"


class SavingStore(MemoryStore):
    async def save(self, tokens: TokenSet) -> TokenSet:
        self.tokens = tokens
        self.saves += 1
        return tokens


class SignedIn:
    """Her sign-in at the provider as Odoo keeps it: the ID token the provider issued her."""

    def __init__(self, id_token: str) -> None:
        self.token = id_token

    async def id_token(self) -> SecretStr:
        return SecretStr(self.token)


@pytest.fixture
def idp() -> Iterator[IdentityProvider]:
    with IdentityProvider() as provider:
        yield provider


@pytest.fixture
def server(idp: IdentityProvider) -> Iterator[OAuthServer]:
    with OAuthServer(switches=Switches(jwt_bearer=True, dpop=True)) as server:
        server.provider.trusted_issuers[idp.issuer] = idp.public_pem
        server.provider.machine_clients[AS_CLIENT] = MachineClient(secret=AS_SECRET)
        idp.clients_at[server.issuer] = AS_CLIENT
        yield server


def grant(
    server: OAuthServer, idp: IdentityProvider, id_token: str, secret: str = AS_SECRET, **client: object
) -> EnterpriseTokens:
    provider = ProviderSpec(
        name="Acme ID",
        issuer=idp.issuer,
        token_endpoint=f"{idp.base_url}/token",
        client_id=idp.client_id,
        client_secret=SecretStr(idp.client_secret),
    )
    values: dict[str, object] = {
        "server_name": "Notes",
        "provider": provider,
        "client_id": AS_CLIENT,
        "client_secret": SecretStr(secret),
        **client,
    }
    return EnterpriseTokens(
        SavingStore(),
        EnterpriseClient.model_validate(values),
        server.url,
        GuardedHttp(["127.0.0.1"]),
        SignedIn(id_token),
    )


def whoami(hub: McpHub, server: OAuthServer, tokens: EnterpriseTokens) -> str:
    spec = build_server_spec(
        key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth", token_owner="7"
    )
    result = hub.run(hub.acall_tool(spec, "whoami", {}, tokens=tokens))
    return result.parts[0].text


def refused(hub: McpHub, server: OAuthServer, tokens: EnterpriseTokens) -> OAuthError:
    with pytest.raises(OAuthError) as caught:
        whoami(hub, server, tokens)
    return caught.value


def test_her_id_token_becomes_her_token_at_the_server_once(
    server: OAuthServer, idp: IdentityProvider, hub: McpHub
) -> None:
    tokens = grant(server, idp, idp.id_token("alice"))
    assert whoami(hub, server, tokens) == "alice"
    assert whoami(hub, server, tokens) == "alice"
    assert server.provider.jwt_bearer_tokens == ["alice"], "her token is kept for the second call"
    assert idp.requests == [("exchange", "alice")]
    assert not server.provider.pending, "no authorization request: no browser, no consent"


def test_a_wrong_client_secret_at_the_server_names_the_server_and_the_field(
    server: OAuthServer, idp: IdentityProvider, hub: McpHub
) -> None:
    error = refused(hub, server, grant(server, idp, idp.id_token("alice"), secret="wrong"))
    assert error.field == "oauth_client_id"
    assert error.message.startswith("Notes: its authorization server refused Odoo's client")
    assert "check Client ID and Client Secret" in error.message
    assert server.provider.jwt_bearer_tokens == []


def test_a_server_the_company_did_not_approve_is_refused_by_the_provider_in_a_sentence(
    server: OAuthServer, idp: IdentityProvider, hub: McpHub
) -> None:
    idp.clients_at.clear()
    error = refused(hub, server, grant(server, idp, idp.id_token("alice")))
    assert error.message.startswith("Acme ID: it refused the token exchange for")
    assert "gives the company's users access to this server" in error.message
    assert server.provider.jwt_bearer_tokens == []


def test_an_expired_id_token_asks_her_to_sign_in_to_the_provider_not_to_the_server(
    server: OAuthServer, idp: IdentityProvider, hub: McpHub
) -> None:
    error = refused(hub, server, grant(server, idp, idp.id_token("alice", lifetime=-120)))
    assert error.code is ErrorCode.OAUTH_IDENTITY_REQUIRED
    assert "You are not signed in to Acme ID, your company's identity provider" in error.message
    assert "AI › Company Sign-in" in error.message


def test_a_server_without_the_jwt_bearer_grant_says_so_before_her_id_token_is_sent(
    idp: IdentityProvider, hub: McpHub
) -> None:
    with OAuthServer(switches=Switches(client_credentials=True)) as plain:
        plain.provider.trusted_issuers[idp.issuer] = idp.public_pem
        idp.clients_at[plain.issuer] = AS_CLIENT
        error = refused(hub, plain, grant(plain, idp, idp.id_token("alice")))
    assert error.field == "oauth_flow"
    assert "does not offer the JWT bearer grant" in error.message
    assert idp.requests == [], "her ID token never left Odoo"


def test_a_dpop_bound_token_copied_without_its_key_is_refused(
    server: OAuthServer, idp: IdentityProvider, hub: McpHub
) -> None:
    tokens = grant(server, idp, idp.id_token("alice"), dpop=True)
    assert whoami(hub, server, tokens) == "alice"
    stored = tokens.store.tokens
    assert stored is not None and stored.dpop_key is not None and stored.token_type == "DPoP"
    key = dpop.DpopKey(stored.dpop_key.get_secret_value())
    assert server.dpop.bound[stored.access_token.get_secret_value()] == key.jkt, "bound to the grant's key"
    stolen = build_server_spec(
        key="thief",
        name="Notes",
        transport="streamable_http",
        url=server.url,
        auth_type="bearer",
        token=stored.access_token,
    )
    with pytest.raises(McpError):
        hub.run(hub.acall_tool(stolen, "whoami", {}))
    assert any("sent as Bearer" in why for why in server.dpop.refusals)
