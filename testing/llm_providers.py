"""Strict provider modes of the scripted LLM: each refuses what its provider documents refusing,
with the provider's own error shape, and streams what the provider streams beyond OpenAI's format.

    with ScriptedLLM(responder=tool_then_answer, provider=GeminiCompat()) as llm: ...

The docstring of each mode cites the documentation it follows.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .scripted_llm import Provider, _chunk, _error_body, _json_bytes, _Reply, _split

# ---------------------------------------------------------------- helpers


def _path(path: str) -> str:
    return urlsplit(path).path.rstrip("/")


def _this_turn(messages: list[dict]) -> list[tuple[int, dict]]:
    """(index, message) of the messages after the last user message: the turn still running."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return [(i, m) for i, m in enumerate(messages) if i > last_user]


def _openai_error(message: str, param: str | None = None, code: str | None = None) -> tuple[int, dict]:
    body = _error_body(400, message)
    body["error"].update(param=param, code=code)
    return 400, body


class OpenAIReasoning(Provider):
    """OpenAI's reasoning models (o1, o3, o4-mini, gpt-5): `temperature` other than the default is
    refused ("Unsupported value: 'temperature' does not support 0.2 with this model. Only the
    default (1) value is supported."), and `max_tokens` is refused for `max_completion_tokens`: the
    API reference says of `max_tokens` "This value is now deprecated in favor of
    max_completion_tokens, and is not compatible with o-series models."
    https://platform.openai.com/docs/guides/reasoning#limitations
    https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_tokens"""

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if body.get("temperature") not in (None, 1):
            return _openai_error(
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                "Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        if "max_tokens" in body:
            return _openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                param="max_tokens",
                code="unsupported_parameter",
            )
        return None


class AzureClassic(Provider):
    """Azure OpenAI's classic data plane: POST
    `{endpoint}/openai/deployments/{deployment-id}/chat/completions?api-version=...` with the key in
    an `api-key` header ("all API requests must include the API Key in the api-key HTTP header");
    another path or no api-version is 404 "Resource not found", a missing or wrong key 401. https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#chat-completions
    https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#authentication"""

    def __init__(self, deployment: str, api_version: str, key: str) -> None:
        self.deployment, self.api_version, self.key = deployment, api_version, key

    def base_url(self, root: str) -> str:
        return root  # the resource's endpoint: the client builds the rest

    def serves(self, path: str) -> bool:
        return True  # answers every path, with Azure's own 404

    def expected_path(self) -> str:
        return f"/openai/deployments/{self.deployment}/chat/completions"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        query = parse_qs(urlsplit(path).query)
        if _path(path) != self.expected_path() or query.get("api-version") != [self.api_version]:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        if headers.get("api-key") != self.key:
            return 401, {
                "error": {
                    "code": "401",
                    "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
                    "provide a valid key for an active subscription and use a correct regional API endpoint "
                    "for your resource.",
                }
            }
        return None


class GeminiCompat(Provider):
    """Gemini's OpenAI compatibility (`.../v1beta/openai/`), for thinking models (Gemini 3):
    streamed tool-call deltas come without `index`, and the first call of each reply carries
    `extra_content.google.thought_signature`, as the thought signatures guide says: "If the model
    generates parallel function calls in a response, the thought_signature is attached only to the
    first functionCall part. Subsequent functionCall parts in the same response will not contain a
    signature." It validates "all function calls within the current turn": "The first functionCall
    part in each step of the current turn must include its thought_signature", else 400 "Function
    call is missing a thought_signature"; and a signature must come back "in the exact part where
    it was received", so one it did not issue for that call is refused as not valid. Errors are a
    JSON list of Google error objects.
    https://ai.google.dev/gemini-api/docs/openai#thinking
    https://ai.google.dev/gemini-api/docs/thought-signatures
    https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes"""

    def __init__(self) -> None:
        self._signatures = itertools.count(1)
        self.issued: dict[str, str] = {}  # signature -> id of the call it was issued with

    def base_url(self, root: str) -> str:
        return f"{root}/v1beta/openai"

    def serves(self, path: str) -> bool:
        return _path(path) == "/v1beta/openai/chat/completions"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        messages = body.get("messages") or []
        for message in messages:
            for call in message.get("tool_calls") or ():
                signature = _thought_signature(call)
                if signature and self.issued.get(signature) != call.get("id"):
                    return 400, _google_error("Unable to submit request because Thought signature is not valid.")
        for index, message in _this_turn(messages):
            first = next(iter(message.get("tool_calls") or ()), None)
            if first is not None and not _thought_signature(first):
                return 400, _google_error(
                    f"Function call is missing a thought_signature in functionCall parts. This is required for "
                    f"tools to work correctly, and missing thought_signature may lead to degraded model "
                    f"performance. Additional data, function call `default_api:{first['function']['name']}` , "
                    f"position {index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                    f"for more details."
                )
        return None

    def stream(self, reply: _Reply, chunks: list[dict]) -> list[bytes]:
        signed = False
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                for call in (choice.get("delta") or {}).get("tool_calls") or ():
                    del call["index"]
                    if "id" in call and not signed:
                        signed = True
                        signature = f"sig-{next(self._signatures)}"
                        self.issued[signature] = call["id"]
                        call["extra_content"] = {"google": {"thought_signature": signature}}
        return super().stream(reply, chunks)


