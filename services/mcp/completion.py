"""Suggestions for a prompt's argument or a resource template's value as the user types it (MCP
completion/complete).

Suggestions are a convenience: a server that is slow, fails or refuses gives none, quietly (the log
says which server and how long it took), and a server that does not declare the `completions`
capability is never asked.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio
from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict

from ..errors import AiMcpError
from ..server_spec import ServerSpec
from ._redaction import mask_secrets, secret_values
from .session import McpSession

_logger = logging.getLogger(__name__)

# the spec's cap on the values of one answer
MAX_COMPLETIONS = 100
# an answer later than this comes after the user typed on: a suggestion is no use then (connecting
# is bounded by the server's own connect timeout: the listing the form came from connected already)
COMPLETION_TIMEOUT = 5.0


class CompletionRequest(BaseModel):
    """What to complete: argument `argument` of prompt `name` (kind "prompt") or of the resource
    template whose URI template is `name` (kind "template"), from `value`, with the other arguments
    already filled in (`context`)."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["prompt", "template"]
    name: str
    argument: str
    value: str = ""
    context: dict[str, str] = {}

    def reference(self) -> mcp_types.PromptReference | mcp_types.ResourceTemplateReference:
        if self.kind == "prompt":
            return mcp_types.PromptReference(type="ref/prompt", name=self.name)
        return mcp_types.ResourceTemplateReference(type="ref/resource", uri=self.name)


class Completions(BaseModel):
    model_config = ConfigDict(frozen=True)
    values: list[str] = []
    has_more: bool = False


def offers_completions(session: McpSession) -> bool:
    return session.info is not None and "completions" in session.info.capabilities


async def complete(session: McpSession, request: CompletionRequest, timeout: float = COMPLETION_TIMEOUT) -> Completions:
    """The server's suggestions, at most MAX_COMPLETIONS, within `timeout` seconds (else TimeoutError);
    none, unasked, without the capability."""
    if not offers_completions(session):
        return Completions()
    context = {k: v for k, v in request.context.items() if k != request.argument and v}
    with anyio.fail_after(timeout):
        result = await session.send(
            session.client.complete(
                request.reference(), {"name": request.argument, "value": request.value}, context or None
            )
        )
    values = result.completion.values
    return Completions(
        values=values[:MAX_COMPLETIONS], has_more=bool(result.completion.has_more) or len(values) > MAX_COMPLETIONS
    )


async def quietly(
    spec: ServerSpec, asking: Callable[[], Awaitable[Completions]], now: Callable[[], float] = time.monotonic
) -> Completions:
    """`asking()`'s answer; none when it fails or is late, logged with the server and how long it took."""
    started = now()
    try:
        return await asking()
    except (AiMcpError, TimeoutError) as exc:
        _logger.info(
            "MCP completion gave nothing: server=%s duration=%.2fs error=%s",
            spec.name,
            now() - started,
            mask_secrets(str(exc), secret_values(spec)) or type(exc).__name__,
        )
        return Completions()
