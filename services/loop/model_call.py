"""One model call of a round: the chat model a turn's settings make, offered the round's tools.

Binding tools converts each one (~tens of µs a tool), so the chat model is bound again only when
the tools offered change (a server declined mid-turn, the last round without tools). A request
field the model refuses (a 400 naming it) is left out and the call made once more (once per field
refused); the turn keeps going without it, and the refusal is told as an event, for the model's record to learn from.

Where the model takes one, each request carries the turn's `prompt_cache_key`, so that the requests
of one assistant and user reach the same prompt cache.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from ..events import ModelRefusedParamEvent
from ..llm import (
    LlmSettings,
    ModelReply,
    ParamRefused,
    Thinking,
    ToolCallDelta,
    capabilities_without,
    make_chat_model,
    stream_reply,
    with_tools,
)

_logger = logging.getLogger(__name__)

ModelItem = str | Thinking | ToolCallDelta | ModelReply | ModelRefusedParamEvent


class ModelCaller:
    def __init__(self, settings: LlmSettings, prompt_cache_key: str = "") -> None:
        self.prompt_cache_key = prompt_cache_key
        self._use(settings)

    def _use(self, settings: LlmSettings) -> None:
        self.settings = settings
        self.chat = make_chat_model(settings)
        self._offered: tuple[dict[str, Any], ...] = ()
        self._chat_offering: Runnable[Any, BaseMessage] = self.chat

    async def stream(
        self, messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]], tool_deltas: bool
    ) -> AsyncIterator[ModelItem]:
        refused: set[str] = set()
        while True:
            try:
                async with contextlib.aclosing(self._stream(messages, tools, tool_deltas)) as items:
                    async for item in items:
                        yield item
                return
            except ParamRefused as refusal:
                if refusal.param in refused:  # left out already: refused for another reason
                    raise
                refused.add(refusal.param)
                _logger.info("Model refused a parameter: model=%s param=%s", self.settings.model, refusal.param)
                yield ModelRefusedParamEvent(model=self.settings.model, param=refusal.param, message=refusal.message)
                self._use(capabilities_without(self.settings, refusal.param))

    def _stream(
        self, messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]], tool_deltas: bool
    ) -> AsyncIterator[str | Thinking | ToolCallDelta | ModelReply]:
        return stream_reply(self.chat, messages, self._offering(tools), tool_deltas)

    def _offering(self, tools: Sequence[dict[str, Any]]) -> Runnable[Any, BaseMessage]:
        if len(tools) != len(self._offered) or any(a is not b for a, b in zip(tools, self._offered, strict=True)):
            self._offered = tuple(tools)
            self._chat_offering = with_tools(self.chat, tools)
            if self.prompt_cache_key and self.settings.capabilities.prompt_cache_key:
                self._chat_offering = self._chat_offering.bind(prompt_cache_key=self.prompt_cache_key)
        return self._chat_offering
