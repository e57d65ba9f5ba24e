"""What the OAuth sign-in keeps between requests: the client registration, the pending
authorization (from the redirect to the provider until its callback) and the token set.

The Odoo layer stores each as encrypted secrets; these models are the boundary it crosses.
"""

from __future__ import annotations

import time
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

# A token is refreshed this long before the expiry it announced: the provider's clock may run
# ahead of ours, and a call that starts just before the expiry must not land just after it.
CLOCK_SKEW = 60.0
# How long a sign-in may take between the redirect to the provider and its callback.
PENDING_LIFETIME = 600.0


class RegistrationKind(str, Enum):
    MANUAL = "manual"  # a client id (and secret) an administrator entered
    CIMD = "cimd"  # Odoo's client metadata document URL is the client id
    DCR = "dcr"  # dynamic client registration (RFC 7591)


class ClientRegistration(BaseModel):
    """Who Odoo is to one authorization server."""

    model_config = ConfigDict(frozen=True)

    kind: RegistrationKind
    issuer: str
    client_id: str = Field(min_length=1)
    client_secret: SecretStr | None = None
    # client_secret_basic, client_secret_post or none (RFC 7591 token_endpoint_auth_method)
    auth_method: str = "none"
    redirect_uri: str

    def secret(self) -> str | None:
        return self.client_secret.get_secret_value() if self.client_secret else None


class PendingAuthorization(BaseModel):
    """One sign-in between the redirect to the provider and its callback. `state` is single-use
    and, in Odoo, bound to the user and browser session that started it."""

    model_config = ConfigDict(frozen=True)

    state: str = Field(min_length=16)
    code_verifier: SecretStr
    redirect_uri: str
    resource: str
    scope: str | None = None
    issuer: str
    # the authorization server advertises authorization_response_iss_parameter_supported (RFC
    # 9207): its answer must then carry `iss`; False in pendings stored before this was kept
    iss_required: bool = False
    # `issuer` is the MCP server's origin, assumed: the server published no metadata
    issuer_assumed: bool = False
    token_endpoint: str
    # the DPoP key (PEM) the code exchange proves and the grant is then bound to; None: no DPoP
    dpop_key: SecretStr | None = None
    created_at: float
    expires_at: float

    def expired(self, now: float | None = None) -> bool:
        return (now if now is not None else time.time()) >= self.expires_at


class TokenSet(BaseModel):
    """The tokens of one grant. `expires_at` is on our clock: receipt time plus expires_in."""

    model_config = ConfigDict(frozen=True)

    access_token: SecretStr
    refresh_token: SecretStr | None = None
    expires_at: float | None = None
    scope: str | None = None
    token_type: str = "Bearer"
    obtained_at: float = Field(default_factory=time.time)
    # the key (PEM) the tokens are bound to (DPoP, token_type "DPoP"); None: bearer tokens
    dpop_key: SecretStr | None = None

    @classmethod
    def from_response(
        cls,
        token: dict[str, Any],
        previous: TokenSet | None = None,
        now: float | None = None,
        dpop_key: SecretStr | None = None,
    ) -> TokenSet:
        """From a token endpoint answer (authlib's OAuth2Token is a dict). A refresh answer
        without a refresh token keeps the previous one (RFC 6749 section 6), and without a
        scope keeps the previous scope; a refresh stays bound to the previous DPoP key."""
        now = now if now is not None else time.time()
        expires_in = token.get("expires_in")
        refresh = token.get("refresh_token") or (
            previous.refresh_token.get_secret_value() if previous and previous.refresh_token else None
        )
        return cls(
            access_token=SecretStr(str(token["access_token"])),
            refresh_token=SecretStr(refresh) if refresh else None,
            expires_at=now + float(expires_in) if expires_in not in (None, "") else None,
            scope=token.get("scope") or (previous.scope if previous else None),
            token_type=str(token.get("token_type") or "Bearer"),
            obtained_at=now,
            dpop_key=dpop_key or (previous.dpop_key if previous else None),
        )

    def expiring(self, now: float | None = None, skew: float = CLOCK_SKEW) -> bool:
        """True when the token is expired or will be within `skew` seconds."""
        if self.expires_at is None:
            return False
        return (now if now is not None else time.time()) + skew >= self.expires_at

    def scopes(self) -> set[str]:
        return set((self.scope or "").split())
