"""The OAuth client wing: signing Odoo in to an MCP server's authorization server.

Discovery of the protected resource and its authorization server, dynamic client registration, the
authorization-code flow with PKCE, token refresh and revocation, all over a guarded HTTP client that
only reaches public addresses; and the tokens a session sends, refreshed when they expire. Odoo's
records (mcp.server, mcp.oauth.token) only map to this face.
"""

from .client import client_metadata, exchange_code, read_callback, register, revoke, same_issuer, start_authorization
from . import dpop
from .discovery import Challenge, discover
from .enterprise import EnterpriseClient, EnterpriseTokens, IdentitySource
from .http import GuardedHttp, oauth_allowed_hosts
from .identity_provider import DEFAULT_SCOPE as DEFAULT_IDENTITY_SCOPE
from .identity_provider import (
    IdentityProvider,
    IdentityTokens,
    discover_provider,
    finish_sign_in,
    identity_required,
    refresh_identity,
    start_sign_in,
)
from .machine import ClientAuth, ClientCredentialsTokens, MachineClient, generate_private_key, public_key
from .models import ClientRegistration, PENDING_LIFETIME, PendingAuthorization, TokenSet
from .tokens import RefreshingTokens, step_up_refusal, with_token
from .workload import WorkloadClient, WorkloadTokens

__all__ = [
    "Challenge",
    "DEFAULT_IDENTITY_SCOPE",
    "ClientAuth",
    "ClientCredentialsTokens",
    "ClientRegistration",
    "EnterpriseClient",
    "EnterpriseTokens",
    "GuardedHttp",
    "IdentityProvider",
    "IdentitySource",
    "IdentityTokens",
    "MachineClient",
    "PENDING_LIFETIME",
    "PendingAuthorization",
    "RefreshingTokens",
    "TokenSet",
    "client_metadata",
    "discover",
    "discover_provider",
    "dpop",
    "exchange_code",
    "finish_sign_in",
    "generate_private_key",
    "identity_required",
    "oauth_allowed_hosts",
    "public_key",
    "read_callback",
    "refresh_identity",
    "register",
    "revoke",
    "same_issuer",
    "start_authorization",
    "start_sign_in",
    "step_up_refusal",
    "with_token",
    "WorkloadClient",
    "WorkloadTokens",
]
