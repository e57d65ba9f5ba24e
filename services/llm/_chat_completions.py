"""`chat.completions.create` for LangChain's ChatOpenAI, posting its JSON payload as it is.

openai's own `create()` walks every request body against its TypedDict parameters (key aliases,
file encoding) before sending it, trying each member of every union on every message: about 0.5 ms
of CPU per message and 0.15 ms per tool on this machine class, paid again on each model call of a
round as the history grows. It was the largest single cost of a round, larger than the whole
agent loop. LangChain's payload is already plain JSON under openai's own key names, for which that
walk changes nothing (tests_py/test_chat_completions.py proves it on a real turn's payloads), so it
is posted through the client's public `post()` with the same options `create()` uses: same
endpoint, headers, retries, timeout and errors. The chunks stay the dicts the server sent, which
LangChain reads directly instead of building and dumping a pydantic model per chunk.

The stream is handed to LangChain with each tool-call piece numbered (`index`) by the call it
belongs to: some servers send pieces without `index` (Gemini's compatibility layer) or several
calls under one index, which LangChain would drop or merge into one.

Written by hand because neither openai nor langchain-openai has a switch for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import openai

# keyword arguments of create() that are request options, not body fields
_OPTION_KEYS = ("extra_headers", "extra_query", "extra_body", "timeout")


class PlainChatCompletions:
    """Stands in for `AsyncOpenAI().chat.completions` in a ChatOpenAI (its `async_client`)."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client

    async def create(self, **payload: Any) -> Any:
        # the credentials create() asks for: the API key, never an admin key of the environment
        options: dict[str, Any] = {"security": {"bearer_auth": True}}
        extra_headers, extra_query, extra_body, timeout = (payload.pop(key, None) for key in _OPTION_KEYS)
        if extra_headers:
            options["headers"] = extra_headers
        if extra_query:
            options["params"] = extra_query
        if extra_body:
            options["extra_json"] = extra_body
        if timeout is not None:
            options["timeout"] = timeout
        stream = bool(payload.get("stream"))
        response = await self._client.post(
            "/chat/completions",
            body=payload,
            cast_to=object,
            options=options,  # type: ignore[arg-type]
            stream=stream,
            stream_cls=openai.AsyncStream[object],
        )
        return _NumberedCalls(response) if stream else response


class _NumberedCalls:
    """A stream of chunk dicts whose tool-call pieces carry the index of the call they belong to.

    A piece with an `id` not seen yet opens a call; one with a known `id` belongs to it; one
    without `id` belongs to the call last opened at its `index`, else to the call last seen.
    Calls are numbered 0, 1, ... in the order they open, which is the server's own numbering
    wherever it sent one index per call."""

    def __init__(self, stream: openai.AsyncStream[Any]) -> None:
        self._stream = stream
        self._by_id: dict[str, int] = {}
        self._by_index: dict[Any, int] = {}
        self._last: int | None = None
        self._opened = 0

    async def __aenter__(self) -> _NumberedCalls:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stream.close()

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for chunk in self._stream:
            choices = chunk.get("choices") if isinstance(chunk, dict) else None
            if choices and (calls := (choices[0].get("delta") or {}).get("tool_calls")):
                for call in calls:
                    call["index"] = self._number(call.get("id"), call.get("index"))
            yield chunk

    def _number(self, call_id: str | None, index: Any) -> int:
        if call_id is not None and call_id in self._by_id:
            number = self._by_id[call_id]
        elif call_id is not None or self._last is None or (index is not None and index not in self._by_index):
            number = self._opened
            self._opened += 1
            if call_id is not None:
                self._by_id[call_id] = number
        else:
            number = self._by_index[index] if index is not None else self._last
        self._by_index[index] = number
        self._last = number
        return number


def post_payloads_as_they_are(chat: Any) -> None:
    """Makes a ChatOpenAI post its payloads through PlainChatCompletions.

    Left alone where LangChain reads the raw response (response headers asked for, or a LangSmith
    gateway key): it calls `with_raw_response` there, which only openai's own resource has.
    """
    if chat.include_response_headers or getattr(chat, "_uses_gateway", False):
        return
    chat.async_client = PlainChatCompletions(chat.root_async_client)
