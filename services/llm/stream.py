"""One streamed model call through langchain-openai: its text, reasoning and tool calls, with
failures mapped to LLM_* codes."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from ..errors import ErrorCode, LlmError
from ..token_usage import TokenUsage
from .chat_model import REASONING_FIELDS, STREAMED_CALL_EXTRAS, STREAMED_USAGE
from .provider_errors import map_llm_error

__all__ = ["ModelReply", "Thinking", "ToolCallDelta", "stream_reply", "with_tools"]

_logger = logging.getLogger(__name__)


class ModelReply(BaseModel):
    """What one model call produced, once its stream ended. `reasoning`: the thinking the provider
    showed; `reasoning_field`: the field it must be sent back under on a message with tool calls,
    None where the provider does not ask for it back. `replay`: per tool call id, the fields the
    provider put on the call that the next request needs."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    invalid_tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: TokenUsage = TokenUsage()
    reasoning: str = ""
    reasoning_field: str | None = None
    replay: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ToolCallDelta(NamedTuple):
    """A piece of a tool call as the model streams it. `index` tells the calls of one reply apart:
    a call's first piece has its id and name, the next ones add to its arguments' JSON text."""

    index: int | None
    id: str | None
    name: str | None
    arguments: str


class Thinking(NamedTuple):
    """A piece of the reasoning a provider streams before or beside its answer; `replay_as`: the
    field it must be sent back under on a message with tool calls (None: shown only)."""

    delta: str
    replay_as: str | None = None


# The field a provider needs its reasoning back under, on a message with tool calls: DeepSeek's
# thinking mode ("the user needs to send the reasoning content back to the API",
# https://api-docs.deepseek.com/guides/thinking_mode#tool-calls). OpenRouter's `reasoning` and the
# Responses API's summaries are shown only.
_REASONING_SENT_BACK = "reasoning_content"
UNREADABLE_CALL = (
    "The model asked for a tool call this answer could not read ({what}), so no tool ran. "
    "Ask again; if it keeps happening, switch on 'Tools in the Prompt' on the assistant."
)


def with_tools(chat: ChatOpenAI, tools: Sequence[dict[str, Any]]) -> Runnable[Any, BaseMessage]:
    """`chat` offering `tools`, OpenAI tools as bind_tools makes them (turn_tools._offered_tool)."""
    return chat.bind_tools(list(tools)) if tools else chat


async def stream_reply(
    chat: ChatOpenAI,
    messages: Sequence[BaseMessage],
    runnable: Runnable[Any, BaseMessage] | None = None,
    tool_deltas: bool = False,
) -> AsyncIterator[str | Thinking | ToolCallDelta | ModelReply]:
    """Yields text deltas as they arrive, Thinking pieces (and the pieces of tool calls, with
    `tool_deltas`), then the whole ModelReply last. `runnable`: `chat` with its tools bound
    (with_tools); `chat` alone when not given."""
    runnable = runnable or chat
    started = time.monotonic()
    chunks: list[AIMessageChunk] = []
    try:
        async for chunk in runnable.astream(list(messages)):
            assert isinstance(chunk, AIMessageChunk)
            chunks.append(chunk)
            content = chunk.content
            if isinstance(content, str):
                if content:
                    yield content
            else:
                for piece in _block_pieces(content):
                    yield piece
            if chunk.additional_kwargs:
                for field in REASONING_FIELDS:
                    reasoning = chunk.additional_kwargs.get(field)
                    if reasoning and isinstance(reasoning, str):
                        yield Thinking(reasoning, field if field == _REASONING_SENT_BACK else None)
            if tool_deltas:
                for piece in chunk.tool_call_chunks:
                    yield ToolCallDelta(piece.get("index"), piece.get("id"), piece.get("name"), piece.get("args") or "")
    except Exception as exc:  # every failure of the provider ends up as one LLM_* code
        raise map_llm_error(exc, got_output=bool(chunks)) from exc
    if not chunks:
        raise LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model sent an empty answer.")
    _logger.debug("LLM reply: model=%s duration_ms=%d", chat.model_name, (time.monotonic() - started) * 1000)
    # merged once at the end: adding chunk by chunk re-parses the partial tool-call JSON every time
    yield _reply(add_ai_message_chunks(chunks[0], *chunks[1:]))


def _block_pieces(blocks: list[Any]) -> list[str | Thinking]:
    """Text and reasoning summary of the Responses API's content blocks."""
    pieces: list[str | Thinking] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") in ("text", "output_text") and block.get("text"):
            pieces.append(block["text"])
        elif block.get("type") == "reasoning":
            pieces += [Thinking(part["text"]) for part in block.get("summary") or () if part.get("text")]
    return pieces


def _reply(message: AIMessageChunk) -> ModelReply:
    extra = message.additional_kwargs
    metadata = message.response_metadata
    reply = ModelReply(
        text=message.content if isinstance(message.content, str) else _block_text(message.content),
        tool_calls=[dict(call) for call in message.tool_calls],
        invalid_tool_calls=[dict(call) for call in message.invalid_tool_calls],
        finish_reason=metadata.get("finish_reason") or _responses_finish(metadata),
        usage=TokenUsage.from_metadata(message.usage_metadata, extra.get(STREAMED_USAGE)),
        reasoning=_text(extra.get(_REASONING_SENT_BACK))
        or _text(extra.get("reasoning"))
        or _block_reasoning(message.content),
        reasoning_field=_REASONING_SENT_BACK if extra.get(_REASONING_SENT_BACK) else None,
        replay=_call_extras(message),
    )
    _check_calls(reply)
    return reply


def _responses_finish(metadata: dict[str, Any]) -> str | None:
    """The Responses API says `incomplete` (with why) where Chat Completions says `length`."""
    if metadata.get("status") == "incomplete":
        reason = (metadata.get("incomplete_details") or {}).get("reason")
        return "length" if reason == "max_output_tokens" else reason
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _block_text(blocks: list[Any]) -> str:
    return "".join(piece for piece in _block_pieces(blocks) if isinstance(piece, str))


def _block_reasoning(content: Any) -> str:
    if isinstance(content, str):
        return ""
    return "".join(piece.delta for piece in _block_pieces(content) if isinstance(piece, Thinking))


def _call_extras(message: AIMessageChunk) -> dict[str, dict[str, Any]]:
    """The extra fields streamed on each tool call, by the call's id."""
    by_index = message.additional_kwargs.get(STREAMED_CALL_EXTRAS)
    if not by_index:
        return {}
    ids = {str(piece.get("index")): piece.get("id") for piece in message.tool_call_chunks}
    return {ids[index]: fields for index, fields in by_index.items() if ids.get(index)}


def _check_calls(reply: ModelReply) -> None:
    """A call the turn cannot read ends it, saying so, rather than vanishing."""
    if any(not call.get("name") for call in [*reply.tool_calls, *reply.invalid_tool_calls]):
        raise LlmError(ErrorCode.LLM_BAD_RESPONSE, UNREADABLE_CALL.format(what="a call without a tool name"), advice="")
    if reply.finish_reason == "tool_calls" and not reply.tool_calls and not reply.invalid_tool_calls:
        raise LlmError(
            ErrorCode.LLM_BAD_RESPONSE, UNREADABLE_CALL.format(what="its stream ended without the call"), advice=""
        )
