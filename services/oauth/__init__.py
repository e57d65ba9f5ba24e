"""The OAuth client wing: signing Odoo in to an MCP server's authorization server.

Discovery of the protected resource and its authorization server, dynamic client registration, the
authorization-code flow with PKCE, token refresh and revocation, all over a guarded HTTP client that
only reaches public addresses; and the tokens a session sends, refreshed when they expire. Odoo's
records (mcp.server, mcp.oauth.token) only map to this face.
"""

from .client import client_metadata, exchange_code, read_callback, register, revoke, same_issuer, start_authorization
from . import dpop
from .discovery import Challenge, discover
from .http import GuardedHttp, oauth_allowed_hosts
from .machine import ClientAuth, ClientCredentialsTokens, MachineClient, generate_private_key, public_key
from .models import ClientRegistration, PENDING_LIFETIME, PendingAuthorization, TokenSet
from .tokens import RefreshingTokens, step_up_refusal, with_token
from .workload import WorkloadClient, WorkloadTokens

__all__ = [
    "Challenge",
    "ClientAuth",
    "ClientCredentialsTokens",
    "ClientRegistration",
    "GuardedHttp",
    "MachineClient",
    "PENDING_LIFETIME",
    "PendingAuthorization",
    "RefreshingTokens",
    "TokenSet",
    "client_metadata",
    "discover",
    "dpop",
    "exchange_code",
    "generate_private_key",
    "oauth_allowed_hosts",
    "public_key",
    "read_callback",
    "register",
    "revoke",
    "same_issuer",
    "start_authorization",
    "step_up_refusal",
    "with_token",
    "WorkloadClient",
    "WorkloadTokens",
]
