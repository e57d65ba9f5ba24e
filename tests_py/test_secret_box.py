"""Stored secrets: encrypted with a key from the database secret, never readable without it."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.secret_box import SecretBox, SecretBoxError, derive_key


def test_round_trip_and_the_token_hides_the_plaintext() -> None:
    box = SecretBox("db-secret")
    token = box.encrypt("sk-live-1234567890")
    assert "sk-live" not in token
    assert token.startswith("gAAAA")  # a Fernet token, version byte 0x80
    assert box.decrypt(token) == "sk-live-1234567890"


def test_same_plaintext_gives_different_tokens() -> None:
    box = SecretBox("db-secret")
    assert box.encrypt("same") != box.encrypt("same")


def test_another_box_with_the_same_secret_decrypts() -> None:
    assert SecretBox("db-secret").decrypt(SecretBox("db-secret").encrypt("k")) == "k"


def test_another_database_secret_cannot_decrypt() -> None:
    token = SecretBox("db-secret").encrypt("k")
    with pytest.raises(SecretBoxError, match="database secret changed"):
        SecretBox("other-secret").decrypt(token)


@pytest.mark.parametrize(
    "damage", [lambda t: t[:-2] + "AA", lambda t: t[:20], lambda t: "", lambda t: "not a token", lambda t: "é"]
)
def test_damaged_tokens_raise(damage) -> None:
    box = SecretBox("db-secret")
    with pytest.raises(SecretBoxError):
        box.decrypt(damage(box.encrypt("k")))


def test_key_is_derived_not_the_secret_itself() -> None:
    key = derive_key("db-secret")
    assert len(base64.urlsafe_b64decode(key)) == 32
    assert derive_key("db-secret") == key
    assert derive_key("db-secret2") != key
    assert b"db-secret" not in base64.urlsafe_b64decode(key)


def test_empty_secret_is_refused() -> None:
    with pytest.raises(ValueError):
        SecretBox("")


@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    box = SecretBox("db-secret")
    assert box.decrypt(box.encrypt(text)) == text
