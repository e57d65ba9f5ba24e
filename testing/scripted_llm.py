"""Scripted OpenAI-compatible LLM server: the project's only test double.

It stands in for the LLM at the network boundary, so the real clients
(openai, langchain-openai, httpx) run unmodified against scripted turns,
including streaming, parallel tool calls and transport faults.

Built on the standard library (ThreadingHTTPServer, daemon threads) because it
must run inside any process - pytest, an Odoo test worker, a benchmark - without
an event loop, and no library does scripted OpenAI streaming with faults
in-process in Python.

    with ScriptedLLM() as llm:
        llm.queue(Turn(text="hello"))
        client = openai.OpenAI(base_url=llm.base_url, api_key="k")

Strict mode `max_tools=N` refuses, as api.openai.com does past 128, a request offering more than N
tools, with OpenAI's documented error (HTTP 400, code `array_above_max_length`):

    Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array
    with length 320 instead.

CLI for benchmarks against a separate process:
    python -m testing.scripted_llm --port 8899
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

NO_TURN_LEFT = "no scripted turn left"
_MALFORMED_EVENT = b"data: {not json\n\n"
_DONE_EVENT = b"data: [DONE]\n\n"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted model makes; a dict ``arguments`` is JSON-encoded."""

    name: str
    arguments: str | dict[str, Any]
    id: str | None = None  # None -> "call_<n>", unique per server


@dataclass(frozen=True)
class Turn:
    """One scripted model answer, optionally with a fault."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    chunks: int = 3
    arg_chunks: int = 3
    finish_reason: str | None = None  # None -> "tool_calls" if tool_calls else "stop"
    usage: dict[str, Any] | None = None  # None -> estimated from the request and the answer
    latency: float = 0.0
    chunk_delay: float = 0.0
    status: int = 200
    retry_after: float | None = None
    malformed_after: int | None = None
    disconnect_after: int | None = None
    # reported as usage.prompt_tokens_details.cached_tokens (the prompt's tokens read from the cache)
    cached_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.chunks < 1 or self.arg_chunks < 1:
            raise ValueError("chunks and arg_chunks must be >= 1")


Responder = Callable[[dict], Turn]


class _WireCall(NamedTuple):
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class _Reply:
    """A turn resolved against one request: ids, model, usage fixed once."""

    turn: Turn
    completion_id: str
    model: str
    created: int
    calls: tuple[_WireCall, ...]
    usage: dict[str, Any]
    finish_reason: str
    include_usage: bool


# ---------------------------------------------------------------- wire format


def openai_usage(prompt: int, completion: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """A usage object as OpenAI's Chat Completions reports it (cached tokens are part of the
    prompt's, reasoning tokens part of the completion's), for a Turn's `usage`."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _split(text: str, parts: int) -> list[str]:
    """Split into at most ``parts`` non-empty pieces.

    Slicing a str cuts between code points, never inside a UTF-8 sequence, so
    every piece is valid JSON text on its own.
    """
    count = min(parts, len(text))
    if count == 0:
        return []
    size, extra = divmod(len(text), count)
    bounds = [0]
    for index in range(count):
        bounds.append(bounds[-1] + size + (1 if index < extra else 0))
    return [text[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]


def _estimate_tokens(text: str) -> int:
    # ~4 characters per token is OpenAI's rule of thumb; tests need stable, plausible numbers.
    return math.ceil(len(text) / 4)


def _estimate_usage(prompt: int, text: str, calls: Iterable[_WireCall]) -> dict[str, int]:
    completion = _estimate_tokens(text + "".join(call.name + call.arguments for call in calls))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _usage(turn: Turn, prompt: int, calls: Iterable[_WireCall]) -> dict[str, Any]:
    usage: dict[str, Any] = dict(turn.usage) if turn.usage is not None else _estimate_usage(prompt, turn.text, calls)
    if turn.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": turn.cached_tokens}
    return usage


def _chunk(reply: _Reply, delta: dict, finish_reason: str | None = None) -> dict:
    chunk: dict[str, Any] = {
        "id": reply.completion_id,
        "object": "chat.completion.chunk",
        "created": reply.created,
        "model": reply.model,
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    if reply.include_usage:
        # OpenAI sends "usage": null on every chunk but the last when usage is requested.
        chunk["usage"] = None
    return chunk


def _tool_call_chunks(reply: _Reply, index: int, call: _WireCall) -> list[dict]:
    # Like OpenAI: the opening chunk names the call, later ones only extend its arguments by index.
    function = {"name": call.name, "arguments": ""}
    opening = {"index": index, "id": call.id, "type": "function", "function": function}
    fragments = _split(call.arguments, reply.turn.arg_chunks)
    return [_chunk(reply, {"tool_calls": [opening]})] + [
        _chunk(reply, {"tool_calls": [{"index": index, "function": {"arguments": part}}]}) for part in fragments
    ]


def _stream_chunks(reply: _Reply) -> list[dict]:
    """All ``chat.completion.chunk`` objects of a streamed reply, in order."""
    turn = reply.turn
    chunks = [_chunk(reply, {"role": "assistant", "content": "", "refusal": None})]
    chunks += [_chunk(reply, {"content": piece}) for piece in _split(turn.text, turn.chunks)]
    for index, call in enumerate(reply.calls):
        chunks += _tool_call_chunks(reply, index, call)
    chunks.append(_chunk(reply, {}, reply.finish_reason))
    if reply.include_usage:
        usage_chunk = _chunk(reply, {})
        usage_chunk.update(choices=[], usage=reply.usage)
        chunks.append(usage_chunk)
    return chunks


def _completion_body(reply: _Reply) -> dict:
    """The ``chat.completion`` object of a non-streamed reply."""
    # OpenAI answers content null, not "", when the model only calls tools.
    content = reply.turn.text or (None if reply.calls else "")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in reply.calls
        ]
    return {
        "id": reply.completion_id,
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
        "usage": reply.usage,
    }


def _error_body(status: int, message: str) -> dict:
    """An OpenAI-style error object; type/code chosen so clients classify it like the real API."""
    if status == 401:
        kind, code = "invalid_request_error", "invalid_api_key"
    elif status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind, code = "server_error", None
    else:
        kind, code = "invalid_request_error", None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _too_many_tools(limit: int, offered: int) -> dict:
    """OpenAI's refusal of a request offering more tools than it accepts."""
    message = (
        f"Invalid 'tools': array too long. Expected an array with maximum length {limit}, "
        f"but got an array with length {offered} instead."
    )
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "tools",
            "code": "array_above_max_length",
        }
    }


