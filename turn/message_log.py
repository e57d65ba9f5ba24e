"""What each event of a turn means for the conversation's messages and state.

The message log of a conversation (`ai.message`: the user's messages, the assistant's replies, one
message per tool call with its status) is kept up to date from the events as they are written, in
the writer's transaction. One handler per event type, in HANDLERS; an event without one changes
nothing but its own row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ..services.events import FAILED_CALL_STATUS, Event
from ..services.loop import SpendGuard
from .call_requests import CallRequests
from .sql_rows import insert_row, update_row
from .states import ConversationState, MessageStatus
from .usage_rows import UsageContext, UsageLedger


class StateChange(NamedTuple):
    """What an event changes on the conversation: its state and the rounds used (None: unchanged)."""

    state: str | None = None
    rounds: int | None = None


class MessageLog:
    """The messages of one run of a turn, brought up to date event by event."""

    def __init__(
        self,
        conversation_id: int,
        registry: Any,
        requests: CallRequests,
        audit_known: dict,
        usage: UsageContext | None = None,
        spend: SpendGuard | None = None,
    ) -> None:
        self.conversation_id = conversation_id
        # None: a turn refused before any model call records no usage
        self.usage = UsageLedger(usage, spend) if usage is not None else None
        self.registry = registry
        self.requests = requests
        # the model reply being streamed: its text, calls and first sequence number
        self.reply_text: list[str] = []
        self.reply_thinking: list[str] = []
        self.reply_calls: list[dict[str, Any]] = []
        self.reply_seq: int | None = None
        self.reply_message_id: int | None = None
        self.reply_logged: dict[str, Any] | None = None  # what the reply's message holds
        self.reply_finished = False  # its model call completed (its usage came, not incomplete)
        self.tool_messages: dict[str, int] = {}
        self.running: set[str] = set()
        # what each call of this run was stored with: (server, tool, arguments, approval), for its audit row
        self.tool_calls: dict[str, tuple[str, str, Any, str | None]] = {}
        self.audit_known: dict[Any, Any] = dict(audit_known)
        # the audit row of each call that started running in this run, by call id, and when it started
        self.audit_rows: dict[str, int] = {}
        self.audit_started: dict[int, float] = {}
        # the calls whose audit row this run tried to write, and those of them its next commit confirms
        self.audit_tried: set[str] = set()
        self.audit_unconfirmed: list[str] = []

    def apply(self, env, seq: int, event: Event) -> tuple[Event, StateChange | None]:
        """Brings the messages up to date with one event; returns the event to store (a `done` gets
        its message id) and what it changes on the conversation."""
        handler = HANDLERS.get(event.type)
        if handler is None:
            return event, None
        return handler(self, env, seq, event)

    # -- one handler per event type ------------------------------------------------------------

    def _start(self, env, seq, event):
        # a turn resumed after an approval runs the calls that waited for it
        resumed = self._tool_messages_in(env, (MessageStatus.PENDING,))
        resumed.write({"status": MessageStatus.RUNNING})
        self.running.update(resumed.mapped("tool_call_id"))
        for message in resumed:
            call = (message.server_name or "", message.tool_name or "", message.arguments, message.approval or None)
            self._audit_start(env, message.tool_call_id, call)
        return event, None

    def _text(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        self.reply_text.append(event.delta)
        return event, None

    def _thinking(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        self.reply_thinking.append(event.delta)
        return event, None

    def _round(self, env, seq, event):
        self._end_reply(env)
        self.reply_finished = False  # a reply without text or calls of its own logs no message
        return event, StateChange(rounds=event.n)

    def _tool_call(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        self.reply_calls.append({"id": event.id, "name": event.name, "arguments": event.arguments})
        # the reply is logged before its first call: a reply without text has the seq of that
        # call, and (seq, id) must still list the call before its result
        self._log_reply(env)
        self.tool_messages[event.id] = insert_row(
            env["ai.message"],
            {
                "conversation_id": self.conversation_id,
                "role": "tool",
                "seq": seq,
                "tool_call_id": event.id,
                "tool_name": event.tool,
                "server_name": event.server,
                "arguments": event.arguments or None,
                "status": MessageStatus.RUNNING,
                "approval": event.approval or False,
            },
        )
        self.running.add(event.id)
        self.audit_call(env, event)
        return event, None

    def _tool_result(self, env, seq, event):
        self._end_reply(env)
        self.running.discard(event.id)
        if not self.running:
            self.requests.forget(self.registry, self.conversation_id)
        message = self._tool_message(env, event.id)
        if message:
            status = MessageStatus.DONE if event.ok else FAILED_CALL_STATUS.get(event.error_code, MessageStatus.ERROR)
            update_row(
                env["ai.message"],
                message.id,
                {
                    "status": status,
                    "content": event.model_text,
                    "duration_ms": event.duration_ms,
                    "error_code": event.error_code or False,
                },
            )
        started = env["ai.tool.call"].browse(self.audit_rows.pop(event.id, None))
        self.audit_started.pop(started.id, None)
        env["ai.tool.call"]._record_tool_result(
            self.conversation_id, message, event, self.tool_calls.get(event.id), self.audit_known, started
        )
        return event, None

    def _model_refused_param(self, env, seq, event):
        # the model record learns it in the turn's transaction: the next turn leaves the parameter out
        provider = env["ai.conversation"].browse(self.conversation_id).assistant_id.provider_id
        if provider:
            provider._learn_refused_param(event.model, event.param, event.message)
        return event, None

    def _usage(self, env, seq, event):
        self.reply_finished = not event.incomplete
        if self.usage is not None:
            self.usage.record(env, self.conversation_id, event)
        return event, None

    def _tool_search(self, env, seq, event):
        # the tools found stay offered in the conversation's next turns (services/loop/offered_tools.py)
        kept = [key.model_dump() for key in event.kept]
        update_row(env["ai.conversation"], self.conversation_id, {"found_tools": kept})
        return event, None

    def _elicitation_done(self, env, seq, event):
        if event.note:
            message = self._tool_message(env, event.id)
            if message:
                update_row(env["ai.message"], message.id, {"note": event.note})
        return event, None

    def _approval_required(self, env, seq, event):
        self._end_reply(env)
        # the calls that need no approval wait with the others
        waiting = self._tool_messages_in(env, (MessageStatus.RUNNING,))
        for call in event.calls:
            waiting |= self._tool_message(env, call.id)
        waiting.write({"status": MessageStatus.PENDING})
        self._audit_unstarted(env, waiting.mapped("tool_call_id"))
        return event, StateChange(state=ConversationState.AWAITING_APPROVAL)

    def _auth_required(self, env, seq, event):
        self._end_reply(env)
        waiting = env["ai.message"].browse()
        for call in event.calls:
            waiting |= self._tool_message(env, call.id)
        waiting.write({"status": MessageStatus.PENDING})
        self._audit_unstarted(env, waiting.mapped("tool_call_id"))
        return event, StateChange(state=ConversationState.AWAITING_AUTH)

    def _confirm_continue(self, env, seq, event):
        self._end_reply(env)
        return event, StateChange(state=ConversationState.AWAITING_CONFIRMATION, rounds=event.rounds_used)

    def _done(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        answer = self._log_reply(env, usage=event.usage or None, rounds=event.rounds)
        self._reset_reply()
        return event.model_copy(update={"message_id": answer.id}), StateChange(ConversationState.IDLE, event.rounds)

    def _error(self, env, seq, event):
        # a reply the model never finished keeps what the user was shown of it, marked so
        self._end_reply(env, **({} if self.reply_finished else {"interrupted": True}))
        interrupted = self._tool_messages_in(env, MessageStatus.OPEN)
        interrupted.write({"status": MessageStatus.ERROR, "error_code": event.code})
        if self.audit_rows:
            now = time.monotonic()
            durations = {row: int((now - self.audit_started[row]) * 1000) for row in self.audit_rows.values()}
            env["ai.tool.call"]._record_interrupted(self.conversation_id, event.code, durations)
            self.audit_rows.clear()
        return event, StateChange(state=ConversationState.IDLE)

    # -- the audit rows of the calls that run ---------------------------------------------------

    def audit_call(self, env, event) -> None:
        """The audit row of the ToolCallEvent `event`, when the call runs at once (not waiting for
        an approval): written once, whether the writer meets the call before its event is stored
        (to commit the row before the call is sent) or with it."""
        self.tool_calls[event.id] = (event.server, event.tool, event.arguments or None, event.approval)
        if not event.requires_approval and event.id not in self.audit_tried:
            self._audit_start(env, event.id, self.tool_calls[event.id])

    def take_audited(self) -> list[str]:
        """The calls whose audit row the transaction just committed wrote (or failed to write: the
        audit never stops a call), once."""
        audited, self.audit_unconfirmed = self.audit_unconfirmed, []
        return audited

    def _audit_start(self, env, call_id: str, call: tuple[str, str, Any, str | None]) -> None:
        self.audit_tried.add(call_id)
        self.audit_unconfirmed.append(call_id)
        started = env["ai.tool.call"]._record_tool_start(self.conversation_id, call_id, call, self.audit_known)
        if started:
            self.audit_rows[call_id] = started.id
            self.audit_started[started.id] = time.monotonic()

    def _audit_unstarted(self, env, call_ids: list[str]) -> None:
        """The calls put to wait for the user did not reach their server: their row comes when they run."""
        rows = [self.audit_rows.pop(call_id) for call_id in call_ids if call_id in self.audit_rows]
        if rows:
            env["ai.tool.call"].browse(rows).unlink()

    # -- the assistant's reply and the calls' messages -----------------------------------------

    def _end_reply(self, env, **values) -> None:
        """The model reply that was streaming ended: log it as an assistant message."""
        if self.reply_seq is None:
            return
        self._log_reply(env, **values)
        self._reset_reply()

    def _log_reply(self, env, **values):
        """Creates or brings up to date the assistant message of the reply being streamed."""
        values.update(
            content="".join(self.reply_text),
            thinking="".join(self.reply_thinking) or None,
            tool_calls=list(self.reply_calls) or None,
        )
        Message = env["ai.message"]
        if self.reply_message_id is None:
            self.reply_message_id = insert_row(
                Message,
                {"conversation_id": self.conversation_id, "role": "assistant", "seq": self.reply_seq, **values},
            )
        elif values != self.reply_logged:
            update_row(Message, self.reply_message_id, values)
        self.reply_logged = values
        return Message.browse(self.reply_message_id)

    def _reset_reply(self) -> None:
        self.reply_text = []
        self.reply_thinking = []
        self.reply_calls = []
        self.reply_seq = None
        self.reply_message_id = None
        self.reply_logged = None
        self.reply_finished = False

    def _tool_message(self, env, call_id: str):
        Message = env["ai.message"]
        if call_id in self.tool_messages:
            return Message.browse(self.tool_messages[call_id])
        # a call of an earlier run of this turn (resumed after an approval)
        return Message.search(
            [("conversation_id", "=", self.conversation_id), ("role", "=", "tool"), ("tool_call_id", "=", call_id)],
            order="id desc",
            limit=1,
        )

    def _tool_messages_in(self, env, statuses: tuple[str, ...]):
        return env["ai.message"].search(
            [("conversation_id", "=", self.conversation_id), ("role", "=", "tool"), ("status", "in", statuses)]
        )


HANDLERS: dict[str, Callable[..., tuple[Event, StateChange | None]]] = {
    "start": MessageLog._start,
    "text": MessageLog._text,
    "thinking": MessageLog._thinking,
    "round": MessageLog._round,
    "tool_call": MessageLog._tool_call,
    "tool_result": MessageLog._tool_result,
    "model_refused_param": MessageLog._model_refused_param,
    "tool_search": MessageLog._tool_search,
    "usage": MessageLog._usage,
    "elicitation_done": MessageLog._elicitation_done,
    "approval_required": MessageLog._approval_required,
    "auth_required": MessageLog._auth_required,
    "confirm_continue": MessageLog._confirm_continue,
    "done": MessageLog._done,
    "error": MessageLog._error,
}
