"""Authenticated encryption of stored secrets (API keys, auth headers, stdio env).

Fernet (AES-128-CBC + HMAC-SHA256, random IV, timestamped) from `cryptography`, which Odoo already
depends on. The key is derived with HKDF-SHA256 from a secret the database holds (Odoo's
``database.secret``), so a copy of the table without that secret is useless, and two databases never
share a key. A token that does not decrypt (tampered, or the database secret changed) raises
SecretBoxError, never returns garbage.
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_SALT = b"ai_mcp secret box"
_INFO = b"ai_mcp fernet key v1"


class SecretBoxError(Exception):
    """A stored secret could not be decrypted."""


def derive_key(secret: str) -> bytes:
    """The Fernet key (url-safe base64 of 32 bytes) for a database secret."""
    if not secret:
        raise ValueError("a non-empty secret is required to derive the encryption key")
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(secret.encode("utf-8"))
    return base64.urlsafe_b64encode(raw)


class SecretBox:
    def __init__(self, secret: str) -> None:
        self._fernet = Fernet(derive_key(secret))

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError, ValueError, TypeError, AttributeError):
            raise SecretBoxError(
                "the stored secret cannot be decrypted: it was damaged, "
                "or the database secret changed since it was saved"
            ) from None