def _arguments_json(arguments: str | dict[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _fault_position(after: int | None, chunk_count: int) -> int | None:
    # A count past the end still faults (just before [DONE]) instead of silently passing.
    return None if after is None else min(after, chunk_count)


def _json_bytes(payload: Any) -> bytes:
    # Raw UTF-8 (not \u escapes) so clients really have to decode multi-byte text.
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def _sse(payload: dict) -> bytes:
    return b"data: " + _json_bytes(payload) + b"\n\n"


# --------------------------------------------------------------- provider modes


class Provider:
    """OpenAI's own chat completions, as the server answers by default. A provider mode
    (testing/llm_providers.py) overrides what its provider does differently: its URL, what it
    refuses, how it streams."""

    def base_url(self, root: str) -> str:
        return f"{root}/v1"

    def serves(self, path: str) -> bool:
        # a gateway's query parameters (the provider's "Query Parameters") come along
        return urlsplit(path).path.rstrip("/") == "/v1/chat/completions"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        """(status, JSON body) of the error the provider answers `body` with, if it refuses it."""
        return None

    def as_chat(self, body: dict) -> dict:
        """The request as chat completions' `messages` and `tools`, which responders read."""
        return body

    def prompt_tokens(self, body: dict) -> int:
        """The tokens the provider counts in the request (usage.prompt_tokens)."""
        return _estimate_tokens(json.dumps(body.get("messages", []), ensure_ascii=False))

    def stream(self, reply: _Reply, chunks: list[dict]) -> list[bytes]:
        """The server-sent events of a streamed reply, before `[DONE]`."""
        return [_sse(chunk) for chunk in chunks]


# ------------------------------------------------------------------ built-in responder


def _sample_value(schema: dict) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        # Optional[...] from pydantic comes as anyOf [X, null]: pick the non-null branch.
        return _sample_value(next((o for o in options if o.get("type") != "null"), options[0]))
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return _sample_arguments(schema)
    return {"integer": 1, "number": 1, "boolean": True, "array": []}.get(kind, "x")


def _sample_arguments(schema: dict) -> dict[str, Any]:
    """Arguments filling the schema's required properties: strings "x", numbers 1, booleans true."""
    properties = schema.get("properties", {})
    return {name: _sample_value(properties.get(name, {})) for name in schema.get("required", [])}


def _message_text(content: Any) -> str:
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def tool_then_answer(body: dict) -> Turn:
    """Call the first offered tool after a user message, answer after a tool result, else say hello."""
    messages = body.get("messages") or [{}]
    last = messages[-1]
    tools = body.get("tools") or []
    if last.get("role") == "user" and tools:
        function = tools[0]["function"]
        arguments = _sample_arguments(function.get("parameters") or {})
        return Turn(tool_calls=(ToolCall(function["name"], arguments),))
    if last.get("role") == "tool":
        return Turn(text=f"done: {_message_text(last.get('content'))[:40]}")
    return Turn(text="hello")


# ---------------------------------------------------------------------- HTTP server


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 gives keep-alive and chunked streams like api.openai.com; only then
    # can a client tell an abrupt close from the normal end of a stream.
    protocol_version = "HTTP/1.1"
    # Scripted chunks are tiny; Nagle would batch them and distort chunk timing.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silent: one stderr line per request would flood test and benchmark output."""

    def handle(self) -> None:
        try:
            return super().handle()
        except ConnectionError:
            # The client went away mid-response (stopped reading, timed out): not a server bug.
            self.close_connection = True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path.rstrip("/") != "/v1/models":
            self._send_json(404, _error_body(404, f"unknown path {self.path}"))
            return
        app = self.server.app
        app._record_listing({name.lower(): value for name, value in self.headers.items()}, dict(parse_qsl(url.query)))
        if self._authorized():
            listed = [
                {"object": "model", "created": 0, "owned_by": "scripted", **({"id": m} if isinstance(m, str) else m)}
                for m in app.models
            ]
            self._send_json(200, {"object": "list", "data": listed})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        provider = self.server.app.provider
        if not provider.serves(self.path):
            self._send_json(404, _error_body(404, f"unknown path {self.path}"))
            return
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._send_json(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        self.server.app._record(body, dict(parse_qsl(urlsplit(self.path).query)))
        refusal = provider.refusal(self.path, self.headers, body)
        if refusal is not None:
            self._send_json(*refusal)
        elif self._authorized():
            self._answer(body)

    def _authorized(self) -> bool:
        key = self.server.app.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send_json(401, _error_body(401, "Incorrect API key provided."))
        return False

    def _answer(self, body: dict) -> None:
        app = self.server.app
        offered = len(body.get("tools") or [])
        if app.max_tools is not None and offered > app.max_tools:
            self._send_json(400, _too_many_tools(app.max_tools, offered))
            return
        # Any error of a test's responder must surface as a loud 500, not as a dropped socket.
        try:
            turn = app._next_turn(app.provider.as_chat(body))
        except Exception as exc:  # noqa: BLE001
            self._send_json(500, _error_body(500, f"scripted responder failed: {exc!r}"))
            return
        if turn is None:
            self._send_json(500, _error_body(500, f"{NO_TURN_LEFT} (queue empty and no responder)"))
            return
        if not self._pause(turn.latency):
            return
        if turn.status != 200:
            headers = {"Retry-After": f"{turn.retry_after:g}"} if turn.retry_after is not None else {}
            self._send_json(turn.status, _error_body(turn.status, f"scripted HTTP {turn.status}"), headers)
        elif body.get("stream"):
            self._stream(app._reply(body, turn))
        else:
            self._complete(app._reply(body, turn))

    def _complete(self, reply: _Reply) -> None:
        turn = reply.turn
        payload = b"{not json" if turn.malformed_after is not None else _json_bytes(_completion_body(reply))
        self._send_head(200, "application/json", {"Content-Length": str(len(payload))})
        if turn.disconnect_after is not None:
            self._drop()  # the headers promised a body that never comes
        else:
            self.wfile.write(payload)

    def _stream(self, reply: _Reply) -> None:
        turn = reply.turn
        headers = {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        self._send_head(200, "text/event-stream; charset=utf-8", headers)
        chunks = self.server.app.provider.stream(reply, _stream_chunks(reply))
        disconnect_at = _fault_position(turn.disconnect_after, len(chunks))
        malformed_at = _fault_position(turn.malformed_after, len(chunks))
        for sent, event in enumerate([*chunks, _DONE_EVENT]):
            if sent and not self._pause(turn.chunk_delay):
                return
            if sent == disconnect_at:
                self._drop()
                return
            if sent == malformed_at:
                self._write_chunk(_MALFORMED_EVENT)
                break
            self._write_chunk(event)
        self.wfile.write(b"0\r\n\r\n")  # last chunk: the stream ends cleanly

    def _send_head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = _json_bytes(payload)
        self._send_head(status, "application/json", {"Content-Length": str(len(data)), **(headers or {})})
        self.wfile.write(data)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def _drop(self) -> None:
        """Close the socket without ending the body, as a crashed upstream would."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have hung up first
            self.connection.shutdown(socket.SHUT_RDWR)

    def _pause(self, seconds: float) -> bool:
        """Sleep, but wake up (returning False) when the server closes."""
        return seconds <= 0 or not self.server.stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a hung client must never keep the test process alive
    request_queue_size = 512  # load tests open up to 200 connections at once; the default backlog of 5 drops SYNs

    def __init__(self, address: tuple[str, int], app: ScriptedLLM) -> None:
        self.app = app
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn) that can stall for seconds.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        return super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        return super().shutdown_request(request)

    def stop_connections(self) -> None:
        """Wake handlers blocked on idle keep-alive reads or scripted delays so they can be joined."""
        self.stopping.set()
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # its handler may have closed it meanwhile
                connection.shutdown(socket.SHUT_RDWR)


class ScriptedLLM:
    """OpenAI chat-completions server answering from queued turns, then from ``responder``."""

    def __init__(
        self,
        responder: Responder | None = None,
        model: str = "scripted-model",
        api_key: str | None = None,
        port: int = 0,
        provider: Provider | None = None,
        max_tools: int | None = None,
    ) -> None:
        # how a provider's own server differs from OpenAI's (testing/llm_providers.py)
        self.provider = provider or Provider()
        self.model = model
        self.max_tools = max_tools
        self.api_key = api_key
        self._responder = responder
        self._port = port
        self._lock = threading.Lock()
        self._turns: deque[Turn] = deque()
        self._requests: list[dict] = []
        self._listings: list[dict] = []
        self._queries: list[dict[str, str]] = []
        # what GET /v1/models lists; a test may set several, each an id or an entry's fields (id included)
        self.models: Sequence[str | dict[str, Any]] = (model,)
        self._call_ids = itertools.count(1)
        self._completion_ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ScriptedLLM:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (or the provider's own URL shape); the port is known once started."""
        if self._port == 0:
            raise RuntimeError("ScriptedLLM not started")
        return self.provider.base_url(f"http://127.0.0.1:{self._port}")

    @property
    def requests(self) -> list[dict]:
        """Every received request body, in arrival order (a snapshot copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def queries(self) -> list[dict[str, str]]:
        """The query parameters of each request of `requests`, in the same order."""
        with self._lock:
            return list(self._queries)

    @property
    def listings(self) -> list[dict]:
        """Each ``GET /v1/models`` received, as {"headers": {lower-case name: value}, "query": {...}}
        (a snapshot copy)."""
        with self._lock:
            return list(self._listings)

    def reset(self) -> None:
        """Forget queued turns and recorded requests, so a server shared by a test class starts each test clean."""
        with self._lock:
            self._turns.clear()
            self._requests.clear()
            self._listings.clear()
            self._queries.clear()

    def queue(self, *turns: Turn) -> None:
        """Append turns; each chat request consumes the oldest one."""
        with self._lock:
            self._turns.extend(turns)

    def start(self) -> None:
        """Bind 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("ScriptedLLM already started")
        self._server = _Server(("127.0.0.1", self._port), self)
        self._port = self._server.server_port
        # A short poll interval keeps close() fast; tests start many servers.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving, cut open connections and join all threads. Idempotent."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._server = self._thread = None
        server.shutdown()
        server.stop_connections()
        server.server_close()  # joins the handler threads
        thread.join()

    def _record(self, body: dict, query: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(body)
            self._queries.append(query)

    def _record_listing(self, headers: dict[str, str], query: dict[str, str]) -> None:
        with self._lock:
            self._listings.append({"headers": headers, "query": query})

    def _next_turn(self, body: dict) -> Turn | None:
        with self._lock:
            if self._turns:
                return self._turns.popleft()
        # Outside the lock: a slow responder must not serialize concurrent requests.
        return self._responder(body) if self._responder is not None else None

    def _reply(self, body: dict, turn: Turn) -> _Reply:
        with self._lock:
            completion_id = f"chatcmpl-scripted-{next(self._completion_ids)}"
            calls = tuple(
                _WireCall(
                    call.id or f"call_{next(self._call_ids)}",
                    call.name,
                    _arguments_json(call.arguments),
                )
                for call in turn.tool_calls
            )
        return _Reply(
            turn=turn,
            completion_id=completion_id,
            model=body.get("model") or self.model,
            created=int(time.time()),
            calls=calls,
            usage=_usage(turn, self.provider.prompt_tokens(body), calls),
            finish_reason=turn.finish_reason or ("tool_calls" if calls else "stop"),
            include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
        )


def main(argv: list[str] | None = None) -> None:
    """Serve ``tool_then_answer`` until interrupted."""
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible LLM (tool_then_answer responder)")
    parser.add_argument("--port", type=int, default=8899)
    args = parser.parse_args(argv)
    with ScriptedLLM(responder=tool_then_answer, port=args.port) as llm:
        # benchmarks read the URL from the first line
        print(llm.base_url, flush=True)  # pylint: disable=print-used
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
