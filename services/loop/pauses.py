"""The events that pause a turn for the user: the calls waiting for an approval, and the sign-ins
their servers need first. Built from plain data, so the loop only says when to pause."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import urlencode

from ..errors import AuthRequired
from ..events import ApprovalRequiredEvent, AuthRequiredEvent, PendingCall, RecordChange, SignIn, ToolCallEvent
from .turn_tools import SignInLink


def pending(call: ToolCallEvent, changes: Sequence[RecordChange] = ()) -> PendingCall:
    """`call` as a pause shows it while it waits, with what it would change where that is known."""
    return PendingCall(
        id=call.id,
        tool=call.tool,
        title=call.title,
        server=call.server,
        arguments=call.arguments,
        changes=list(changes),
    )


def approval_pause(
    calls: Iterable[ToolCallEvent], turn_ms: int, changes: Mapping[str, Sequence[RecordChange]] | None = None
) -> ApprovalRequiredEvent:
    """The pause asking the user to allow `calls`; `changes`: by call id, what each would change."""
    changes = changes or {}
    return ApprovalRequiredEvent(calls=[pending(c, changes.get(c.id, ())) for c in calls], turn_ms=turn_ms)


def sign_in_pause(
    refusals: Mapping[str, AuthRequired],
    links: Mapping[str, SignInLink],
    calls: Iterable[ToolCallEvent],
    turn_ms: int,
) -> AuthRequiredEvent:
    """The pause asking the user to sign in to each server of `refusals` (by server key), where
    `links` say; a step-up asks the scope the server named."""
    servers = []
    for key, refusal in refusals.items():
        link = links[key]
        query = {"step_up": "1", "scope": refusal.scope or ""} if refusal.step_up else {}
        servers.append(
            SignIn(
                server_id=link.server_id,
                server=refusal.server_name,
                url=f"{link.url}&{urlencode(query)}" if query else link.url,
                step_up=refusal.step_up,
                scope=refusal.scope,
                message=refusal.message,
            )
        )
    return AuthRequiredEvent(servers=servers, calls=[pending(c) for c in calls], turn_ms=turn_ms)
