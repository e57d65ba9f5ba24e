"""What a server sends a session besides answers: log messages, questions for the user
(elicitation), requests for a completion of the assistant's model (sampling), announcements that a
list changed, and output that is not JSON-RPC. Each is routed to the call it is about, when that can
be told; a pooled session serves several users' calls."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
from collections.abc import Callable, Iterator
from typing import Any, get_args

from mcp import types as mcp_types
from mcp.client import ClientRequestContext

from ..server_spec import LogLevel, ServerSpec
from ._list_changes import LIST_CHANGES
from .call_observer import CallObserver
from .sampling import NOBODY_TO_ASK, refusal

_logger = logging.getLogger(__name__)

# MCP's syslog levels (RFC 5424), lowest first, and as Python's
MCP_LEVELS: tuple[str, ...] = get_args(LogLevel)
LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
# the observer of the call running in this task, which the SDK's handlers of what a server sends
# on that call's own stream inherit (ServerMessages.sender_observer)
_CALL_OBSERVER: contextvars.ContextVar[CallObserver | None] = contextvars.ContextVar("mcp_call_observer", default=None)
_call_numbers = itertools.count(1)


class ServerMessages:
    """The message callbacks of one session to `spec`'s server. `on_list_changed(spec, list)`
    hears a handshake-era list change (list_changes.py listens at 2026-07-28, when `stateless`)."""

    def __init__(self, spec: ServerSpec, on_list_changed: Callable[[ServerSpec, str], None] | None) -> None:
        self.spec = spec
        self.on_list_changed = on_list_changed
        self.observers: dict[int, CallObserver] = {}
        self.stateless = False

    @contextlib.contextmanager
    def observing(self, observer: CallObserver | None) -> Iterator[None]:
        """While a call runs in this task: what the server sends about it reaches `observer`."""
        number = next(_call_numbers)
        if observer is not None:
            self.observers[number] = observer
        token = _CALL_OBSERVER.set(observer)
        try:
            yield
        finally:
            _CALL_OBSERVER.reset(token)
            self.observers.pop(number, None)

    async def on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """A server log message goes to Odoo's log, and to the tool block of the call it belongs
        to: the call whose own stream it came on (`sender_observer`), else the only call running
        on the session. With several calls running and no stream to tell them apart it is not
        shown in any, so that no user sees another user's call's messages."""
        if self.spec.log_level and MCP_LEVELS.index(params.level) < MCP_LEVELS.index(self.spec.log_level):
            return  # servers need not honour the level; the setting holds all the same
        observer = self.sender_observer()
        shown = observer is not None and observer.log(params.level, params.logger, params.data)
        _logger.log(
            LOG_LEVELS.get(params.level, logging.INFO),
            "MCP server log: server=%s level=%s logger=%s call=%s %s",
            self.spec.name,
            params.level,
            params.logger or "",
            observer.call_id if shown and observer is not None else "-",
            str(params.data)[:2000],
        )

    def sender_observer(self) -> CallObserver | None:
        """The call a server's message is about. The SDK hands a message to us in the context of
        the task that sent the request it came with: a call's own HTTP stream (a 2025 server's
        question or log over streamable HTTP, a 2026 server's question, which is the call's
        result) carries that call's observer. A message that came on no call's stream (stdio, SSE,
        a standalone stream) is the only running call's, when one runs."""
        observer = _CALL_OBSERVER.get()
        if observer is not None:
            return observer
        observers = list(self.observers.values())
        return observers[0] if len(observers) == 1 else None

    async def on_elicit(
        self, _context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """A server asks the user something during a call: the question goes to that call's user
        (`sender_observer`), and is cancelled when it cannot be told whose it is, so that no user
        is ever shown another user's question. The SDK asks it in a task of its own, so the
        session's other messages keep flowing while a person answers."""
        observer = self.sender_observer()
        if observer is None:
            _logger.warning(
                "MCP elicitation cancelled: server=%s calls_running=%d (cannot tell whose it is)",
                self.spec.name,
                len(self.observers),
            )
            return mcp_types.ElicitResult(action="cancel")
        _logger.info("MCP elicitation: server=%s call=%s mode=%s", self.spec.name, observer.call_id, params.mode)
        return await observer.elicit(self.spec.name, params)

    async def on_sample(
        self, _context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """A server asks the assistant's model for a completion during a call: the request goes
        to that call's user for approval (sampling.py), and is refused when it cannot be told whose
        call it is (a sync, another user's call on a pooled session), so that only a user who sees
        the request spends the model on it."""
        observer = self.sender_observer()
        if observer is None:
            _logger.warning(
                "MCP sampling refused: server=%s calls_running=%d (cannot tell whose it is)",
                self.spec.name,
                len(self.observers),
            )
            return refusal(NOBODY_TO_ASK)
        _logger.info("MCP sampling: server=%s call=%s", self.spec.name, observer.call_id)
        return await observer.sampling.sample(self.spec.name, params)

    async def on_message(self, message: Any) -> None:
        """List changes of a handshake-era connection are announced to the hub. The SDK also
        hands here a line of a stdio server's output that is not JSON-RPC (a stray print): it is
        logged, and the session goes on, as the answers around it are whole."""
        kind = LIST_CHANGES.get(type(message))
        if kind is not None:
            # at 2026-07-28 the SDK hands the listen stream's changes here too: list_changes.py
            # reports those
            if self.on_list_changed is not None and not self.stateless:
                _logger.info("MCP list changed: server=%s list=%s", self.spec.label(), kind)
                self.on_list_changed(self.spec, kind)
            return
        if not isinstance(message, Exception):
            return
        if not isinstance(message, ValueError):  # pydantic's ValidationError and json's errors are ValueErrors
            # e.g. the server's answer to a request we cancelled, whose id the SDK has forgotten
            _logger.debug("MCP message ignored: server=%s %s", self.spec.label(), message)
            return
        reason = (str(message).splitlines() or [type(message).__name__])[0][:200]
        _logger.warning("MCP output that is not JSON-RPC ignored: server=%s error=%s", self.spec.label(), reason)
