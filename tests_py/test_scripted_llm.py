"""The scripted LLM must speak the OpenAI wire format: proven against the real clients."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessageChunk, BaseMessageChunk, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from testing.llm_providers import ContextWindow
from testing.scripted_llm import NO_TURN_LEFT, ScriptedLLM, ToolCall, Turn, tool_then_answer

UNICODE_TEXT = "héllo 世界 🙂"
USER = [{"role": "user", "content": "hi"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "metric": {"type": "boolean"},
                "note": {"type": "string"},
            },
            "required": ["city", "days", "metric"],
        },
    },
}


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def shared_llm() -> Iterator[ScriptedLLM]:
    """One server for property tests: starting one per example would dominate their run time."""
    with ScriptedLLM() as server:
        yield server


def client(server: ScriptedLLM, api_key: str = "k") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=api_key, max_retries=0)


def chat_model(server: ScriptedLLM, **kwargs: object) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key="k", model="scripted-model", streaming=True, max_retries=0, **kwargs
    )


def aggregate(chunks: Iterator[BaseMessageChunk]) -> tuple[AIMessageChunk, int]:
    """Sum langchain chunks with ``+`` (as agents do); also return how many arrived."""
    parts = list(chunks)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    assert isinstance(total, AIMessageChunk)
    return total, len(parts)


def stream_text(server: ScriptedLLM, **kwargs: object) -> list[str]:
    stream = client(server).chat.completions.create(model="scripted-model", messages=USER, stream=True, **kwargs)
    return [chunk.choices[0].delta.content for chunk in stream if chunk.choices and chunk.choices[0].delta.content]


# ------------------------------------------------------------------ text streaming


def test_openai_stream_text_arrives_in_several_unicode_chunks(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text=UNICODE_TEXT, chunks=4))
    pieces = stream_text(llm)
    assert len(pieces) == 4
    assert "".join(pieces) == UNICODE_TEXT


def test_langchain_stream_joins_text(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text=UNICODE_TEXT, chunks=5))
    message, count = aggregate(chat_model(llm).stream("hi"))
    assert message.content == UNICODE_TEXT
    assert count >= 5
    assert message.response_metadata["finish_reason"] == "stop"


def test_langchain_astream_joins_text(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text=UNICODE_TEXT, chunks=3))

    async def collect() -> list[BaseMessageChunk]:
        return [chunk async for chunk in chat_model(llm).astream("hi")]

    message, _ = aggregate(iter(asyncio.run(collect())))
    assert message.content == UNICODE_TEXT


@settings(max_examples=40, deadline=None)
@given(text=st.text(min_size=1, max_size=60), chunks=st.integers(min_value=1, max_value=8))
def test_any_text_survives_streaming(shared_llm: ScriptedLLM, text: str, chunks: int) -> None:
    shared_llm.queue(Turn(text=text, chunks=chunks))
    pieces = stream_text(shared_llm)
    assert "".join(pieces) == text
    assert len(pieces) == min(chunks, len(text))


# ------------------------------------------------------------------ tool calls


def test_langchain_parallel_tool_calls_are_reassembled(llm: ScriptedLLM) -> None:
    llm.queue(
        Turn(
            tool_calls=(
                ToolCall("get_weather", {"city": "Zürich", "days": 3, "metric": True}),
                ToolCall("get_weather", '{"city": "東京", "days": 1, "metric": false}', id="call_custom"),
            ),
            arg_chunks=4,
        )
    )
    chunks = list(chat_model(llm).bind_tools([WEATHER_TOOL]).stream("weather?"))
    message, _ = aggregate(iter(chunks))
    assert [(call["name"], call["args"], call["id"]) for call in message.tool_calls] == [
        ("get_weather", {"city": "Zürich", "days": 3, "metric": True}, "call_1"),
        ("get_weather", {"city": "東京", "days": 1, "metric": False}, "call_custom"),
    ]
    assert message.response_metadata["finish_reason"] == "tool_calls"
    fragments = [tc for chunk in chunks for tc in getattr(chunk, "tool_call_chunks", []) if tc["args"]]
    assert len(fragments) == 8  # 4 argument fragments per call, each in its own chunk
    assert llm.requests[0]["tools"][0]["function"]["name"] == "get_weather"


def test_tool_call_wire_format_matches_openai(llm: ScriptedLLM) -> None:
    llm.queue(Turn(tool_calls=(ToolCall("a", {"x": 1}), ToolCall("b", {"y": "z"})), arg_chunks=3))
    stream = client(llm).chat.completions.create(model="m", messages=USER, tools=[WEATHER_TOOL], stream=True)
    deltas = [tc for chunk in stream for tc in (chunk.choices[0].delta.tool_calls or [])]
    for index, name, args in [(0, "a", {"x": 1}), (1, "b", {"y": "z"})]:
        opening, *rest = [d for d in deltas if d.index == index]
        assert (opening.id, opening.type, opening.function.name, opening.function.arguments) == (
            f"call_{index + 1}",
            "function",
            name,
            "",
        )
        assert len(rest) == 3
        assert all(d.id is None and d.function.name is None for d in rest)
        assert json.loads("".join(d.function.arguments for d in rest)) == args


def test_call_ids_are_unique_across_turns(llm: ScriptedLLM) -> None:
    llm.queue(Turn(tool_calls=(ToolCall("a", {}),)), Turn(tool_calls=(ToolCall("a", {}),)))
    api = client(llm)
    messages = [api.chat.completions.create(model="m", messages=USER).choices[0].message for _ in range(2)]
    assert [message.tool_calls[0].id for message in messages if message.tool_calls] == ["call_1", "call_2"]


# ------------------------------------------------------------------ usage, finish reason, non-streaming


def test_openai_usage_chunk_only_when_requested(llm: ScriptedLLM) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    llm.queue(Turn(text="hey", usage=usage), Turn(text="hey", usage=usage))
    api = client(llm)
    with_usage = list(
        api.chat.completions.create(model="m", messages=USER, stream=True, stream_options={"include_usage": True})
    )
    assert with_usage[-1].choices == []
    assert with_usage[-1].usage is not None and with_usage[-1].usage.model_dump(exclude_none=True) == usage
    without = list(api.chat.completions.create(model="m", messages=USER, stream=True))
    assert all(chunk.usage is None for chunk in without)


def test_langchain_stream_usage_is_computed_by_default(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="some answer text"))
    message, _ = aggregate(chat_model(llm, stream_usage=True).stream("a question"))
    usage = message.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_cached_tokens_are_reported_as_openai_and_read_by_langchain(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="hey", cached_tokens=1024))
    message, _ = aggregate(chat_model(llm, stream_usage=True).stream("a question"))
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_token_details"]["cache_read"] == 1024
    assert llm.requests[0]["stream_options"] == {"include_usage": True}


def test_a_context_window_refuses_a_longer_request_as_openai_does() -> None:
    window = ContextWindow(50)
    with ScriptedLLM(provider=window) as llm:
        llm.queue(Turn(text="short"))
        api = client(llm)
        chunks = list(
            api.chat.completions.create(model="m", messages=USER, stream=True, stream_options={"include_usage": True})
        )
        assert chunks[-1].usage is not None
        assert chunks[-1].usage.prompt_tokens == window.prompt_tokens(llm.requests[0])
        long = [{"role": "user", "content": "x" * 300}]
        with pytest.raises(openai.BadRequestError) as raised:
            api.chat.completions.create(model="m", messages=long)
        counted = window.prompt_tokens(llm.requests[1])
    assert raised.value.status_code == 400 and raised.value.code == "context_length_exceeded"
    assert raised.value.param == "messages" and counted > 100
    said = f"maximum context length is 50 tokens. However, your messages resulted in {counted} tokens."
    assert said in str(raised.value)


def test_langchain_finish_reason_length_is_visible(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="cut sho", finish_reason="length"))
    message, _ = aggregate(chat_model(llm).stream("hi"))
    assert message.response_metadata["finish_reason"] == "length"


def test_openai_non_streaming_completion(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text=UNICODE_TEXT), Turn(tool_calls=(ToolCall("get_weather", {"city": "Oslo"}, id="c9"),)))
    api = client(llm)
    text = api.chat.completions.create(model="my-model", messages=USER)
    assert (text.object, text.model) == ("chat.completion", "my-model")
    assert text.choices[0].message.content == UNICODE_TEXT
    assert text.choices[0].finish_reason == "stop"
    assert text.usage is not None and text.usage.total_tokens > 0
    calls = api.chat.completions.create(model="m", messages=USER).choices[0]
    assert calls.finish_reason == "tool_calls"
    assert calls.message.content is None
    assert calls.message.tool_calls is not None
    call = calls.message.tool_calls[0]
    assert (call.id, call.function.name) == ("c9", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Oslo"}


def test_models_endpoint_lists_the_model() -> None:
    with ScriptedLLM(model="tiny") as server:
        assert [model.id for model in client(server).models.list()] == ["tiny"]


# ------------------------------------------------------------------ HTTP faults


@pytest.mark.parametrize(
    ("status", "error"),
    [(500, openai.InternalServerError), (401, openai.AuthenticationError), (429, openai.RateLimitError)],
)
@pytest.mark.parametrize("stream", [True, False])
def test_error_status_raises_openai_error(llm: ScriptedLLM, status: int, error: type, stream: bool) -> None:
    llm.queue(Turn(status=status, retry_after=2 if status == 429 else None))
    with pytest.raises(error) as raised:
        client(llm).chat.completions.create(model="m", messages=USER, stream=stream)
    assert raised.value.status_code == status
    assert isinstance(raised.value.body, dict) and set(raised.value.body) >= {"message", "type", "code"}
    if status == 429:
        assert raised.value.response.headers["retry-after"] == "2"
        assert raised.value.code == "rate_limit_exceeded"


def test_api_key_is_checked() -> None:
    with ScriptedLLM(api_key="secret") as server:
        server.queue(Turn(text="ok"))
        with pytest.raises(openai.AuthenticationError) as raised:
            client(server, api_key="wrong").chat.completions.create(model="m", messages=USER)
        assert raised.value.code == "invalid_api_key"
        missing = httpx.post(f"{server.base_url}/chat/completions", json={"messages": USER})
        assert missing.status_code == 401
        assert missing.json()["error"]["code"] == "invalid_api_key"
        # Rejected requests do not consume the scripted turn.
        answer = client(server, api_key="secret").chat.completions.create(model="m", messages=USER)
        assert answer.choices[0].message.content == "ok"


def test_under_scripted_request_fails_loudly(llm: ScriptedLLM) -> None:
    with pytest.raises(openai.InternalServerError, match=NO_TURN_LEFT):
        client(llm).chat.completions.create(model="m", messages=USER, stream=True)


def test_failing_responder_answers_500() -> None:
    def broken(body: dict) -> Turn:
        raise KeyError("oops")

    with ScriptedLLM(responder=broken) as server, pytest.raises(openai.InternalServerError, match="responder failed"):
        client(server).chat.completions.create(model="m", messages=USER)


# ------------------------------------------------------------------ stream faults


def test_malformed_chunk_raises_in_client_after_good_chunks(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="abcdef", chunks=3, malformed_after=2))
    received: list[str] = []
    stream = client(llm).chat.completions.create(model="m", messages=USER, stream=True)
    with pytest.raises(json.JSONDecodeError):
        received.extend(chunk.choices[0].delta.content or "" for chunk in stream)
    assert received == ["", "ab"]  # role chunk, one text chunk, then the broken line


@pytest.mark.parametrize(
    ("turn", "expected_chunks"),
    [
        (Turn(text="abcdef", chunks=3, disconnect_after=2), 2),  # mid-text
        (Turn(text="x", tool_calls=(ToolCall("a", {"k": "v"}),), disconnect_after=4), 4),  # mid-tool-call arguments
        (Turn(text="abc", disconnect_after=99), 5),  # past the end: still no [DONE]
    ],
)
def test_disconnect_raises_connection_error_in_client(llm: ScriptedLLM, turn: Turn, expected_chunks: int) -> None:
    llm.queue(turn)
    received = []
    stream = client(llm).chat.completions.create(model="m", messages=USER, stream=True)
    with pytest.raises(openai.APIConnectionError) as raised:
        received.extend(stream)
    # openai wraps the transport error; by name because openai 3 ships its own httpx fork (httpx2).
    assert type(raised.value.__cause__).__name__ == "RemoteProtocolError"
    assert "incomplete chunked read" in str(raised.value.__cause__)
    assert len(received) == expected_chunks


def test_langchain_sees_disconnect_mid_tool_call(llm: ScriptedLLM) -> None:
    llm.queue(Turn(tool_calls=(ToolCall("get_weather", {"city": "Rome"}),), disconnect_after=3))
    with pytest.raises(openai.APIConnectionError):
        aggregate(chat_model(llm).bind_tools([WEATHER_TOOL]).stream("hi"))


def test_non_streaming_faults_raise(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="a", disconnect_after=0), Turn(text="a", malformed_after=0))
    api = client(llm)
    with pytest.raises(openai.APIConnectionError):
        api.chat.completions.create(model="m", messages=USER)
    with pytest.raises(json.JSONDecodeError):
        api.chat.completions.create(model="m", messages=USER)


# ------------------------------------------------------------------ timing


def test_latency_delays_first_byte(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="x", latency=0.3))
    started = time.monotonic()
    first = next(iter(client(llm).chat.completions.create(model="m", messages=USER, stream=True)))
    elapsed = time.monotonic() - started
    assert first.object == "chat.completion.chunk"
    assert 0.3 <= elapsed < 15


def test_chunk_delay_spaces_chunks(llm: ScriptedLLM) -> None:
    # role + 3 text + finish + [DONE] = 6 events, so 5 delays.
    llm.queue(Turn(text="abc", chunks=3, chunk_delay=0.05))
    started = time.monotonic()
    assert "".join(stream_text(llm)) == "abc"
    assert 0.25 <= time.monotonic() - started < 15


def test_close_interrupts_pending_latency() -> None:
    server = ScriptedLLM()
    server.start()
    server.queue(Turn(text="never", latency=30))
    errors: list[Exception] = []

    def call() -> None:
        try:
            client(server).chat.completions.create(model="m", messages=USER)
        except openai.APIConnectionError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    caller.join(timeout=20)
    assert time.monotonic() - started < 15  # half the pending 30 s
    assert len(errors) == 1


# ------------------------------------------------------------------ recording, responder, concurrency


def test_requests_record_bodies(llm: ScriptedLLM) -> None:
    llm.queue(Turn(text="a"), Turn(text="b"))
    api = client(llm)
    api.chat.completions.create(model="m1", messages=USER, temperature=0.2, tools=[WEATHER_TOOL])
    api.chat.completions.create(model="m2", messages=[{"role": "user", "content": "second"}], stream=True).close()
    first, second = llm.requests
    assert (first["model"], first["temperature"], first["messages"]) == ("m1", 0.2, USER)
    assert first["tools"] == [WEATHER_TOOL]
    assert (second["model"], second["stream"], second["messages"][0]["content"]) == ("m2", True, "second")


def test_responder_used_once_queue_is_empty() -> None:
    with ScriptedLLM(responder=lambda body: Turn(text=f"echo {len(body['messages'])}")) as server:
        server.queue(Turn(text="queued"))
        api = client(server)
        answers = [api.chat.completions.create(model="m", messages=USER).choices[0].message.content for _ in range(2)]
    assert answers == ["queued", "echo 1"]


def test_tool_then_answer_drives_a_tool_loop_with_langchain() -> None:
    with ScriptedLLM(responder=tool_then_answer) as server:
        model = chat_model(server).bind_tools([WEATHER_TOOL])
        history = [HumanMessage("weather in Paris?")]
        call_message, _ = aggregate(model.stream(history))
        (call,) = call_message.tool_calls
        assert (call["name"], call["args"]) == ("get_weather", {"city": "x", "days": 1, "metric": True})
        result = "sunny, 21 degrees and a light breeze from the west"
        history += [call_message, ToolMessage(result, tool_call_id=call["id"])]
        answer, _ = aggregate(model.stream(history))
        assert answer.content == f"done: {result[:40]}"
        assert answer.content.endswith("breeze fro")
        hello, _ = aggregate(chat_model(server).stream("no tools here"))
        assert hello.content == "hello"


def test_tool_then_answer_samples_nested_and_optional_schemas() -> None:
    parameters = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "limit": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "ratio": {"type": ["null", "number"]},
            "filter": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            "ids": {"type": "array"},
        },
        "required": ["mode", "limit", "ratio", "filter", "ids"],
    }
    tool = {"type": "function", "function": {"name": "search", "parameters": parameters}}
    body = {"messages": USER, "tools": [tool]}
    (call,) = tool_then_answer(body).tool_calls
    assert call.arguments == {"mode": "fast", "limit": 1, "ratio": 1, "filter": {"q": "x"}, "ids": []}


def test_fifty_concurrent_requests_each_get_their_own_answer() -> None:
    def echo(body: dict) -> Turn:
        return Turn(text=f"answer {body['messages'][-1]['content']}", chunk_delay=0.01)

    with ScriptedLLM(responder=echo) as server:
        api = client(server)

        def ask(number: int) -> str:
            stream = api.chat.completions.create(
                model="m", messages=[{"role": "user", "content": str(number)}], stream=True
            )
            return "".join(chunk.choices[0].delta.content or "" for chunk in stream)

        with ThreadPoolExecutor(max_workers=50) as pool:
            answers = list(pool.map(ask, range(50)))
        assert answers == [f"answer {number}" for number in range(50)]
        assert len(server.requests) == 50


def test_max_tools_refuses_as_openai_does_past_its_limit() -> None:
    tool = WEATHER_TOOL
    many = [{**tool, "function": {**tool["function"], "name": f"get_weather_{i}"}} for i in range(129)]
    with ScriptedLLM(max_tools=128) as strict:
        strict.queue(Turn(text="fine"))
        client = openai.OpenAI(base_url=strict.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="m", messages=USER, tools=many)
        assert refused.value.code == "array_above_max_length"
        assert "Expected an array with maximum length 128, but got an array with length 129" in str(refused.value)
        answer = client.chat.completions.create(model="m", messages=USER, tools=many[:128])
        assert answer.choices[0].message.content == "fine"
