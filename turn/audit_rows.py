"""The audit rows (`ai.tool.call`) of a turn's calls as its events are written.

A call's row is written when the call starts running, in the transaction that stores its
`tool_call` (or the `start` of the turn resumed after its approval), completed with its result, and
marked interrupted when the turn stops while it runs. A call put to wait for the user did not reach
its server: its row comes when it runs. Which calls run again or wait is what their messages say
(messages.py), written just before.
"""

from __future__ import annotations

import time
from typing import Any

from ..services.events import (
    ApprovalRequiredEvent,
    AuthRequiredEvent,
    ErrorEvent,
    StartEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from .event_dispatch import records
from .messages import MessageWriter


class AuditRows:
    """The audit rows of the calls of one run of a turn."""

    def __init__(self, conversation_id: int, audit_known: dict, messages: MessageWriter) -> None:
        self.conversation_id = conversation_id
        self.messages = messages
        # what each call of this run was stored with: (server, tool, arguments, approval), for its audit row
        self.tool_calls: dict[str, tuple[str, str, Any, str | None]] = {}
        self.audit_known: dict[Any, Any] = dict(audit_known)
        # the audit row of each call that started running in this run, by call id, and when it started
        self.audit_rows: dict[str, int] = {}
        self.audit_started: dict[int, float] = {}
        # the calls whose audit row this run tried to write, and those of them its next commit confirms
        self.audit_tried: set[str] = set()
        self.audit_unconfirmed: list[str] = []

    @records(StartEvent)
    def _start(self, env, seq, event):
        for message in self.messages.resumed:
            call = (message.server_name or "", message.tool_name or "", message.arguments, message.approval or None)
            self._audit_start(env, message.tool_call_id, call)

    @records(ToolCallEvent)
    def _tool_call(self, env, seq, event):
        self.audit_call(env, event)

    @records(ToolResultEvent)
    def _tool_result(self, env, seq, event):
        message = self.messages.tool_message(env, event.id)
        started = env["ai.tool.call"].browse(self.audit_rows.pop(event.id, None))
        self.audit_started.pop(started.id, None)
        env["ai.tool.call"]._record_tool_result(
            self.conversation_id, message, event, self.tool_calls.get(event.id), self.audit_known, started
        )

    @records(ApprovalRequiredEvent, AuthRequiredEvent)
    def _paused(self, env, seq, event):
        """The calls put to wait for the user did not reach their server: their row comes when they run."""
        rows = [self.audit_rows.pop(call_id) for call_id in self.messages.waiting if call_id in self.audit_rows]
        if rows:
            env["ai.tool.call"].browse(rows).unlink()

    @records(ErrorEvent)
    def _error(self, env, seq, event):
        if self.audit_rows:
            now = time.monotonic()
            durations = {row: int((now - self.audit_started[row]) * 1000) for row in self.audit_rows.values()}
            env["ai.tool.call"]._record_interrupted(self.conversation_id, event.code, durations)
            self.audit_rows.clear()

    def audit_call(self, env, event: ToolCallEvent) -> None:
        """The audit row of the call `event`, when it runs at once (not waiting for an approval):
        written once, whether the writer meets the call before its event is stored (to commit the
        row before the call is sent) or with it."""
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
