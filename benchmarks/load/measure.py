"""What bench_load measures of a conversation and of the processes serving it: each streamed turn
checked against what was stored, the time it added per round, and the CPU, memory and dropped
connections of the processes.

Each conversation is sent as the chat widget sends it (a start that failed before anything was
stored is sent again: testing/start_retry.py); its event times count from the first try.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

from benchmarks.load.workload import ROUNDS, TOOL_ROUNDS
from testing.odoo_http import WebClient
from testing.start_retry import stream_with_retries

STREAM_TIMEOUT = 600.0


def listen_overflows() -> int | None:
    """The host's count of connections dropped because a listen queue was full (Linux)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/net/netstat").read_text().splitlines()
        header, values = next(
            (h.split(), v.split()) for h, v in zip(lines[::2], lines[1::2], strict=False) if h.startswith("TcpExt:")
        )
        return int(values[header.index("ListenOverflows")])
    return None


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU the processes used so far, from /proc (robust to other load on the machine)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
    return total / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def converse(client: WebClient, assistant_id: int, message: str, port: int | None) -> dict:
    """One streamed turn, on `port` (the gevent worker's in prefork) or the client's own; a start
    that failed before anything was stored is sent again as the widget does (testing/start_retry.py),
    and the event times count from the first try."""
    run = stream_with_retries(
        lambda body: client.stream(body, port=port, timeout=STREAM_TIMEOUT),
        {"assistant_id": assistant_id, "message": message},
    )
    waited = run["waited"]
    events = [(seconds + waited, event) for seconds, event in run["events"]]
    timing = {"total": run["total"] + waited} if "total" in run else {}
    return {**run, **timing, "events": events, "message": message}


def stream_problem(run: dict) -> str | None:
    if run["error"] or run["status"] != 200:
        return f"status={run['status']} {run['error']}"
    kinds = [event.event for _t, event in run["events"]]
    if not kinds or kinds[-1] != "done":
        return f"ended with {kinds[-3:]}"
    bad = [event.data for _t, event in run["events"] if event.event in ("error", "warning")]
    if bad:
        return f"error/warning events: {bad}"
    if kinds.count("round") != ROUNDS:
        return f"{kinds.count('round')} rounds"
    results = [event.data for _t, event in run["events"] if event.event == "tool_result"]
    if len(results) != TOOL_ROUNDS or not all(r["ok"] for r in results):
        return f"tool results: {[(r['ok'], r.get('error_code')) for r in results]}"
    return None


def stored_problem(run: dict, user: WebClient, admin: WebClient) -> str | None:
    """Whether what was stored is exactly what was streamed."""
    streamed = [event for _t, event in run["events"]]
    conversation_id = streamed[0].data["conversation_id"]
    history = user.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history", {})
    stored = [(e.pop("seq"), e["type"], e) for e in history["events"]]
    if [(s, t) for s, t, _p in stored] != [(e.id, e.event) for e in streamed]:
        return "stored events differ from the streamed ones"
    for (seq, _type, payload), event in zip(stored, streamed, strict=False):
        if payload != event.data:
            keys = sorted(k for k in set(payload) | set(event.data) if payload.get(k) != event.data.get(k))
            return f"stored payload of event {seq} ({event.event}) differs from the streamed one in {keys}"
    if history["conversation"]["state"] != "idle" or history["conversation"]["last_seq"] != streamed[-1].id:
        return f"conversation {history['conversation']['state']} last_seq {history['conversation']['last_seq']}"
    messages = admin.call(
        "ai.message",
        "search_read",
        [("conversation_id", "=", conversation_id)],
        ["role", "content", "tool_call_id", "status", "tool_calls"],
        order="seq, id",
    )
    roles = [m["role"] for m in messages]
    if roles != ["user"] + ["assistant", "tool"] * TOOL_ROUNDS + ["assistant"]:
        return f"messages {roles}"
    if messages[0]["content"] != run["message"]:
        return "the user message differs"
    results = {e.data["id"]: e.data for e in streamed if e.event == "tool_result"}
    for call_message, tool_message in zip(messages[1:-1:2], messages[2:-1:2], strict=False):
        call_ids = [c["id"] for c in call_message["tool_calls"] or []]
        result = results.get(tool_message["tool_call_id"])
        if call_ids != [tool_message["tool_call_id"]] or result is None:
            return "a tool message does not match its call"
        if tool_message["status"] != "done" or tool_message["content"] != result["model_text"]:
            return "a tool message differs from its streamed result"
    answer = "".join(e.data["delta"] for e in streamed if e.event == "text")
    if messages[-1]["content"] != answer:
        return "the stored answer differs from the streamed text"
    return None


def added_per_round(run: dict, llm_times: dict[tuple[str, int], float]) -> list[float] | None:
    """[(`start` to `done` - the model's own time - the tools' time) / rounds] in seconds.

    Whole turns, not single rounds: the loop runs ahead of the route that writes its events (a
    bounded buffer), so under load one round's boundary can reach the client late and the next
    early; their sum is exact.
    """
    events = run["events"]
    model = [llm_times.get((run["message"], index + 1)) for index in range(ROUNDS)]
    if None in model:
        return None
    tools = sum(e.data["duration_ms"] for _t, e in events if e.event == "tool_result") / 1000
    return [(events[-1][0] - events[0][0] - sum(model) - tools) / ROUNDS]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(values: list[float], q: float) -> float:
    return percentile(values, q) * 1000


def hub_sample(admin: WebClient, ports: list[int], tries: int = 6) -> dict[int, dict]:
    """/ai_mcp/hub/stats of every process that answers on the ports, two requests at a time per port
    (prefork: both HTTP workers, and the gevent worker that ran the turns)."""
    seen: dict[int, dict] = {}

    def one(port: int) -> None:
        with contextlib.suppress(Exception):
            status, body = admin.get("/ai_mcp/hub/stats", port=port)
            if status == 200:
                data = json.loads(body)
                seen[data["pid"]] = data

    for _ in range(tries):
        threads = [threading.Thread(target=one, args=(port,)) for port in ports for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    return seen


def wave(
    clients: list[WebClient], assistant: int, label: str, count: int, port: int | None
) -> tuple[list[dict], float]:
    results: list[dict] = [{} for _ in range(count)]
    barrier = threading.Barrier(count)

    def one(index: int) -> None:
        barrier.wait()
        client = index % len(clients)
        results[index] = {**converse(clients[client], assistant, f"{label} {index}", port), "client": client}

    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(STREAM_TIMEOUT + 60)
    return results, time.perf_counter() - started


def check(runs: list[dict], clients: list[WebClient], admin: WebClient) -> tuple[list[str], list[str]]:
    errors, lost = [], []
    for run in runs:
        problem = stream_problem(run)
        if problem:
            errors.append(f"{run['message']}: {problem}")
            continue
        try:
            problem = stored_problem(run, clients[run["client"]], admin)
        except Exception as exc:  # noqa: BLE001
            problem = f"could not read it back: {exc}"
        if problem:
            lost.append(f"{run['message']}: {problem}")
    return errors, lost


def mb(kb: int) -> float:
    return kb / 1024
