"""A conversation as the loop needs it: plain history messages, rebuilt from persisted events.

Nothing about a paused turn lives in memory: the history (with the assistant's pending tool calls
at its end) is all a process needs to resume it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field

from ..events import (
    ApprovalRequiredEvent,
    AuthRequiredEvent,
    ErrorEvent,
    Event,
    RoundEvent,
    StartEvent,
    TaskResultEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolSearchEvent,
)
from ..llm import REPLAY, TOOL_CALL_REPLAY

# what the model reads after a reply of its own that stopped half-way (the user saw it so)
INTERRUPTED_REPLY = "[This answer was interrupted here: the user saw it only up to this point.]"
# the result of a call that was running when its turn stopped (the browser left, the server died)
INTERRUPTED_CALL = (
    "Error INTERRUPTED: the answer was interrupted while this call ran, so its result is unknown: "
    "it may have run on the server. Check before calling it again."
)


class HistoryToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    replay: dict[str, Any] | None = None  # provider fields sent back on the call


class HistoryMessage(BaseModel):
    """`reasoning`: what the model showed of its thinking; `reasoning_as`: the field it goes back
    under, on a message with tool calls, in every later request (None: never sent back).
    `interrupted`: an assistant reply that stopped before the model finished it."""

    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[HistoryToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str = ""
    reasoning_as: str | None = None
    interrupted: bool = False


def history_from_events(events: Iterable[Event], user_message: str | None = None) -> list[HistoryMessage]:
    """Fold a turn's events, in order, into the messages the model saw."""
    history: list[HistoryMessage] = [HistoryMessage(role="user", content=user_message)] if user_message else []
    text: list[str] = []
    thinking: list[str] = []
    calls: list[HistoryToolCall] = []
    searched: list[HistoryMessage] = []  # a search's answer, after the reply that asked for it
    open_reply = False
    reasoning_as: str | None = None
    # the calls without a result yet: True while they run, False while they wait for the user
    unanswered: dict[str, bool] = {}

    def flush(interrupted: bool = False) -> None:
        nonlocal open_reply, reasoning_as
        if open_reply:
            history.append(
                HistoryMessage(
                    role="assistant",
                    content="".join(text),
                    tool_calls=tuple(calls),
                    reasoning="".join(thinking),
                    reasoning_as=reasoning_as,
                    interrupted=interrupted,
                )
            )
        history.extend(searched)
        text.clear()
        thinking.clear()
        calls.clear()
        searched.clear()
        open_reply = False
        reasoning_as = None

    for event in events:
        if isinstance(event, RoundEvent):
            flush()
        elif isinstance(event, TextEvent):
            open_reply = True
            text.append(event.delta)
        elif isinstance(event, ThinkingEvent):
            open_reply = True
            thinking.append(event.delta)
            reasoning_as = reasoning_as or event.replay_as
        elif isinstance(event, ToolCallEvent):
            open_reply = True
            calls.append(HistoryToolCall(id=event.id, name=event.name, arguments=event.arguments, replay=event.replay))
            unanswered[event.id] = True
        elif isinstance(event, ToolSearchEvent):
            open_reply = True
            calls.append(
                HistoryToolCall(id=event.id, name=event.name, arguments={"query": event.query}, replay=event.replay)
            )
            searched.append(HistoryMessage(role="tool", content=event.model_text, tool_call_id=event.id))
        elif isinstance(event, ToolResultEvent):
            flush()
            unanswered.pop(event.id, None)
            history.append(HistoryMessage(role="tool", content=event.model_text, tool_call_id=event.id))
        elif isinstance(event, TaskResultEvent):
            # between turns: the model answered the call "still running"; the result is news to it
            flush()
            history.append(HistoryMessage(role="user", content=late_result_text(event)))
        elif isinstance(event, (ApprovalRequiredEvent, AuthRequiredEvent, StartEvent)):
            # a pause holds every call back; a resumed run (its `start`) runs those still unanswered
            unanswered = dict.fromkeys(unanswered, isinstance(event, StartEvent))
        elif isinstance(event, ErrorEvent):
            # a reply with calls was complete (calls come once its stream ended); one without was cut
            flush(interrupted=open_reply and not calls)
            history.extend(
                HistoryMessage(role="tool", content=INTERRUPTED_CALL, tool_call_id=call_id)
                for call_id, running in unanswered.items()
                if running
            )
            unanswered.clear()
    flush()
    return history


def late_result_text(event: TaskResultEvent) -> str:
    """What the model reads of a task's result that came after its turn ended."""
    return (
        f"[The task of your earlier call {event.id} ({event.tool}), which was still running, has ended "
        f"({event.status}). Its result:]\n{event.model_text}"
    )


def rounds_used(history: list[HistoryMessage]) -> int:
    """Model calls that asked for tools since the user last spoke."""
    count = 0
    for message in reversed(history):
        if message.role == "user":
            break
        if message.role == "assistant" and message.tool_calls:
            count += 1
    return count


def pending_calls(history: list[HistoryMessage]) -> list[HistoryToolCall]:
    """Tool calls of the last assistant message that have no result yet (a turn paused for approval)."""
    answered: set[str] = set()
    for message in reversed(history):
        if message.role == "tool" and message.tool_call_id:
            answered.add(message.tool_call_id)
        elif message.role == "assistant":
            return [call for call in message.tool_calls if call.id not in answered]
        else:
            break
    return []


def last_round_wanted_tools(history: list[HistoryMessage]) -> bool:
    for message in reversed(history):
        if message.role == "assistant":
            return bool(message.tool_calls)
        if message.role == "user":
            return False
    return False


def to_langchain(history: list[HistoryMessage], system_prompt: str, native_tools: bool) -> list[BaseMessage]:
    """The model's view. Without native function calling, calls stay in the assistant's text and
    results come back as user messages, which every chat model accepts."""
    messages: list[BaseMessage] = [SystemMessage(system_prompt)] if system_prompt else []
    names = {call.id: call.name for m in history for call in m.tool_calls}
    for message in history:
        if message.role == "user":
            messages.append(HumanMessage(message.content))
        elif message.role == "assistant":
            calls = (
                [{"id": c.id, "name": c.name, "args": c.arguments} for c in message.tool_calls] if native_tools else []
            )
            extra = _replayed(message) if calls else {}
            content = f"{message.content}\n\n{INTERRUPTED_REPLY}".lstrip() if message.interrupted else message.content
            messages.append(AIMessage(content=content, tool_calls=calls, additional_kwargs=extra))
        elif native_tools:
            messages.append(ToolMessage(content=message.content, tool_call_id=message.tool_call_id or ""))
        else:
            name = names.get(message.tool_call_id or "", "tool")
            messages.append(HumanMessage(f"Result of {name} (call {message.tool_call_id}):\n{message.content}"))
    return messages


def _replayed(message: HistoryMessage) -> dict[str, Any]:
    """What the provider asked to be sent back with a message with tool calls, in every later
    request of the conversation: the fields of its calls, and its reasoning (DeepSeek's thinking
    mode refuses a later question whose earlier tool-calling messages lack it)."""
    extra: dict[str, Any] = {}
    by_call = {call.id: call.replay for call in message.tool_calls if call.replay}
    if by_call:
        extra[TOOL_CALL_REPLAY] = by_call
    if message.reasoning_as and message.reasoning:
        extra[REPLAY] = {message.reasoning_as: message.reasoning}
    return extra
