"""A server asks the host's model for a completion (sampling): `sampling/createMessage` on a server
of the handshake era, the sampling input of an `input_required` result at 2026-07-28 (the SDK hands
both to the same callback).

The request is shown to the user of the call it came with (`sampling_required`), who may edit its
messages and output cap, then approve or decline. Only an approved request reaches the model, and
through the turn's own model call (services/loop/sampling_call.py: usage row, budgets, context
window), given here as a `Sampler`. What the model answered goes back to the server and is shown in
the call's block (`sampling_done`). Nobody to ask (an unattended run, an app's call, a sync), a
server the admin did not allow, a spent budget: the server is refused with a sentence saying why.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import types as mcp_types

from ..call_clock import CallClock, spoken_duration
from ..errors import AiMcpError, ErrorCode
from ..events import SamplingDoneEvent, SamplingRequiredEvent, SamplingText, UsageEvent

_logger = logging.getLogger(__name__)

# what the MCP specification asks a client to answer when its user rejects a request
USER_REJECTED = -1
# the output cap a request without a usable one gets, and the highest a user may set
DEFAULT_MAX_TOKENS = 1024
MAX_TOKENS_CAP = 32_768
ANSWERS = ("accept", "decline", "cancel")

NOBODY_TO_ASK = (
    "Sampling refused: nobody can approve this request here (the call runs unattended, or outside a "
    "user's conversation), and the assistant's model answers only what its user approved."
)
REFUSED_BY_USER = {
    "decline": "User rejected sampling request: the user declined it.",
    "cancel": "User rejected sampling request: the user cancelled it.",
}
TURNED_OFF = "Sampling refused: the administrator turned sampling off for this server."


@dataclass(frozen=True)
class SamplingRequest:
    """What the model is asked, as the user approved it."""

    server: str
    messages: tuple[SamplingText, ...]
    system_prompt: str | None
    max_tokens: int


@dataclass(frozen=True)
class SamplingReply:
    """The model's answer, and the usage event of its call (already charged to the turn)."""

    text: str
    model: str
    stop_reason: str
    usage: UsageEvent | None = None


@dataclass(frozen=True)
class SamplingAnswer:
    """The user's answer to a `sampling_required`: approve (`accept`, maybe edited), decline or cancel."""

    action: str
    messages: tuple[SamplingText, ...] | None = None
    max_tokens: int | None = None


class SamplingFailed(AiMcpError):
    """The model call did not answer; `usage`: what it is billed for all the same, if anything."""

    def __init__(self, error: AiMcpError, usage: UsageEvent | None) -> None:
        super().__init__(error.code, error.message, advice="")
        self.usage = usage


Sampler = Callable[[SamplingRequest], Awaitable[SamplingReply]]


@dataclass
class SamplingDesk:
    """The sampling requests of one turn waiting for their user, and the model call that answers
    the approved ones. Owned by the tool runner; each call's observer asks through it."""

    sampler: Sampler
    waiting: dict[str, asyncio.Future[SamplingAnswer]] = field(default_factory=dict)

    def answer(self, sampling: str, answer: SamplingAnswer) -> bool:
        """Hands the user's answer to the request waiting for it; False when none waits."""
        waiting = self.waiting.get(sampling)
        if waiting is None or waiting.done():
            return False
        waiting.set_result(answer)
        return True


def shown_messages(params: mcp_types.CreateMessageRequestParams) -> list[SamplingText]:
    """The request's messages as the user reads them: text, other parts named in brackets."""
    return [SamplingText(role=message.role, text=_text_of(message.content)) for message in params.messages]


def _text_of(content: Any) -> str:
    parts = content if isinstance(content, list) else [content]
    texts = []
    for part in parts:
        if isinstance(part, mcp_types.TextContent):
            texts.append(part.text)
        else:
            texts.append(f"[{getattr(part, 'mime_type', None) or getattr(part, 'type', 'content')}]")
    return "\n".join(texts)


def requested_cap(params: mcp_types.CreateMessageRequestParams) -> int:
    """The request's output cap, within what a user may approve."""
    asked = params.max_tokens if isinstance(params.max_tokens, int) and params.max_tokens > 0 else DEFAULT_MAX_TOKENS
    return min(asked, MAX_TOKENS_CAP)


def approved_request(
    server: str, params: mcp_types.CreateMessageRequestParams, answer: SamplingAnswer
) -> SamplingRequest:
    """The request the model gets: the user's edits where she made them, the server's otherwise."""
    return SamplingRequest(
        server=server,
        messages=answer.messages if answer.messages else tuple(shown_messages(params)),
        system_prompt=params.system_prompt,
        max_tokens=min(answer.max_tokens or requested_cap(params), MAX_TOKENS_CAP),
    )


