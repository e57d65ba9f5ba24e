"""'Test provider': one call made as a turn makes it, to check base URL, key, model and what the
model accepts in one go.

Streamed, with the chat model a turn uses (make_chat_model: the same client, which follows
redirects as a turn's does) on the loop turns run on, with one tool offered unless the tools go in
the prompt (the model's record says so, or the assistant's "Tools in the Prompt"; the caller says
which through `capabilities.native_tools`), and the settings' parameters, so it fails where a turn
would fail, saying why. A parameter the model refuses is left out and asked again, as a turn does,
and reported through `on_refused`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from langchain_core.messages import HumanMessage

from .chat_model import capabilities_without, make_chat_model
from .provider_errors import REFUSABLE, ParamRefused
from .settings import LlmSettings
from .stream import ModelReply, stream_reply, with_tools

PING_MESSAGES = [HumanMessage("Reply with OK.")]
PING_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time. Do not call it unless asked for the time.",
        "parameters": {"type": "object", "properties": {}},
    },
}


async def ping(settings: LlmSettings, on_refused: Callable[[str, str], None] | None = None) -> int:
    """Ask the model as a turn would; returns the round trip in milliseconds, raises LlmError.
    Run it where turns run (the hub's loop): the chat model's connections belong there.
    `on_refused(param, message)` hears of each parameter the model refused."""
    started = time.monotonic()
    current = settings
    for _ in range(len(REFUSABLE)):
        try:
            await _call(current)
            break
        except ParamRefused as refusal:
            if on_refused is not None:
                on_refused(refusal.param, refusal.message)
            current = capabilities_without(current, refusal.param)
    else:
        await _call(current)
    return int((time.monotonic() - started) * 1000)


async def _call(settings: LlmSettings) -> ModelReply:
    chat = make_chat_model(settings)
    tools = [PING_TOOL] if settings.capabilities.native_tools else []
    reply = None
    async for item in stream_reply(chat, PING_MESSAGES, with_tools(chat, tools)):
        if isinstance(item, ModelReply):
            reply = item
    assert reply is not None
    return reply
