"""What an MCP App sees of its tool's call while the model is still writing it: the arguments so far,
as `tool_input` events.

Only calls to a tool with an app, on a server whose apps are shown, are followed; a reply calling
other tools is read as it always was. A model writes arguments in many small pieces, and each event
goes to the browser: one goes out at most every TOOL_INPUT_INTERVAL seconds per call, and only when
what is known of the arguments changed. What came after a call's last event is not sent on its
own: the call's `tool_call` follows with the whole arguments.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..call_clock import Now
from ..events import ToolInputEvent
from ..llm import ToolCallDelta
from ._partial_json import partial_object
from .tool_runner import BoundTool

TOOL_INPUT_INTERVAL = 0.1


@dataclass
class _Writing:
    """One call as the model streams it."""

    id: str | None = None
    name: str = ""
    text: str = ""
    sent_at: float = -math.inf
    sent: dict | None = None


class ToolInputStream:
    """The calls of one model reply to app tools, followed piece by piece."""

    def __init__(self, apps: Mapping[str, BoundTool], now: Now, interval: float = TOOL_INPUT_INTERVAL) -> None:
        self._apps = apps
        self._now = now
        self._interval = interval
        self._calls: dict[int, _Writing] = {}

    @classmethod
    def of(cls, tools: Mapping[str, BoundTool], now: Now) -> ToolInputStream | None:
        """A stream following the app tools among `tools` (by the name the model calls them);
        None when there is none to follow."""
        apps = {name: tool for name, tool in tools.items() if tool.info.app_uri and tool.server.apps}
        return cls(apps, now) if apps else None

    def feed(self, delta: ToolCallDelta) -> ToolInputEvent | None:
        """The event `delta` makes due, if any."""
        if delta.index is None:  # a piece that names no call is a whole call: nothing to follow
            return None
        call = self._calls.get(delta.index)
        # pieces of one index with another id are another call (as LangChain reads them)
        if call is None or (delta.id and call.id and delta.id != call.id):
            call = self._calls[delta.index] = _Writing()
        call.id = call.id or delta.id
        call.name += delta.name or ""
        call.text += delta.arguments
        tool = self._apps.get(call.name)
        if tool is None or call.id is None:
            return None
        now = self._now()
        if now - call.sent_at < self._interval:
            return None
        arguments = partial_object(call.text)
        if arguments == call.sent:
            return None
        call.sent_at, call.sent = now, arguments
        return ToolInputEvent(
            id=call.id,
            name=call.name,
            tool=tool.info.name,
            title=tool.info.display_title,
            server=tool.server.name,
            app=tool.info.app_uri or "",
            arguments=arguments,
        )
