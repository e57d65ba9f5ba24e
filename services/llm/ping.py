"""'Test provider': one call made as a turn makes it, to check base URL, key, model and what the
model accepts in one go.

Streamed, with one tool offered (unless the model takes its tools in the prompt) and the settings'
parameters, so it fails where a turn would fail, saying why. A parameter the model refuses is
left out and asked again, as a turn does, and reported through `on_refused`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
from langchain_core.messages import HumanMessage

from .chat_model import build_chat_model, capabilities_without
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


def ping(settings: LlmSettings, on_refused: Callable[[str, str], None] | None = None) -> int:
    """Ask the model as a turn would; returns the round trip in milliseconds, raises LlmError.
    `on_refused(param, message)` hears of each parameter the model refused."""
    started = time.monotonic()
    current = settings
    for _ in range(len(REFUSABLE)):
        try:
            asyncio.run(_call(current))
            break
        except ParamRefused as refusal:
            if on_refused is not None:
                on_refused(refusal.param, refusal.message)
            current = capabilities_without(current, refusal.param)
    else:
        asyncio.run(_call(current))
    return int((time.monotonic() - started) * 1000)


async def _call(settings: LlmSettings) -> ModelReply:
    # connections of its own: they belong to this event loop, which ends with the call
    async with httpx.AsyncClient(timeout=settings.timeout) as http_client:
        chat = build_chat_model(settings, http_client)
        tools = [PING_TOOL] if settings.capabilities.native_tools else []
        reply = None
        async for item in stream_reply(chat, PING_MESSAGES, with_tools(chat, tools)):
            if isinstance(item, ModelReply):
                reply = item
        assert reply is not None
        return reply
