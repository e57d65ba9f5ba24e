"""The model gets exactly the request openai's own `create()` would have sent, without its cost."""

from __future__ import annotations

import asyncio

import openai
from conftest import http_spec
from test_agent_loop import kinds, run, settings, tools_of

from services.llm import LlmSettings, make_chat_model
from services.llm._chat_completions import PlainChatCompletions
from services.loop import (
    HistoryMessage,
    TurnRequest,
)
from services.loop.transcript import HistoryToolCall
from services.mcp import McpHub
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn

HISTORY = [
    HistoryMessage(role="user", content='Earlier question, with «unicode» and "quotes"\n'),
    HistoryMessage(
        role="assistant", content="", tool_calls=(HistoryToolCall(id="old-1", name="add", arguments={"a": 1, "b": 2}),)
    ),
    HistoryMessage(role="tool", content="3.0", tool_call_id="old-1"),
    HistoryMessage(role="assistant", content="It is 3."),
]


def resend_with_openai_create(llm: ScriptedLLM, body: dict) -> dict:
    """What openai's own chat.completions.create() sends for the same payload."""

    async def send() -> None:
        client = openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
        async with client:
            stream = await client.chat.completions.create(**body)
            async for _chunk in stream:
                pass

    llm.queue(Turn(text="again"))
    asyncio.run(send())
    return llm.requests[-1]


def test_every_request_of_a_turn_is_what_openai_create_would_have_sent(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer
) -> None:
    spec = http_spec(tools_server)
    llm.queue(
        Turn(text="Adding. ", tool_calls=(ToolCall("add", {"a": 2, "b": 3}),)),
        Turn(tool_calls=(ToolCall("weather", {"city": "Taipei"}), ToolCall("echo", {"text": "多 lines\nhere"}))),
        Turn(text="Done."),
    )
    tools = tools_of(hub, spec)
    events = run(
        hub,
        TurnRequest(assistant=settings(llm), history=HISTORY, tools=tools, user_message="Add and check the weather"),
    )
    assert kinds(events)[-1] == "done"
    ours = llm.requests
    assert len(ours) == 3
    # a test that proves something: tools with their schemas, tool calls and their results are in
    assert len(ours[0]["tools"]) == len(tools) > 5
    assert [m["role"] for m in ours[2]["messages"]][-4:] == ["tool", "assistant", "tool", "tool"]
    for body in ours:
        assert resend_with_openai_create(llm, body) == body


def test_the_api_key_and_a_provider_refusal_reach_the_user_as_before() -> None:
    async def ask(api_key: str) -> str:
        chat = make_chat_model(
            LlmSettings(base_url=llm.base_url, api_key=api_key, model="scripted-model", max_retries=0)
        )
        assert isinstance(chat.async_client, PlainChatCompletions)
        return (await chat.ainvoke("hi")).content

    async def both() -> tuple[str, openai.APIStatusError | None]:
        # one loop for both: langchain-openai shares one HTTP client per base URL
        answer = await ask("right")
        try:
            await ask("wrong")
        except openai.APIStatusError as exc:
            return answer, exc
        return answer, None

    with ScriptedLLM(api_key="right") as llm:
        llm.queue(Turn(text="Hello there."))
        answer, refusal = asyncio.run(both())
    assert answer == "Hello there."
    assert isinstance(refusal, openai.AuthenticationError) and refusal.status_code == 401