def _thought_signature(call: dict) -> str | None:
    return ((call.get("extra_content") or {}).get("google") or {}).get("thought_signature")


def _google_error(message: str) -> list[dict]:
    return [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}]


class DeepSeekReasoner(Provider):
    """DeepSeek's thinking mode (`deepseek-reasoner`): the reasoning streams as `reasoning_content`
    deltas before the answer, and an assistant message that made tool calls must carry its
    `reasoning_content` in every later request of the conversation, the next questions' included:
    "For turns that do perform tool calls, the reasoning_content must be fully passed back to the
    API in all subsequent requests. If your code does not correctly pass back reasoning_content,
    the API will return a 400 error." Else 400 "Missing `reasoning_content` field in the assistant
    message". The reasoning of a message without tool calls is not asked back.
    https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"""

    thought = "The user wants a tool result first; I will call the tool."

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        for index, message in enumerate(body.get("messages") or []):
            if (
                message.get("role") == "assistant"
                and message.get("tool_calls")
                and not message.get("reasoning_content")
            ):
                return 400, {
                    "error": {
                        "message": f"Missing `reasoning_content` field in the assistant message at message index "
                        f"{index}. For more information, please refer to "
                        "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_request_error",
                    }
                }
        return None

    def stream(self, reply: _Reply, chunks: list[dict]) -> list[bytes]:
        thinking = [_chunk(reply, {"reasoning_content": piece, "content": None}) for piece in _split(self.thought, 3)]
        return super().stream(reply, [chunks[0], *thinking, *chunks[1:]])


class DeepSeekContextCache(Provider):
    """DeepSeek's usage: the input tokens read from its context cache are reported as
    `prompt_cache_hit_tokens` ("The number of tokens in the input of this request that resulted
    in a cache hit"; the others as `prompt_cache_miss_tokens`) at the top of `usage`,
    without OpenAI's `prompt_tokens_details.cached_tokens`; the thinking tokens as
    `completion_tokens_details.reasoning_tokens`.
    https://api-docs.deepseek.com/api/create-chat-completion (the response's `usage`)
    https://api-docs.deepseek.com/guides/kv_cache (checking the cache hit status)"""

    def stream(self, reply: _Reply, chunks: list[dict]) -> list[bytes]:
        return super().stream(reply, [_deepseek_usage(chunk) if chunk.get("usage") else chunk for chunk in chunks])


def _deepseek_usage(chunk: dict) -> dict:
    usage = dict(chunk["usage"])
    hit = (usage.pop("prompt_tokens_details", None) or {}).get("cached_tokens") or 0
    usage.update(prompt_cache_hit_tokens=hit, prompt_cache_miss_tokens=usage["prompt_tokens"] - hit)
    return {**chunk, "usage": usage}