def parse_answer(action: str, content: dict[str, Any] | None) -> SamplingAnswer:
    """The user's answer as the Odoo layer stored it; raises AiMcpError for one that does not fit."""
    if action not in ANSWERS:
        raise AiMcpError(ErrorCode.INVALID_REQUEST, "Answer with accept, decline or cancel.")
    if action != "accept" or not content:
        return SamplingAnswer(action=action)
    raw = content.get("messages")
    messages = None
    if raw is not None:
        if not isinstance(raw, list) or not raw:
            raise AiMcpError(ErrorCode.INVALID_REQUEST, "The request needs at least one message.")
        try:
            messages = tuple(SamplingText.model_validate(item) for item in raw)
        except ValueError:
            raise AiMcpError(
                ErrorCode.INVALID_REQUEST, "Each message needs a role (user or assistant) and a text."
            ) from None
    cap = content.get("max_tokens")
    if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= MAX_TOKENS_CAP):
        raise AiMcpError(ErrorCode.INVALID_REQUEST, f"The maximum tokens must be between 1 and {MAX_TOKENS_CAP}.")
    return SamplingAnswer(action=action, messages=messages, max_tokens=cap)


def sampling_result(reply: SamplingReply) -> mcp_types.CreateMessageResult:
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text=reply.text),
        model=reply.model,
        stop_reason=reply.stop_reason,
    )


def refusal(message: str, code: int = mcp_types.INVALID_REQUEST) -> mcp_types.ErrorData:
    """The error the server gets instead of a completion: `message` says why."""
    return mcp_types.ErrorData(code=code, message=message)


class CallSampling:
    """The sampling requests of one running call: each shown to the user through `emit`, answered
    by the turn's model once she approved it. `desk` None: nobody can approve (refused)."""

    def __init__(self, call_id: str, emit: Callable[[Any], None], desk: SamplingDesk | None) -> None:
        self.call_id = call_id
        self._emit = emit
        self._desk = desk
        self._open: set[str] = set()
        self._lapsed: set[str] = set()
        self.clock: CallClock | None = None
        # the requests refused because nobody could approve them
        self.refused: list[str] = []

    async def sample(
        self, server: str, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        if self._desk is None:
            self.refused.append(server)
            return refusal(NOBODY_TO_ASK)
        event = SamplingRequiredEvent(
            id=self.call_id,
            sampling=uuid.uuid4().hex,
            server=server,
            messages=shown_messages(params),
            system_prompt=params.system_prompt,
            max_tokens=requested_cap(params),
        )
        answer = await self._approval(event)
        if answer.action != "accept":
            note = self._lapse_note(event.sampling)
            self._close(event.sampling, answer.action, note=note)
            _logger.info("MCP sampling %s: server=%s call=%s", answer.action, server, self.call_id)
            return refusal(note or REFUSED_BY_USER[answer.action], USER_REJECTED)
        return await self._answered(event.sampling, approved_request(server, params, answer))

    async def _approval(self, event: SamplingRequiredEvent) -> SamplingAnswer:
        assert self._desk is not None
        waiting: asyncio.Future[SamplingAnswer] = asyncio.get_running_loop().create_future()
        self._desk.waiting[event.sampling] = waiting
        self._open.add(event.sampling)
        self._emit(event)
        if self.clock is not None:
            self.clock.ask(event.sampling)
        try:
            return await waiting
        finally:
            self._desk.waiting.pop(event.sampling, None)
            if self.clock is not None:
                self.clock.answered(event.sampling)

    async def _answered(
        self, sampling: str, request: SamplingRequest
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        assert self._desk is not None
        if self.clock is not None:
            self.clock.hold()
        try:
            reply = await self._desk.sampler(request)
        except AiMcpError as exc:
            if isinstance(exc, SamplingFailed) and exc.usage is not None:
                self._emit(exc.usage)
            _logger.info("MCP sampling failed: server=%s call=%s code=%s", request.server, self.call_id, exc.code.value)
            self._close(sampling, "cancel", note=exc.message)
            return refusal(f"Sampling failed: {exc.message}", mcp_types.INTERNAL_ERROR)
        finally:
            if self.clock is not None:
                self.clock.release()
        if reply.usage is not None:
            self._emit(reply.usage)
        self._close(sampling, "accept", answer=reply.text, model=reply.model)
        _logger.info("MCP sampling answered: server=%s call=%s model=%s", request.server, self.call_id, reply.model)
        return sampling_result(reply)

    def lapse(self, sampling: str) -> bool:
        """The request waited longer than the question limit: it is cancelled. False: not ours."""
        waiting = self._desk.waiting.get(sampling) if self._desk is not None else None
        if waiting is None:
            return False
        if not waiting.done():
            self._lapsed.add(sampling)
            waiting.set_result(SamplingAnswer(action="cancel"))
        return True

    def _lapse_note(self, sampling: str) -> str | None:
        if sampling not in self._lapsed or self.clock is None:
            return None
        return f"No answer within {spoken_duration(self.clock.limits.question)}: the sampling request was cancelled."

    def finish(self) -> None:
        """The call ended: requests still open are closed (the server stopped waiting)."""
        for sampling in list(self._open):
            self._close(sampling, "cancel")
            if self._desk is not None and (waiting := self._desk.waiting.get(sampling)) is not None:
                waiting.cancel()

    def _close(self, sampling: str, action: str, **done: Any) -> None:
        if sampling in self._open:
            self._open.discard(sampling)
            self._emit(SamplingDoneEvent(id=self.call_id, sampling=sampling, action=action, **done))
