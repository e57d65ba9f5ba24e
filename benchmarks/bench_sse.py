"""What the SSE chat route costs on top of the agent loop, and whether 20 streams at once hold.

    python benchmarks/bench_sse.py
        starts its own Odoo 18 (ODOO_BIN or /opt/odoo18/odoo-bin, run by ODOO_PYTHON or the
        .venv next to it) on a free port with a new database holding ai_mcp (no demo data), and
        drops the database at the end
    python benchmarks/bench_sse.py --url http://127.0.0.1:8069 --db ai_mcp --login admin --password admin
        uses an Odoo already running with ai_mcp installed; it must reach this machine's
        127.0.0.1 (the scripted model runs in this process). It adds a provider and an assistant.

The model is the scripted OpenAI-compatible server of testing/, in this process, answering at once
with a text of TEXT_CHUNKS deltas and no tool, so what is measured is the route itself: claiming
the conversation, storing the user message, every event written in its own transaction, the SSE
framing, the WSGI server. Each run is a new conversation.

  direct  run_turn(TurnRequest, hub) read through hub.iterate() in this process, as an Odoo request
          reads it, with the same settings: the loop without Odoo.
  sse     POST /ai_mcp/chat/stream over HTTP/1.1 (http.client), timed to the first byte of the body
          (the `start` event, sent before the model is called), to the first text delta, and to
          the end of the stream.

first_text_overhead_ms = sse first text - direct first text (goal: <= 50 ms beyond the model);
per_event_overhead_ms = (sse total - direct total) / events of a turn. Then CONCURRENT streams
start at once (a barrier), each on its own connection: every one must end with `done` and no
error. Medians over RUNS runs after WARMUP runs. The last line is machine-readable.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run as a plain script: the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from services.llm import LlmSettings  # noqa: E402
from services.loop import (  # noqa: E402
    AssistantSettings,
    LoopLimits,
    TurnRequest,
    run_turn,
)
from services.mcp import get_hub  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient  # noqa: E402
from testing.scripted_llm import ScriptedLLM, Turn  # noqa: E402

API_KEY = "bench-key"
MODEL = "scripted-model"
TEXT = " ".join(f"word{i}" for i in range(120))
TEXT_CHUNKS = 60
RUNS = 30
WARMUP = 3
CONCURRENT = 20
GOAL_FIRST_TEXT_MS = 50.0
READY_TIMEOUT = 120.0


def responder(_body: dict) -> Turn:
    return Turn(text=TEXT, chunks=TEXT_CHUNKS)


# -- an Odoo of our own ------------------------------------------------------------------------


def timed_stream(client: WebClient, assistant_id: int, message: str) -> dict:
    """One streamed turn: timings in ms from sending, the events, the status."""
    run = client.stream({"assistant_id": assistant_id, "message": message}, timeout=60)
    timed = run["events"]
    first_text = next((t for t, event in timed if event.event == "text"), None)
    return {
        "status": run["status"],
        "error": run["error"],
        "events": [event for _t, event in timed],
        "ttfb": timed[0][0] * 1000 if timed else None,
        "first_text": None if first_text is None else first_text * 1000,
        "total": run["total"] * 1000,
    }


# -- the loop without Odoo ---------------------------------------------------------------------


def direct_turn(settings: AssistantSettings, message: str) -> dict:
    hub = get_hub()
    request = TurnRequest(assistant=settings, user_message=message, conversation_id=1)
    started = time.perf_counter()
    result = {"events": [], "ttfb": None, "first_text": None}
    for event in hub.iterate(lambda: run_turn(request, hub)):
        now = (time.perf_counter() - started) * 1000
        if result["ttfb"] is None:
            result["ttfb"] = now
        if event.type == "text" and result["first_text"] is None:
            result["first_text"] = now
        result["events"].append(event)
    result["total"] = (time.perf_counter() - started) * 1000
    return result


def median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    opts = _parser().parse_args()

    llm = ScriptedLLM(responder=responder, api_key=API_KEY)
    llm.start()
    odoo = None
    try:
        if opts.url:
            if not opts.db:
                sys.exit("--db is required with --url")
            url, db = opts.url, opts.db
        else:
            try:
                odoo = OdooServer("bench-sse", ready_timeout=READY_TIMEOUT)
            except OdooNotFound as exc:
                sys.exit(f"{exc}, or pass --url of a running Odoo with ai_mcp")
            print(f"odoo: installing ai_mcp into new database {odoo.db} (logs in {odoo.tmp})", flush=True)
            odoo.install()
            odoo.start("threaded")
            url, db = odoo.url, odoo.db
        client = WebClient(url, db, opts.login, opts.password, timeout=60)
        assistant, settings = _bench_assistant(client, llm)
        direct_runs, sse_runs, events = _sequential_runs(client, assistant, settings, opts.runs)
        wall, errors, ok = _concurrent_runs(client, assistant, opts.concurrent)
    finally:
        llm.close()
        if odoo is not None:
            odoo.close()

    if not _report(opts, direct_runs, sse_runs, events, wall, errors, ok):
        sys.exit(1)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="SSE chat route overhead and concurrency")
    parser.add_argument("--url", help="an Odoo already running with ai_mcp (default: start one)")
    parser.add_argument("--db")
    parser.add_argument("--login", default="admin")
    parser.add_argument("--password", default="admin")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--concurrent", type=int, default=CONCURRENT)
    return parser


def _bench_assistant(client: WebClient, llm: ScriptedLLM) -> tuple[int, AssistantSettings]:
    """An assistant on the scripted model in Odoo, and the same settings for the loop alone."""
    provider = client.call(
        "ai.provider",
        "create",
        {"name": "bench scripted", "base_url": llm.base_url, "api_key": API_KEY, "default_model": MODEL},
    )
    assistant = client.call("ai.assistant", "create", {"name": "bench", "provider_id": provider, "temperature": 0.0})
    settings = AssistantSettings(
        name="bench",
        llm=LlmSettings(base_url=llm.base_url, api_key=API_KEY, model=MODEL, temperature=0.0),
        limits=LoopLimits(),
    )
    return assistant, settings


def _sequential_runs(
    client: WebClient, assistant: int, settings: AssistantSettings, runs: int
) -> tuple[list[dict], list[dict], int]:
    """`runs` turns through the loop alone and through the route, after the warm-up: (direct runs,
    SSE runs, events of a turn)."""
    direct_runs, sse_runs = [], []
    for i in range(WARMUP + runs):
        # interleaved, so that both see the same machine
        direct = direct_turn(settings, f"hello {i}")
        sse = timed_stream(client, assistant, f"hello {i}")
        if sse["status"] != 200 or not sse["events"] or sse["events"][-1].event != "done":
            sys.exit(f"the SSE turn failed: {sse.get('error') or [e.event for e in sse['events']]}")
        if i >= WARMUP:
            direct_runs.append(direct)
            sse_runs.append(sse)
    events = len(sse_runs[0]["events"])
    assert events == len(direct_runs[0]["events"]), (events, len(direct_runs[0]["events"]))
    return direct_runs, sse_runs, events


def _concurrent_runs(client: WebClient, assistant: int, concurrent: int) -> tuple[float, list[dict], list[dict]]:
    """`concurrent` streams started at once: (wall ms, the failed ones, the others)."""
    results: list[dict] = [{} for _ in range(concurrent)]
    barrier = threading.Barrier(concurrent)

    def one(index: int) -> None:
        barrier.wait()
        results[index] = timed_stream(client, assistant, f"concurrent {index}")

    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(concurrent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    wall = (time.perf_counter() - started) * 1000
    errors = [r for r in results if r.get("status") != 200 or not r["events"] or r["events"][-1].event != "done"]
    for failed in errors[:3]:
        print(
            f"  concurrent stream failed: status={failed.get('status')} "
            f"{failed.get('error') or [e.event for e in failed['events']][-3:]}"
        )
    ok = [r for r in results if r not in errors]
    return wall, errors, ok


def _report(
    opts, direct_runs: list[dict], sse_runs: list[dict], events: int, wall: float, errors: list[dict], ok: list[dict]
) -> bool:
    """Prints the figures and the machine-readable line; whether every goal is met."""
    d_ttfb, s_ttfb = median(direct_runs, "ttfb"), median(sse_runs, "ttfb")
    d_text, s_text = median(direct_runs, "first_text"), median(sse_runs, "first_text")
    d_total, s_total = median(direct_runs, "total"), median(sse_runs, "total")
    first_text_overhead = s_text - d_text
    per_event = (s_total - d_total) / events
    ttfbs = [r["ttfb"] for r in ok] or [float("nan")]
    print(
        f"{events} events per turn ({TEXT_CHUNKS} text deltas), medians of {len(sse_runs)} turns after {WARMUP} warm-up"
    )
    print(f"{'':8}{'first byte':>12}{'first text':>12}{'done':>10}   (ms)")
    print(f"{'direct':8}{d_ttfb:12.1f}{d_text:12.1f}{d_total:10.1f}")
    print(f"{'sse':8}{s_ttfb:12.1f}{s_text:12.1f}{s_total:10.1f}")
    print(
        f"first text {first_text_overhead:+.1f} ms beyond the loop (goal <= {GOAL_FIRST_TEXT_MS:.0f}): "
        f"{'ok' if first_text_overhead <= GOAL_FIRST_TEXT_MS else 'MISSED'}"
    )
    print(f"per event {per_event:.2f} ms beyond the loop")
    print(
        f"{opts.concurrent} concurrent streams: {len(errors)} errors, wall {wall:.0f} ms, "
        f"first byte p50 {percentile(ttfbs, 0.5):.1f} ms p95 {percentile(ttfbs, 0.95):.1f} ms: "
        f"{'ok' if not errors else 'MISSED'}"
    )
    print(
        f"sse_ttfb_ms={s_ttfb:.1f} first_text_overhead_ms={first_text_overhead:.1f} "
        f"per_event_overhead_ms={per_event:.2f} "
        f"sse/direct={s_total / d_total:.2f} concurrent={opts.concurrent} concurrent_errors={len(errors)} "
        f"concurrent_ttfb_p95_ms={percentile(ttfbs, 0.95):.1f}"
    )
    return not (first_text_overhead > GOAL_FIRST_TEXT_MS or errors)


if __name__ == "__main__":
    main()