class VllmWithoutAutoToolChoice(Provider):
    """vLLM started without `--enable-auto-tool-choice`: a request offering tools with
    `tool_choice` "auto" (its default when tools are given) is refused with 400 '"auto" tool
    choice requires --enable-auto-tool-choice and --tool-call-parser to be set'. Its guide:
    "`--enable-auto-tool-choice` -- mandatory Auto tool choice. It tells vLLM that you want to
    enable the model to generate its own tool calls when it deems appropriate."
    https://docs.vllm.ai/en/latest/features/tool_calling.html#automatic-function-calling"""

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if body.get("tools") and body.get("tool_choice", "auto") == "auto":
            return 400, {
                "object": "error",
                "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        return None


class LiteLLMWithoutDropParams(Provider):
    """A LiteLLM proxy without `drop_params`, in front of a model that takes no `stream_options`:
    400 "UnsupportedParamsError: ... does not support parameters: ['stream_options']". Its guide:
    "By default, LiteLLM raises an exception if you send a parameter to a model that doesn't
    support it."
    https://docs.litellm.ai/docs/completion/drop_params"""

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if "stream_options" in body:
            return 400, {
                "error": {
                    "message": "litellm.UnsupportedParamsError: openai does not support parameters: "
                    f"['stream_options'], for model={body.get('model')}. To drop these, set "
                    "`litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n drop_params: true`\n",
                    "type": "None",
                    "param": None,
                    "code": "400",
                }
            }
        return None


class ResponsesApi(Provider):
    """OpenAI's Responses API: POST `/v1/responses` with `input` items, answered with its typed
    event stream (`response.created`, `response.output_item.added`, reasoning summary, output text
    and function call argument deltas, `response.completed` with usage); tool results come back as
    `function_call_output` items ("When you create a Response with stream set to true, the server
    will emit server-sent events to the client as the Response is generated."). Chat completions
    fields (`messages`) are refused.
    https://platform.openai.com/docs/api-reference/responses/create
    https://platform.openai.com/docs/api-reference/responses-streaming
    https://platform.openai.com/docs/guides/reasoning#reasoning-summaries"""

    summary = "Checking which tool answers this."

    def serves(self, path: str) -> bool:
        return _path(path) == "/v1/responses"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if "messages" in body or not isinstance(body.get("input"), list):
            return _openai_error("Unsupported parameter: 'messages'. Use 'input'.", param="messages")
        return None

    def as_chat(self, body: dict) -> dict:
        last = body["input"][-1]
        if last.get("type") == "function_call_output":
            message = {"role": "tool", "content": last.get("output", "")}
        else:
            message = {"role": last.get("role", "user"), "content": last.get("content", "")}
        tools = [{"type": "function", "function": tool} for tool in body.get("tools") or ()]
        return {"messages": [message], "tools": tools}

    def stream(self, reply: _Reply, chunks: list[dict]) -> list[bytes]:
        events = _ResponseEvents(reply)
        events.reasoning(self.summary)
        if reply.turn.text:
            events.message(reply.turn.text)
        for call in reply.calls:
            events.function_call(call.id, call.name, call.arguments)
        return events.done()


class _ResponseEvents:
    """The Responses API's event stream of one reply, numbered as it sends it."""

    def __init__(self, reply: _Reply) -> None:
        self.reply = reply
        self.items: list[dict] = []
        self.events: list[bytes] = []
        self.response = {
            "id": f"resp_{reply.completion_id}",
            "object": "response",
            "created_at": reply.created,
            "status": "in_progress",
            "model": reply.model,
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
        self._send("response.created", response=self.response)

    def _send(self, kind: str, **fields: Any) -> None:
        event = {"type": kind, "sequence_number": len(self.events), **fields}
        self.events.append(f"event: {kind}\n".encode() + b"data: " + _json_bytes(event) + b"\n\n")

    def _item(self, item: dict, pieces: list[tuple[str, dict]], done: dict) -> None:
        index = len(self.items)
        self._send("response.output_item.added", output_index=index, item=item)
        for kind, fields in pieces:
            self._send(kind, item_id=item["id"], output_index=index, **fields)
        finished = {**item, **done, "status": "completed"}
        self.items.append(finished)
        self._send("response.output_item.done", output_index=index, item=finished)

    def reasoning(self, summary: str) -> None:
        item = {"id": f"rs_{len(self.items)}", "type": "reasoning", "summary": []}
        part = {"summary_index": 0}
        pieces = [("response.reasoning_summary_part.added", {**part, "part": {"type": "summary_text", "text": ""}})]
        pieces += [("response.reasoning_summary_text.delta", {**part, "delta": d}) for d in _split(summary, 2)]
        pieces.append(("response.reasoning_summary_text.done", {**part, "text": summary}))
        self._item(item, pieces, {"summary": [{"type": "summary_text", "text": summary}]})

    def message(self, text: str) -> None:
        item = {"id": f"msg_{len(self.items)}", "type": "message", "role": "assistant", "content": []}
        part = {"content_index": 0}
        text_part = {"type": "output_text", "text": text, "annotations": []}
        pieces = [("response.content_part.added", {**part, "part": {**text_part, "text": ""}})]
        pieces += [("response.output_text.delta", {**part, "delta": d}) for d in _split(text, 3)]
        pieces += [("response.output_text.done", {**part, "text": text})]
        pieces += [("response.content_part.done", {**part, "part": text_part})]
        self._item(item, pieces, {"content": [text_part]})

    def function_call(self, call_id: str, name: str, arguments: str) -> None:
        item = {"id": f"fc_{len(self.items)}", "type": "function_call", "call_id": call_id, "name": name}
        pieces = [("response.function_call_arguments.delta", {"delta": d}) for d in _split(arguments, 3)]
        pieces.append(("response.function_call_arguments.done", {"arguments": arguments}))
        self._item({**item, "arguments": ""}, pieces, {"arguments": arguments})

    def done(self) -> list[bytes]:
        usage = self.reply.usage
        self.response.update(
            status="completed",
            output=self.items,
            usage={
                "input_tokens": usage["prompt_tokens"],
                "output_tokens": usage["completion_tokens"],
                "total_tokens": usage["total_tokens"],
                "input_tokens_details": {
                    "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
                },
                "output_tokens_details": {
                    "reasoning_tokens": (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
                },
            },
        )
        self._send("response.completed", response=self.response)
        return self.events


class AzureClassicResponses(AzureClassic, ResponsesApi):
    """Azure OpenAI's Responses API on the classic URL: POST `{endpoint}/openai/responses?api-version=...`
    with the deployment's name as `model`, the key in an `api-key` header, answered as OpenAI's
    Responses API answers. https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/responses"""

    def expected_path(self) -> str:
        return "/openai/responses"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        refused = AzureClassic.refusal(self, path, headers, body) or ResponsesApi.refusal(self, path, headers, body)
        if refused is None and body.get("model") != self.deployment:
            return 404, {"error": {"code": "DeploymentNotFound", "message": "The API deployment does not exist."}}
        return refused


class ContextWindow(Provider):
    """A model whose context window holds `tokens`: a request counted longer is refused as OpenAI
    refuses it, HTTP 400 with code `context_length_exceeded` and param `messages`: "This model's
    maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please
    reduce the length of the messages." (`sizes=False`: the sentence without the numbers, as
    servers that do not count say it). https://platform.openai.com/docs/guides/error-codes#api-errors
    The count is deterministic and not the loop's estimate: one token per 3 characters of the JSON
    of the request's messages and tools, reported as `usage.prompt_tokens`, which OpenAI sends on
    the last chunk when `stream_options.include_usage` is set ("If set, an additional chunk will
    be streamed before the data: [DONE] message. The usage field on this chunk shows the token
    usage statistics for the entire request").
    https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options"""

    chars_per_token = 3

    def __init__(self, tokens: int, sizes: bool = True) -> None:
        self.tokens, self.sizes = tokens, sizes

    def prompt_tokens(self, body: dict) -> int:
        sent = json.dumps([body.get("messages") or [], body.get("tools") or []], ensure_ascii=False)
        return math.ceil(len(sent) / self.chars_per_token)

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        counted = self.prompt_tokens(body)
        if counted <= self.tokens:
            return None
        sizes = (
            f"This model's maximum context length is {self.tokens} tokens. "
            f"However, your messages resulted in {counted} tokens. "
        )
        return _openai_error(
            f"{sizes if self.sizes else ''}Please reduce the length of the messages.",
            param="messages",
            code="context_length_exceeded",
        )


class Redirected(Provider):
    """A server that moved: every request to its `/v1/...` is answered with 307 Temporary Redirect
    to the same path under `/moved/v1/...`, served there. RFC 9110: "The 307 (Temporary Redirect)
    status code indicates that the target resource resides temporarily under a different URI and
    the user agent MUST NOT change the request method if it performs an automatic redirection to
    that URI." openai's HTTP client follows redirects (`follow_redirects=True`).
    https://www.rfc-editor.org/rfc/rfc9110#name-307-temporary-redirect"""

    def serves(self, path: str) -> bool:
        return _path(path) in ("/v1/chat/completions", "/moved/v1/chat/completions")

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if path.startswith("/v1/"):
            return 307, {"moved": True}, {"Location": f"/moved{path}"}  # type: ignore[return-value]
        return None


class RefusesUnknownFields(Provider):
    """A server validating each request against a fixed schema with pydantic's `extra="forbid"`:
    vLLM up to 0.6.4 (0.6.5, December 2024, made it ignore unknown fields, with a warning in its
    log), and gateways or self-written servers built the same way. Such a server refuses a field it
    does not know with 400 and pydantic's own error, "Extra inputs are not permitted"; pydantic
    documents `'forbid'` as: "Providing extra data is not permitted, and a ValidationError will be
    raised if this is the case." No provider documents the refusal: it is what such a server does.
    https://docs.pydantic.dev/latest/api/config/#pydantic.config.ConfigDict.extra
    https://docs.vllm.ai/en/v0.6.4.post1/serving/openai_compatible_server.html#extra-parameters"""

    known = frozenset(
        {
            "messages",
            "model",
            "stream",
            "stream_options",
            "temperature",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "max_tokens",
            "max_completion_tokens",
            "n",
            "stop",
            "top_p",
        }
    )

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        extra = sorted(set(body) - self.known)
        if not extra:
            return None
        return 400, {
            "object": "error",
            "message": f"[{{'type': 'extra_forbidden', 'loc': ('body', '{extra[0]}'), 'msg': 'Extra inputs are not "
            f"permitted', 'input': {body[extra[0]]!r}}}]",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
