"""The conversation's messages as a turn's events are written, and the state they leave it in.

The message log of a conversation (`ai.message`: the assistant's replies, one message per tool call
with its status) is kept up to date from the events as they are written, in the writer's
transaction; a pause or the end of the turn sets the conversation's state (StateChange). The audit
rows of the calls (audit_rows.py) follow the calls' messages: this writer says which calls a pause
put to wait and which ones a resumed turn runs.
"""

from __future__ import annotations

from typing import Any

from ..services.events import (
    FAILED_CALL_STATUS,
    ApprovalRequiredEvent,
    AuthRequiredEvent,
    ConfirmContinueEvent,
    DoneEvent,
    ElicitationDoneEvent,
    ErrorEvent,
    RoundEvent,
    SamplingDoneEvent,
    StartEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from .call_requests import CallRequests
from .event_dispatch import StateChange, records
from .sql_rows import insert_row, update_row
from .states import ConversationState, MessageStatus


class MessageWriter:
    """The messages of one run of a turn, brought up to date event by event."""

    def __init__(self, conversation_id: int, registry: Any, requests: CallRequests) -> None:
        self.conversation_id = conversation_id
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
        # the messages of the calls the last `start` runs again (resumed after an approval), and the
        # ids of the calls the last pause put to wait: what the audit rows follow
        self.resumed: Any = None
        self.waiting: list[str] = []

    @records(StartEvent)
    def _start(self, env, seq, event):
        # a turn resumed after an approval runs the calls that waited for it
        self.resumed = self._tool_messages_in(env, (MessageStatus.PENDING,))
        self.resumed.write({"status": MessageStatus.RUNNING})
        self.running.update(self.resumed.mapped("tool_call_id"))

    @records(TextEvent)
    def _text(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        self.reply_text.append(event.delta)

    @records(ThinkingEvent)
    def _thinking(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        self.reply_thinking.append(event.delta)

    @records(RoundEvent)
    def _round(self, env, seq, event):
        self._end_reply(env)
        self.reply_finished = False  # a reply without text or calls of its own logs no message
        return event, StateChange(rounds=event.n)

    @records(ToolCallEvent)
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

    @records(ToolResultEvent)
    def _tool_result(self, env, seq, event):
        self._end_reply(env)
        self.running.discard(event.id)
        if not self.running:
            self.requests.forget(self.registry, self.conversation_id)
        message = self.tool_message(env, event.id)
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

    @records(UsageEvent)
    def _usage(self, env, seq, event):
        if not event.sampling:  # a server's sampling request is answered by a call of its own
            self.reply_finished = not event.incomplete

    @records(ElicitationDoneEvent, SamplingDoneEvent)
    def _elicitation_done(self, env, seq, event):
        if event.note:
            message = self.tool_message(env, event.id)
            if message:
                update_row(env["ai.message"], message.id, {"note": event.note})

    @records(ApprovalRequiredEvent)
    def _approval_required(self, env, seq, event):
        self._end_reply(env)
        # the calls that need no approval wait with the others
        waiting = self._tool_messages_in(env, (MessageStatus.RUNNING,))
        for call in event.calls:
            waiting |= self.tool_message(env, call.id)
        self._put_to_wait(waiting)
        return event, StateChange(state=ConversationState.AWAITING_APPROVAL)

    @records(AuthRequiredEvent)
    def _auth_required(self, env, seq, event):
        self._end_reply(env)
        waiting = env["ai.message"].browse()
        for call in event.calls:
            waiting |= self.tool_message(env, call.id)
        self._put_to_wait(waiting)
        return event, StateChange(state=ConversationState.AWAITING_AUTH)

    @records(ConfirmContinueEvent)
    def _confirm_continue(self, env, seq, event):
        self._end_reply(env)
        return event, StateChange(state=ConversationState.AWAITING_CONFIRMATION, rounds=event.rounds_used)

    @records(DoneEvent)
    def _done(self, env, seq, event):
        if self.reply_seq is None:
            self.reply_seq = seq
        answer = self._log_reply(env, usage=event.usage or None, rounds=event.rounds)
        self._reset_reply()
        return event.model_copy(update={"message_id": answer.id}), StateChange(ConversationState.IDLE, event.rounds)

    @records(ErrorEvent)
    def _error(self, env, seq, event):
        # a reply the model never finished keeps what the user was shown of it, marked so
        self._end_reply(env, **({} if self.reply_finished else {"interrupted": True}))
        interrupted = self._tool_messages_in(env, MessageStatus.OPEN)
        interrupted.write({"status": MessageStatus.ERROR, "error_code": event.code})
        return event, StateChange(state=ConversationState.IDLE)

    # -- the assistant's reply and the calls' messages -----------------------------------------

    def _put_to_wait(self, waiting) -> None:
        waiting.write({"status": MessageStatus.PENDING})
        self.waiting = waiting.mapped("tool_call_id")

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

    def tool_message(self, env, call_id: str):
        """The message of the call `call_id` (none when it has none)."""
        Message = env["ai.message"]
        if call_id in self.tool_messages:
            return Message.browse(self.tool_messages[call_id])
        # a call of an earlier run of this turn (resumed after an approval), looked up once
        message = Message.search(
            [("conversation_id", "=", self.conversation_id), ("role", "=", "tool"), ("tool_call_id", "=", call_id)],
            order="id desc",
            limit=1,
        )
        if message:
            self.tool_messages[call_id] = message.id
        return message

    def _tool_messages_in(self, env, statuses: tuple[str, ...]):
        return env["ai.message"].search(
            [("conversation_id", "=", self.conversation_id), ("role", "=", "tool"), ("status", "in", statuses)]
        )
