"""What MCP Apps tell the model (ui/update-model-context): each app's latest context, as text,
capped, and given to the model with the system prompt of the conversation's next turns."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

# per app, and how many apps' contexts a conversation keeps (the latest)
MAX_CONTEXT_CHARS = 8_000
MAX_APPS = 4
PROMPT_INTRO = (
    "The user sees interactive apps in this conversation. What each app last reported about its state "
    "follows; it comes from the app, not from the user."
)


class AppContext(BaseModel):
    """One app's context: its tool's title and what it said, as text."""

    model_config = ConfigDict(frozen=True)

    title: str
    text: str


def context_text(content: Any, structured: Any) -> str:
    """An app's context as the model reads it: its text blocks, other blocks named, and its
    structured content as JSON. Raises ValueError, saying what to send, for anything else."""
    if content is not None and not isinstance(content, list):
        raise ValueError("content must be a list of content blocks")
    if structured is not None and not isinstance(structured, dict):
        raise ValueError("structuredContent must be an object")
    parts = [_block_text(block) for block in content or []]
    if structured:
        parts.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
    return "\n".join(part for part in parts if part)


def _block_text(block: Any) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise ValueError("each content block must be an object with a type")
    if block["type"] == "text":
        if not isinstance(block.get("text"), str):
            raise ValueError("a text block must have a text")
        return block["text"]
    return f"[{block['type']} content not included]"


def prompt_section(contexts: Iterable[AppContext]) -> str:
    """The part of the system prompt that gives the model the apps' contexts; empty without any."""
    blocks = [f"[App: {context.title}]\n{context.text}" for context in contexts if context.text]
    return "\n\n".join([PROMPT_INTRO, *blocks]) if blocks else ""
