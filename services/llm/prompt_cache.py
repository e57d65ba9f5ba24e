"""The `prompt_cache_key` a request carries where the model takes it (ModelCapabilities).

Providers route the requests sharing a key to the same prompt cache (OpenAI, Azure OpenAI, Mistral),
so requests with one long prefix (one assistant's system prompt and tools, one user's conversation)
are best sent under one key. The key is a keyed hash of the assistant and the user, not their ids or
names: it goes to the provider with every request, where an id would say which account of which
database asks and a name is personal data; keyed with the database's own secret, it tells the
provider nothing and cannot be matched across databases, yet stays the same from turn to turn.
"""

from __future__ import annotations

import hashlib
import hmac

# OpenAI takes keys of up to 64 characters; 32 hex digits (128 bits) never collide in practice
KEY_LENGTH = 32


def prompt_cache_key(secret: str, assistant_id: int, user_id: int) -> str:
    message = f"ai_mcp prompt cache:{assistant_id}:{user_id}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:KEY_LENGTH]
