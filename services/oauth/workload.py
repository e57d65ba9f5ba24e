"""Odoo signing in with its workload identity (the MCP extension io.modelcontextprotocol/auth/wif):
the JWT a platform issued to the deployment (a Kubernetes projected service account token, a
cloud's or a CI runner's OIDC token), presented in the JWT bearer grant (RFC 7523) in place of a
client secret, for a shared server, with no person and no browser.

The JWT is read where the operator has the platform put it, a file or an environment variable
(`$NAME`), each time a token is fetched: platforms rotate it, often hourly. What is read must
have the form of a JWT, or nothing is sent (a wrong path never hands a file's content to an
authorization server). Discovery, the kept token and its renewal before it expires are the company
client's (machine.py `ClientCredentialsTokens`); only the token request differs. A refusal is
reported once, never retried with another grant, and every failure is an OAuthError whose sentence
names the server and the field to fix.
"""

from __future__ import annotations

import logging
import os

from pydantic import BaseModel, ConfigDict, SecretStr

from ..errors import AuthRequired, ErrorCode, McpError, OAuthError
from ..server_spec import ServerSpec
from . import dpop
from .assertion_grant import JWT_BEARER, TokenRefusal, is_jwt, jwt_bearer_endpoint, jwt_bearer_token
from .discovery import Discovery
from .http import GuardedHttp
from .machine import ClientCredentialsTokens
from .models import TokenSet

_logger = logging.getLogger(__name__)

TOKEN_FIELD = "oauth_workload_token"


class WorkloadClient(BaseModel):
    """Odoo's workload at the server's authorization server, as the administrator set it."""

    model_config = ConfigDict(frozen=True)

    server_name: str
    token_source: str  # a file path, or $NAME: an environment variable
    client_id: str | None = None
    scope: str | None = None
    dpop: bool = False


def _refused(client: WorkloadClient, message: str, field: str) -> OAuthError:
    return OAuthError(ErrorCode.OAUTH_TOKEN_ERROR, f"{client.server_name}: {message}", field=field)


def read_workload_token(client: WorkloadClient) -> str:
    """The deployment's JWT as the platform wrote it last. Raises OAuthError naming the field."""
    source = client.token_source.strip()
    if not source:
        raise _refused(
            client,
            "no Workload Token is set: a system administrator enters the file or $VARIABLE the platform puts "
            "the deployment's JWT in.",
            TOKEN_FIELD,
        )
    if source.startswith("$"):
        token = os.environ.get(source[1:], "").strip()
        if not token:
            raise _refused(
                client,
                f"the environment variable {source[1:]} of Workload Token is not set in Odoo's process: check "
                "Workload Token, or the deployment's environment.",
                TOKEN_FIELD,
            )
    else:
        try:
            with open(source, encoding="utf-8") as handle:
                token = handle.read(65536).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise _refused(
                client,
                f"the file {source} of Workload Token cannot be read ({type(exc).__name__}): check Workload Token, or "
                "that the platform mounts it into Odoo.",
                TOKEN_FIELD,
            ) from None
    if not is_jwt(token):
        raise _refused(
            client,
            f"what {source} holds is not a JWT: Workload Token must name where the platform puts the "
            "deployment's identity token.",
            TOKEN_FIELD,
        )
    return token


def _token_refusal(client: WorkloadClient, refusal: TokenRefusal) -> OAuthError:
    said = refusal.said()
    if refusal.error == "invalid_grant":
        return _refused(
            client,
            f"its authorization server refused the workload identity ({said}): check that Workload Token holds a "
            "current token of the platform, for this authorization server, and that the provider trusts the "
            "platform's issuer.",
            TOKEN_FIELD,
        )
    if refusal.error == "invalid_scope":
        return _refused(
            client, f"its authorization server refused the scopes asked for ({said}): check Scopes.", "oauth_scopes"
        )
    if refusal.error in ("unauthorized_client", "invalid_client", "unsupported_grant_type"):
        return _refused(
            client,
            f"its authorization server does not let this workload use the JWT bearer grant ({said}): allow it at "
            "the provider, and check Client ID.",
            "oauth_client_id",
        )
    return _refused(client, f"its token endpoint answered {said}.", TOKEN_FIELD)


async def fetch_workload_token(
    client: WorkloadClient, discovery: Discovery, http: GuardedHttp, dpop_key: SecretStr | None = None
) -> TokenSet:
    """A new token for the workload from the authorization server `discovery` found, bound to
    `dpop_key` where there is one (DPoP). Raises OAuthError."""
    endpoint = jwt_bearer_endpoint(client.server_name, discovery, "a workload identity")
    dpop.check_offered(discovery, dpop_key is not None, client.server_name)
    scope = client.scope or discovery.scope
    form = {
        "grant_type": JWT_BEARER,
        "assertion": read_workload_token(client),
        "client_id": client.client_id or "",
        "resource": discovery.resource,
        "scope": scope or "",
    }
    return await jwt_bearer_token(
        endpoint,
        discovery,
        form,
        http,
        server_name=client.server_name,
        kind="workload identity",
        refused=lambda refusal: _token_refusal(client, refusal),
        dpop_key=dpop_key,
    )


class WorkloadTokens(ClientCredentialsTokens):
    """The shared grant of a server Odoo signs in to with its workload identity: kept and renewed
    as a company client's, fetched with the deployment's JWT."""

    client: WorkloadClient  # type: ignore[assignment]

    async def request_token(self, discovery: Discovery, dpop_key: SecretStr | None) -> TokenSet:
        return await fetch_workload_token(self.client, discovery, self.http, dpop_key)

    def refusal(self, spec: ServerSpec, used: TokenSet, exc: AuthRequired) -> McpError:
        _logger.warning(
            "OAuth workload identity token refused by the server: server=%s step_up=%s", spec.label(), exc.step_up
        )
        if exc.step_up:
            return McpError(
                ErrorCode.MCP_AUTH_FAILED,
                f"{spec.name} refuses this request to the workload identity: it needs the scope {exc.scope}. Add "
                "it to Scopes on the server's form, and allow it at the provider.",
            )
        return McpError(
            ErrorCode.MCP_AUTH_FAILED,
            f"{spec.name} refuses the token its authorization server gave the workload identity: check Scopes on "
            "the server's form, and that the provider gives the workload access to this server.",
        )
