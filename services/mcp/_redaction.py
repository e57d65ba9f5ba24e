"""Keeps secrets out of logs and of what admins are shown: every header that can carry one is
masked, and a stdio server's output has the secret values of its configuration masked."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server_spec import ServerSpec

REDACTED = "***"
_ALWAYS_SECRET = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"})
# Shorter values are not masked in a server's output: a flag such as DEBUG=1 or a port would mask
# every "1" or "8080" of a stack trace, and a secret that short is no secret anyway.
MIN_MASKED_LENGTH = 4


def redact_headers(headers: dict[str, str], spec: ServerSpec | None = None) -> dict[str, str]:
    secret = set(_ALWAYS_SECRET)
    if spec is not None:
        secret.add(spec.api_key_header.lower())
        secret.update(name.lower() for name in spec.headers)
    return {name: (REDACTED if name.lower() in secret else value) for name, value in headers.items()}


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {name: REDACTED for name in env}


def secret_values(spec: ServerSpec) -> tuple[str, ...]:
    """The values of `spec` a server could echo that nobody may read: its environment's, its
    headers', its token (API key, bearer or OAuth access token), longest first so that a secret
    holding another is masked whole."""
    values = [*spec.process_env().values(), *(value.get_secret_value() for value in spec.headers.values())]
    if spec.token is not None:
        values.append(spec.token.get_secret_value())
    kept = {value.strip() for value in values if len(value.strip()) >= MIN_MASKED_LENGTH}
    return tuple(sorted(kept, key=len, reverse=True))


def mask_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each of `secrets` (secret_values) replaced by REDACTED."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text
