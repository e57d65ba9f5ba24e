"""One model call of a round: the chat model a turn's settings make, offered the round's tools.

Binding tools converts each one (~tens of µs a tool), so the chat model is bound again only when
the tools offered change (a server declined mid-turn, the last round without tools).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from ..llm import LlmSettings, ModelReply, ToolCallDelta, make_chat_model, stream_reply, with_tools


class ModelCaller:
    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self.chat = make_chat_model(settings)
        self._offered: tuple[dict[str, Any], ...] = ()
        self._chat_offering: Runnable[Any, BaseMessage] = self.chat

    def stream(
        self, messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]], tool_deltas: bool
    ) -> AsyncIterator[str | ToolCallDelta | ModelReply]:
        return stream_reply(self.chat, messages, self._offering(tools), tool_deltas)

    def _offering(self, tools: Sequence[dict[str, Any]]) -> Runnable[Any, BaseMessage]:
        if len(tools) != len(self._offered) or any(a is not b for a, b in zip(tools, self._offered, strict=True)):
            self._offered = tuple(tools)
            self._chat_offering = with_tools(self.chat, tools)
        return self._chat_offering
