"""A ClientSession that answers a server's elicitation requests from a task of their own.

Written by hand because mcp 1.x runs the handler of a server request inside the session's receive
loop: while a user fills in a form, which may take minutes, no other message of that session would
be read, neither this call's progress nor the results of other calls sharing the pooled session.
Here the request is taken out of the loop and answered when the user has answered (or the call
ended); everything else is the SDK's own behaviour.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import ClientSession
from mcp import types as mcp_types
from mcp.shared.context import RequestContext
from mcp.shared.session import RequestResponder

_logger = logging.getLogger(__name__)

Ask = Callable[[mcp_types.ElicitRequestParams], Awaitable[mcp_types.ElicitResult]]


class ElicitingClientSession(ClientSession):
    def __init__(self, *args: Any, ask: Ask, **kwargs: Any) -> None:
        # a callback of our own makes the SDK declare the elicitation capability (form and URL)
        super().__init__(*args, elicitation_callback=self._elicitation_callback_unused, **kwargs)
        self._ask = ask
        self._asking: set[asyncio.Task[None]] = set()

    async def _elicitation_callback_unused(
        self, _context: RequestContext[ClientSession, Any], _params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        # _received_request below takes every elicitation request before the SDK would call this
        return mcp_types.ElicitResult(action="cancel")

    async def _received_request(
        self, responder: RequestResponder[mcp_types.ServerRequest, mcp_types.ClientResult]
    ) -> None:
        request = responder.request.root
        if isinstance(request, mcp_types.ElicitRequest) and request.params.task is None:
            task = asyncio.create_task(self._answer(responder, request.params), name="mcp-elicitation")
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
            return
        await super()._received_request(responder)

    async def _answer(
        self,
        responder: RequestResponder[mcp_types.ServerRequest, mcp_types.ClientResult],
        params: mcp_types.ElicitRequestParams,
    ) -> None:
        # the responder's scope: a notifications/cancelled from the server for this request ends the wait
        with responder:
            try:
                result = await self._ask(params)
            except asyncio.CancelledError:
                if responder.cancelled:
                    return  # the responder already answered the server
                result = mcp_types.ElicitResult(action="cancel")
            try:
                await responder.respond(mcp_types.ClientResult(root=result))
            except Exception as exc:  # the session may be gone by the time the user answers
                _logger.info("MCP elicitation answer not sent: action=%s error=%s", result.action, exc)
