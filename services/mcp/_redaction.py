"""Keeps secrets out of logs: every header that can carry one is masked."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server_spec import ServerSpec

REDACTED = "***"
_ALWAYS_SECRET = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"})


def redact_headers(headers: dict[str, str], spec: ServerSpec | None = None) -> dict[str, str]:
    secret = set(_ALWAYS_SECRET)
    if spec is not None:
        secret.add(spec.api_key_header.lower())
        secret.update(name.lower() for name in spec.headers)
    return {name: (REDACTED if name.lower() in secret else value) for name, value in headers.items()}


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {name: REDACTED for name in env}
