"""What the hub needs to know to reach one MCP server, validated at the boundary."""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from .env_vars import check_env_names
from .errors import ConfigError, _lt
from .http_validation import check_headers, check_url
from .limits import CALL_TIME_CAP, CALL_TIMEOUT, CONNECT_TIMEOUT, QUESTION_TIMEOUT

# the levels of MCP's logging (syslog's severities), least severe first
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Transport(str, Enum):
    STREAMABLE_HTTP = "streamable_http"
    SSE = "sse"
    STDIO = "stdio"
    # the Odoo the addon runs in: its tools run in-process as the conversation's user, never over MCP
    ODOO = "odoo"


class AuthType(str, Enum):
    NONE = "none"
    BEARER = "bearer"
    API_KEY = "api_key"
    HEADERS = "headers"
    OAUTH = "oauth"


class RetryPolicy(BaseModel):
    """Backoff for connect, initialize and tools/list: a server that is starting (or restarting) gets a
    few tries before the sync or the turn reports it unreachable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attempts: int = Field(3, ge=1, le=10)
    initial_delay: float = Field(1.0, ge=0, le=60)
    max_delay: float = Field(10.0, ge=0, le=300)

    def delays(self) -> list[float]:
        """Sleeps between attempts: 1 s doubling, capped."""
        return [min(self.initial_delay * 2**i, self.max_delay) for i in range(self.attempts - 1)]


class ServerSpec(BaseModel):
    """One MCP server configuration. `key` is its stable identity (an Odoo record id, a name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1)
    name: str = Field(min_length=1)
    transport: Transport = Transport.STREAMABLE_HTTP
    url: str | None = None
    auth_type: AuthType = AuthType.NONE
    token: SecretStr | None = None
    # OAuth with DPoP: the key (PEM) `token` is bound to; every request carries a proof of it
    dpop_key: SecretStr | None = None
    api_key_header: str = "X-API-Key"
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    connect_timeout: float = CONNECT_TIMEOUT.field()
    call_timeout: float = CALL_TIMEOUT.field()
    call_time_cap: float = CALL_TIME_CAP.field()
    question_timeout: float = QUESTION_TIMEOUT.field()
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: str | None = None
    # a stdio server's memory limit (MiB, RLIMIT_DATA); None: the limits of a process of its own
    memory_limit_mb: int | None = Field(None, ge=1)
    max_tools: int = Field(50, ge=1, le=1000)
    retry: RetryPolicy = RetryPolicy()
    # OAuth with a token per user: whose token `token` is; pooled sessions are kept per owner
    token_owner: str | None = None
    # a user-given URL: checked against the SSRF guard before every connection, not only at save
    public_only: bool = False
    allowed_hosts: tuple[str, ...] = ()
    # the lowest level of the server's log messages to receive (logging/setLevel); None: the server's default
    log_level: LogLevel | None = None
    # the client tells the server it renders MCP Apps (its tools may then carry a ui:// app)
    apps: bool = False
    # the client offers sampling (the server may ask the assistant's model for a completion, each
    # request approved by the call's user): a capability declared only where the admin allows it
    sampling: bool = False
    # when its configuration was last saved (epoch seconds; Odoo: the record's write_date, a
    # "Test connection" included): a process that gave up on the server before then tries it again
    # at once, whichever process saved it
    saved_at: float | None = None

    @field_validator("url", "command", "cwd")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return value.strip() if isinstance(value, str) else value

    @field_validator("headers")
    @classmethod
    def _headers_are_http(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        check_headers({k: v.get_secret_value() for k, v in value.items()})
        return value

    @field_validator("api_key_header")
    @classmethod
    def _api_key_header_is_http(cls, value: str) -> str:
        check_headers({value: ""}, field="api_key_header")
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        check_env_names(value, "env")
        return value

    @model_validator(mode="after")
    def _transport_fields(self) -> ServerSpec:
        if self.transport is Transport.STDIO:
            if not self.command or not self.command.strip():
                raise ConfigError(
                    "command", _lt("A command is required for stdio servers, e.g. npx or /usr/bin/python3.")
                )
        elif self.transport is not Transport.ODOO:
            check_url(self.url)
        if self.auth_type is AuthType.OAUTH and self.transport in (Transport.STDIO, Transport.ODOO):
            raise ConfigError("auth_type", _lt("OAuth sign-in works over HTTP only. Choose streamable HTTP or SSE."))
        if self.auth_type in (AuthType.BEARER, AuthType.API_KEY) and not self.token:
            raise ConfigError(
                "token",
                _lt("A token is required with authentication %(auth)s. Enter it, or choose no authentication."),
                auth=repr(self.auth_type.value),
            )
        return self

    def http_headers(self) -> dict[str, str]:
        """Headers with secrets in clear: call only where the connection is made."""
        headers = {k: v.get_secret_value() for k, v in self.headers.items()}
        if self.auth_type in (AuthType.BEARER, AuthType.OAUTH) and self.token:
            scheme = "DPoP" if self.dpop_key is not None and self.auth_type is AuthType.OAUTH else "Bearer"
            headers["Authorization"] = f"{scheme} {self.token.get_secret_value()}"
        elif self.auth_type is AuthType.API_KEY and self.token:
            headers[self.api_key_header] = self.token.get_secret_value()
        return headers

    @property
    def pool_key(self) -> str:
        """The pool's key: one session per server, and per token owner where tokens are per user,
        so that a session opened with one user's token never serves another user."""
        return f"{self.key}@{self.token_owner}" if self.token_owner else self.key

    def process_env(self) -> dict[str, str]:
        return {k: v.get_secret_value() for k, v in self.env.items()}

    def fingerprint(self) -> str:
        """Stable digest of everything that shapes the connection, secrets included, so a changed
        token or URL gives a new pooled session while equal configs share one."""
        # the limits read per call do not shape the connection: changing them keeps the session
        data = self.model_dump(
            mode="json", exclude={"name", "max_tools", "call_time_cap", "question_timeout", "saved_at"}
        )
        data["token"] = self.token.get_secret_value() if self.token else None
        data["headers"] = {k: v.get_secret_value() for k, v in self.headers.items()}
        data["env"] = self.process_env()
        raw = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    def label(self) -> str:
        """How logs name the server: never with secrets."""
        if self.transport is Transport.ODOO:
            return f"{self.name} (this Odoo)"
        target = self.command if self.transport is Transport.STDIO else self.url
        return f"{self.name} ({self.transport.value} {target})"


def build_server_spec(**data: Any) -> ServerSpec:
    """Build a spec from plain values; any problem becomes a ConfigError naming the field
    (our own validators raise ConfigError directly, pydantic's type and range checks are mapped)."""
    try:
        return ServerSpec(**data)
    except ValidationError as exc:
        raise config_error_from(exc) from None


def config_error_from(exc: ValidationError) -> ConfigError:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "configuration"
    return ConfigError(field, first["msg"])
