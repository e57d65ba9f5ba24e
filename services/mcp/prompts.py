"""A server's prompts (MCP prompts/list and prompts/get) for the composer's `/` menu.

A prompt's messages start a turn as the user's message: what the user sees in the chat is what the
model reads. Text is taken as it is; an embedded text resource comes with its URI; anything else
(images, audio, binary resources) is named, not sent, as the chat's user messages are text.
"""

from __future__ import annotations

from typing import Any

from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode, McpError
from .session import McpSession

MAX_PROMPTS = 200


class PromptArgument(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    description: str | None = None
    required: bool = False


class PromptInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = []
    # whether its server suggests values for its arguments (completion.py)
    completions: bool = False

    def missing(self, arguments: dict[str, str]) -> list[str]:
        return [a.name for a in self.arguments if a.required and not (arguments.get(a.name) or "").strip()]


async def list_prompts(session: McpSession) -> list[PromptInfo]:
    """Every prompt of the server (paginated, capped); none when it does not declare prompts."""
    if session.info is None or "prompts" not in session.info.capabilities:
        return []
    prompts = await session.list_pages(
        lambda c, cursor: c.list_prompts(cursor=cursor), lambda page: page.prompts, MAX_PROMPTS
    )
    completes = "completions" in session.info.capabilities
    return [_info(p, completes) for p in prompts]


async def get_prompt(session: McpSession, prompt: PromptInfo, arguments: dict[str, Any]) -> str:
    """The prompt's messages as one user message. Arguments are strings (as the spec has them);
    a missing required one is refused here, naming it, before the server is asked."""
    values = {str(k): str(v) for k, v in arguments.items() if v is not None and str(v) != ""}
    missing = prompt.missing(values)
    if missing:
        raise McpError(
            ErrorCode.MCP_INVALID_PARAMS,
            f"The prompt {prompt.name} needs {', '.join(missing)}: fill them in and send it again.",
        )
    try:
        result = await session.send(session.client.get_prompt(prompt.name, values))
    except McpError as exc:
        if exc.code is not ErrorCode.MCP_EXECUTION_ERROR:
            raise
        # the server's words may not name the prompt (an mcp 2.x server says "Internal server error")
        said = exc.message.removeprefix(f"{session.spec.name}: ")
        raise McpError(exc.code, f"{session.spec.name} did not give the prompt {prompt.name}: {said}") from None
    text = render(result)
    if not text:
        raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"The prompt {prompt.name} of {session.spec.name} has no text.")
    return text


def render(result: mcp_types.GetPromptResult) -> str:
    parts = []
    for message in result.messages:
        text = _content_text(message.content)
        if text:
            parts.append(f"Assistant: {text}" if message.role == "assistant" else text)
    return "\n\n".join(parts).strip()


def _content_text(content: Any) -> str:
    if isinstance(content, mcp_types.TextContent):
        return content.text
    if isinstance(content, mcp_types.EmbeddedResource):
        resource = content.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return f"{resource.uri}:\n{resource.text}"
        return f"[{resource.mime_type or 'binary'} resource {resource.uri}, not included]"
    if isinstance(content, mcp_types.ResourceLink):
        return f"[resource {content.uri}]"
    kind = getattr(content, "type", "content")
    return f"[{kind}, not included]"


def _info(prompt: mcp_types.Prompt, completes: bool) -> PromptInfo:
    return PromptInfo(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=[
            PromptArgument(name=a.name, description=a.description, required=bool(a.required))
            for a in prompt.arguments or []
        ],
        completions=completes,
    )
