"""The test server's sampling tool (`--sampling`): it asks the client's model for a completion, as
a server of either protocol era asks, and says what came back."""

from typing import Any

from mcp import types

from .mcp_sdk import MCP2, MODERN_PROTOCOL_VERSIONS, Asking, Context, MCPServer

SYSTEM_PROMPT = "Answer in one short sentence."


def add_sampling_tools(mcp: MCPServer) -> None:
    @mcp.tool()
    async def ask_model(question: str, ctx: Context, max_tokens: int = 200) -> Asking:
        """Ask the client's model `question`, then say what it answered (or why it did not)."""
        params = types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
            system_prompt=SYSTEM_PROMPT,
            max_tokens=max_tokens,
        )
        if MCP2 and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # 2026-07-28: the request goes back in the result; the completion comes with the retry
            answer = (ctx.input_responses or {}).get("sample") if ctx.request_state == "sample" else None
            if not isinstance(answer, types.CreateMessageResult):
                return types.InputRequiredResult(
                    input_requests={"sample": types.CreateMessageRequest(params=params)}, request_state="sample"
                )
            return _said(answer)
        try:
            result = await ctx.session.create_message(
                params.messages, max_tokens=max_tokens, system_prompt=SYSTEM_PROMPT, related_request_id=ctx.request_id
            )
        except Exception as exc:  # noqa: BLE001 - the client's refusal is what the test reads
            return f"refused: {getattr(getattr(exc, 'error', None), 'message', None) or exc}"
        return _said(result)

    @mcp.tool()
    def sampling_offered(ctx: Context) -> str:
        """Whether the client declared the sampling capability."""
        return f"sampling offered: {_client_samples(ctx)}"


def _said(result: Any) -> str:
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"{result.model} said: {text}"


def _client_samples(ctx: Context) -> bool:
    if MCP2:
        capabilities = ctx.client_capabilities
    else:
        params = ctx.session.client_params
        capabilities = params.capabilities if params is not None else None
    return capabilities is not None and capabilities.sampling is not None
