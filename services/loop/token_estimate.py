"""How many tokens a request holds, estimated without the model's tokenizer.

A tokenizer library (tiktoken) downloads its encodings on first use, which a server without
internet access cannot do, and every provider counts with a tokenizer of its own anyway. So the
estimate is plain arithmetic on the text, and the count the provider reports for each call
(usage.input_tokens) calibrates it for the rest of the turn (context_fit.py):

- text: one token per 4 ASCII characters (OpenAI's rule of thumb for English text and code), one
  per other character (Chinese and Japanese take one or more per character in OpenAI's tokenizers;
  accented Latin letters take fewer, which errs on the safe side);
- a message: 4 tokens more for its role and separators (OpenAI's cookbook counts 3 a message, and
  3 that prime the reply), a tool call or result 4 more for its id and name;
- a tool offered: its JSON definition as text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from .transcript import HistoryMessage

ASCII_CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
CALL_OVERHEAD = 4
REPLY_PRIMING = 3


def text_tokens(text: str) -> int:
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def message_tokens(message: HistoryMessage) -> int:
    tokens = MESSAGE_OVERHEAD + text_tokens(message.content)
    if message.reasoning_as:  # sent back with the message
        tokens += text_tokens(message.reasoning)
    for call in message.tool_calls:
        tokens += CALL_OVERHEAD + text_tokens(call.name) + text_tokens(json.dumps(call.arguments, ensure_ascii=False))
    if message.tool_call_id:
        tokens += CALL_OVERHEAD
    return tokens


def messages_tokens(messages: Iterable[HistoryMessage]) -> int:
    return sum(message_tokens(message) for message in messages)


def prompt_tokens(system_prompt: str, tools: Sequence[dict[str, Any]]) -> int:
    """The part of a request the history does not hold: the system prompt and the tools offered."""
    tools_text = json.dumps(list(tools), ensure_ascii=False) if tools else ""
    system = MESSAGE_OVERHEAD + text_tokens(system_prompt) if system_prompt else 0
    return system + text_tokens(tools_text) + REPLY_PRIMING
