"""Odoo signing in to a real OAuth-protected MCP server (testing/oauth_server.py) with its
workload identity: the JWT the platform issued to the deployment (testing/workload_identity.py),
read from a file or an environment variable, presented in the RFC 7523 JWT bearer grant. No
stored secret, no person, no browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.errors import ErrorCode, OAuthError
from services.mcp import McpHub
from services.oauth import GuardedHttp, TokenSet, WorkloadClient, WorkloadTokens
from services.server_spec import build_server_spec
from testing.oauth_server import OAuthServer, Switches
from testing.workload_identity import WorkloadIssuer
from tests_py.oauth_helpers import MemoryStore, run


class SavingStore(MemoryStore):
    async def save(self, tokens: TokenSet) -> TokenSet:
        self.tokens = tokens
        self.saves += 1
        return tokens


@pytest.fixture
def issuer() -> WorkloadIssuer:
    return WorkloadIssuer()


@pytest.fixture
def server(issuer: WorkloadIssuer) -> Iterator[OAuthServer]:
    with OAuthServer(switches=Switches(jwt_bearer=True)) as server:
        server.provider.trusted_issuers[issuer.issuer] = issuer.public_pem
        yield server


def workload(server: OAuthServer, source: str, **client: object) -> WorkloadTokens:
    values: dict[str, object] = {"server_name": "Notes", "token_source": source, **client}
    return WorkloadTokens(SavingStore(), WorkloadClient.model_validate(values), server.url, GuardedHttp(["127.0.0.1"]))


def whoami(hub: McpHub, server: OAuthServer, tokens: WorkloadTokens) -> str:
    spec = build_server_spec(key="srv", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth")
    result = hub.run(hub.acall_tool(spec, "whoami", {}, tokens=tokens))
    return result.parts[0].text


def test_the_workload_jwt_in_a_file_signs_in_and_the_token_is_reused(
    server: OAuthServer, issuer: WorkloadIssuer, hub: McpHub, tmp_path: Path
) -> None:
    path = tmp_path / "mcp-token"
    path.write_text(issuer.token(server.issuer) + "\n")
    tokens = workload(server, str(path))
    assert whoami(hub, server, tokens) == "odoo-deployment"
    assert whoami(hub, server, tokens) == "odoo-deployment"
    assert server.provider.jwt_bearer_tokens == ["odoo-deployment"], "one token, kept for the second call"
    assert server.provider.pending == {}, "no authorization request: no browser"


def test_the_workload_jwt_in_an_environment_variable_signs_in(
    server: OAuthServer, issuer: WorkloadIssuer, hub: McpHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AI_MCP_TEST_WORKLOAD_JWT", issuer.token(server.issuer, subject="odoo-prod"))
    assert whoami(hub, server, workload(server, "$AI_MCP_TEST_WORKLOAD_JWT")) == "odoo-prod"


def test_a_token_about_to_expire_is_fetched_with_the_jwt_the_platform_wrote_since(
    server: OAuthServer, issuer: WorkloadIssuer, hub: McpHub, tmp_path: Path
) -> None:
    path = tmp_path / "mcp-token"
    path.write_text(issuer.token(server.issuer, subject="pod-1"))
    server.switches.token_lifetime = 30  # within the clock skew: expiring as soon as it is fetched
    tokens = workload(server, str(path))
    assert whoami(hub, server, tokens) == "pod-1"
    path.write_text(issuer.token(server.issuer, subject="pod-2"))  # the platform rotates the file
    assert whoami(hub, server, tokens) == "pod-2"


def test_a_missing_file_is_a_sentence_naming_the_server_and_the_field(server: OAuthServer, tmp_path: Path) -> None:
    with pytest.raises(OAuthError) as refused:
        run(workload(server, str(tmp_path / "absent")).current())
    assert refused.value.field == "oauth_workload_token"
    assert refused.value.message.startswith("Notes: ")
    assert "Workload Token" in refused.value.message and "absent" in refused.value.message
    assert server.provider.token_requests == 0


def test_what_is_not_a_jwt_is_never_sent(server: OAuthServer, tmp_path: Path) -> None:
    path = tmp_path / "not-a-token"
    path.write_text("postgres-password-of-the-deployment")
    with pytest.raises(OAuthError) as refused:
        run(workload(server, str(path)).current())
    assert refused.value.field == "oauth_workload_token"
    assert "is not a JWT" in refused.value.message
    assert "postgres-password" not in refused.value.message
    assert server.provider.jwt_bearer_tokens == [] and server.provider.token_requests == 0


def test_an_expired_jwt_is_refused_once_with_a_sentence_and_never_retried(
    server: OAuthServer, issuer: WorkloadIssuer, tmp_path: Path
) -> None:
    path = tmp_path / "mcp-token"
    path.write_text(issuer.token(server.issuer, lifetime=-120))
    with pytest.raises(OAuthError) as refused:
        run(workload(server, str(path)).current())
    assert refused.value.code is ErrorCode.OAUTH_TOKEN_ERROR
    assert refused.value.field == "oauth_workload_token"
    assert "refused the workload identity" in refused.value.message
    assert server.provider.jwt_bearer_tokens == []


def test_an_authorization_server_without_the_grant_is_named(
    server: OAuthServer, issuer: WorkloadIssuer, tmp_path: Path
) -> None:
    server.switches.jwt_bearer = False
    path = tmp_path / "mcp-token"
    path.write_text(issuer.token(server.issuer))
    with pytest.raises(OAuthError) as refused:
        run(workload(server, str(path)).current())
    assert refused.value.field == "oauth_flow"
    assert "does not offer the JWT bearer grant" in refused.value.message


def test_no_workload_token_says_who_sets_it(server: OAuthServer) -> None:
    with pytest.raises(OAuthError) as refused:
        run(workload(server, " ").current())
    assert refused.value.field == "oauth_workload_token"
    assert "no Workload Token is set: a system administrator enters" in refused.value.message


def test_a_workload_with_dpop_gets_a_bound_token_and_renews_it_with_the_same_key(
    issuer: WorkloadIssuer, hub: McpHub, tmp_path: Path
) -> None:
    with OAuthServer(switches=Switches(jwt_bearer=True, dpop=True, dpop_as_nonce=True, dpop_rs_nonce=True)) as server:
        server.provider.trusted_issuers[issuer.issuer] = issuer.public_pem
        path = tmp_path / "mcp-token"
        path.write_text(issuer.token(server.issuer, subject="pod-1"))
        server.switches.token_lifetime = 30  # expiring as soon as it is fetched: the second call renews
        tokens = workload(server, str(path), dpop=True)
        assert whoami(hub, server, tokens) == "pod-1"
        first = tokens.store.tokens
        assert first is not None and first.token_type == "DPoP" and first.dpop_key is not None
        path.write_text(issuer.token(server.issuer, subject="pod-2"))
        assert whoami(hub, server, tokens) == "pod-2"
        renewed = tokens.store.tokens
        assert renewed is not first and renewed.dpop_key == first.dpop_key, "the grant keeps its key"
        assert set(server.dpop.schemes) == {"DPoP"}, "the MCP server never saw the token as a bearer"
