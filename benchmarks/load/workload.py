"""The workload of bench_load: the scripted model that asks for a tool each round (in a process of
its own, timing its own answers), and the users, provider, servers and assistant it runs with.

Each conversation is one turn of ROUNDS rounds: the model calls echo on one of the MCP_SERVERS
servers until the turn holds TOOL_ROUNDS tool results, then answers; the assistant's max_rounds is
one more, so no "continue?" pause comes.
"""

# pylint: disable=print-used  # the model's process prints its address for the benchmark to read

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script (the model's process): `testing` imports

from testing.mcp_servers import HttpServer, free_port  # noqa: E402
from testing.odoo_http import WebClient, create_ai_user  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "bench-load-key"
MODEL = "scripted-model"
TOOL_ROUNDS = 4  # tool results before the answer: 5 rounds
ROUNDS = TOOL_ROUNDS + 1
MAX_ROUNDS = ROUNDS + 1  # no "continue?" pause before round 5
MCP_SERVERS = 4
OFFERED_TOOLS = ("echo", "add", "weather")
USERS = 10
ANSWER = " ".join(f"word{i}" for i in range(40))
ANSWER_WORDS = 40


class Pace(NamedTuple):
    """How the scripted model streams: wait before the first chunk, chunks of the answer and of
    each tool call's arguments, wait between chunks."""

    latency: float
    answer_chunks: int
    arg_chunks: int
    chunk_delay: float


PACES = {
    # fast: the model's own time stays small, so the load is the turns' own work
    "fast": Pace(latency=0.2, answer_chunks=20, arg_chunks=3, chunk_delay=0.005),
    # realistic: 300 ms to the first token, then 20 tokens/s (a word and an argument piece ~ a token)
    "realistic": Pace(latency=0.3, answer_chunks=ANSWER_WORDS, arg_chunks=8, chunk_delay=0.05),
}


def responder(body: dict, pace: Pace = PACES["fast"]) -> Turn:
    """A tool call until the turn holds TOOL_ROUNDS tool results, then the answer."""
    messages = body.get("messages") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    done = sum(1 for m in messages[last_user:] if m.get("role") == "tool")
    if done >= TOOL_ROUNDS:
        return Turn(text=ANSWER, chunks=pace.answer_chunks, chunk_delay=pace.chunk_delay, latency=pace.latency)
    echoes = sorted(t["function"]["name"] for t in body.get("tools") or [] if "echo" in t["function"]["name"])
    if not echoes:
        return Turn(text="no echo tool was offered", latency=pace.latency)
    marker = _marker(messages)
    name = echoes[(sum(map(ord, marker)) + done) % len(echoes)]
    return Turn(
        tool_calls=(ToolCall(name, {"text": f"{marker} r{done + 1}"}),),
        arg_chunks=pace.arg_chunks,
        chunk_delay=pace.chunk_delay,
        latency=pace.latency,
    )


def _marker(messages: list[dict]) -> str:
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    return users[-1] if users and isinstance(users[-1], str) else "?"


def serve_llm(port: int, timings: Path, pace: Pace) -> None:
    """--serve-llm: the scripted model with the responder above; logs each request's own time."""
    from testing import scripted_llm

    lock = threading.Lock()
    original = scripted_llm._Handler._answer

    def timed(handler, body: dict) -> None:
        started = time.perf_counter()
        try:
            original(handler, body)
        finally:
            messages = body.get("messages") or []
            last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
            round_no = 1 + sum(1 for m in messages[last_user:] if m.get("role") == "assistant")
            line = json.dumps(
                {"marker": _marker(messages), "round": round_no, "seconds": time.perf_counter() - started}
            )
            with lock, open(timings, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    scripted_llm._Handler._answer = timed
    with ScriptedLLM(responder=lambda body: responder(body, pace), api_key=API_KEY, port=port) as llm:
        print(llm.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


class LlmProcess:
    def __init__(self, tmp: Path, pace: str) -> None:
        self.timings = tmp / "llm_timings.jsonl"
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(self.port), str(self.timings), pace],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            sys.exit("the scripted model did not start")

    def times(self) -> dict[tuple[str, int], float]:
        result: dict[tuple[str, int], float] = {}
        if self.timings.exists():
            for line in self.timings.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                result[(row["marker"], row["round"])] = row["seconds"]
        return result

    def stop(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


class Setup:
    """Users, provider, servers and the assistant, created once in the database."""

    def __init__(self, admin: WebClient, llm: LlmProcess, servers: list[HttpServer]) -> None:
        provider = admin.call(
            "ai.provider",
            "create",
            {"name": "bench load", "base_url": llm.base_url, "api_key": API_KEY, "default_model": MODEL},
        )
        server_ids, disabled = [], []
        for index, server in enumerate(servers):
            server_id = admin.call(
                "mcp.server", "create", {"name": f"Load tools {index + 1}", "scope": "system", "url": server.url}
            )
            admin.call("mcp.server", "action_sync_tools", [server_id])
            tools = admin.call("mcp.tool", "search_read", [("server_id", "=", server_id)], ["name"])
            echo = [t["id"] for t in tools if t["name"] == "echo"]
            admin.call("mcp.tool", "write", echo, {"requires_approval": False})
            disabled += [t["id"] for t in tools if t["name"] not in OFFERED_TOOLS]
            server_ids.append(server_id)
        self.assistant = admin.call(
            "ai.assistant",
            "create",
            {
                "name": "bench load",
                "provider_id": provider,
                "temperature": 0.0,
                "max_rounds": MAX_ROUNDS,
                "mcp_server_ids": [(6, 0, server_ids)],
                "mcp_tool_disabled_ids": [(6, 0, disabled)],
            },
        )
        self.logins = [f"load_user_{i}" for i in range(USERS)]
        for login in self.logins:
            create_ai_user(admin, login)


def main() -> None:
    """The model's process: `python workload.py PORT TIMINGS PACE`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("timings", type=Path)
    parser.add_argument("pace", choices=sorted(PACES))
    opts = parser.parse_args()
    serve_llm(opts.port, opts.timings, PACES[opts.pace])


if __name__ == "__main__":
    main()
