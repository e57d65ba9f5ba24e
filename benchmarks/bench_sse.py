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
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run as a plain script: the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

from services.agent_loop import AssistantSettings, LoopLimits, TurnRequest, run_turn  # noqa: E402
from services.hub import get_hub  # noqa: E402
from services.llm_stream import LlmSettings  # noqa: E402
from services.sse import SseDecoder  # noqa: E402
from testing.scripted_llm import ScriptedLLM, Turn  # noqa: E402

from benchmarks import odoo_process  # noqa: E402
from benchmarks.odoo_process import wait_until_serving  # noqa: E402

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OwnOdoo:
    """odoo-bin on a free port with a new database holding ai_mcp, like scripts/lib.sh does it."""

    def __init__(self) -> None:
        self.bin = os.environ.get("ODOO_BIN") or "/opt/odoo18/odoo-bin"
        if not os.path.isfile(self.bin):
            sys.exit(f"no Odoo 18 at {self.bin}: set ODOO_BIN, or pass --url of a running Odoo with ai_mcp")
        root = Path(self.bin).resolve().parent
        self.python = os.environ.get("ODOO_PYTHON") or (str(root / ".venv/bin/python") if (root / ".venv/bin/python").exists() else sys.executable)
        self.tmp = Path(tempfile.mkdtemp(prefix="ai_mcp-bench-sse."))
        (self.tmp / "addons").mkdir()
        (self.tmp / "addons" / "ai_mcp").symlink_to(ROOT)
        addons = [str(self.tmp / "addons")]
        if (root / "addons").is_dir() and (root / "odoo" / "release.py").exists():
            addons.insert(0, str(root / "addons"))
        self.addons_path = ",".join(addons)
        self.db = f"ai_mcp_bench_sse_{os.getpid()}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log = self.tmp / "odoo.log"

    def base_args(self) -> list[str]:
        return [
            self.python, self.bin, f"--addons-path={self.addons_path}", f"--data-dir={self.tmp / 'data'}",
            "-d", self.db, f"--db-filter=^{self.db}$", "--http-interface=127.0.0.1", f"--http-port={self.port}",
            "--max-cron-threads=0", f"--logfile={self.log}",
        ]

    def start(self) -> None:
        print(f"odoo: installing ai_mcp into new database {self.db} (log {self.log})", flush=True)
        subprocess.run(
            [*self.base_args(), "-i", "ai_mcp", "--without-demo=all", "--stop-after-init"], check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.process = subprocess.Popen([*self.base_args(), "--workers=0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until_serving(self.process, self.port, str(self.log), READY_TIMEOUT)
        print(f"odoo: serving on {self.url}", flush=True)

    def stop(self) -> None:
        odoo_process.stop(self.process, grace=20)
        subprocess.run(["dropdb", "--if-exists", self.db], check=False, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.tmp, ignore_errors=True)


# -- HTTP client -------------------------------------------------------------------------------


class Client:
    """A logged-in web session: cookie, CSRF token, JSON-RPC."""

    def __init__(self, url: str, db: str, login: str, password: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.cookie = ""
        result = self.jsonrpc("/web/session/authenticate", {"db": db, "login": login, "password": password})
        if not result.get("uid"):
            sys.exit(f"cannot log in as {login}")
        page = self.get("/odoo")
        match = re.search(r'csrf_token: "([^"]+)"', page)
        if not match:
            sys.exit("no csrf_token in /odoo")
        self.csrf = match.group(1)

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def get(self, path: str) -> str:
        conn = self.connection()
        conn.request("GET", path, headers={"Cookie": self.cookie})
        return conn.getresponse().read().decode()

    def jsonrpc(self, path: str, params: dict):
        conn = self.connection()
        body = json.dumps({"jsonrpc": "2.0", "method": "call", "params": params})
        conn.request("POST", path, body, headers={"Content-Type": "application/json", "Cookie": self.cookie})
        response = conn.getresponse()
        cookie = response.getheader("Set-Cookie")
        if cookie and "session_id=" in cookie:
            self.cookie = cookie.split(";", 1)[0]
        data = json.loads(response.read())
        if "error" in data:
            raise RuntimeError(data["error"])
        return data["result"]

    def call(self, model: str, method: str, *args, **kwargs):
        return self.jsonrpc(f"/web/dataset/call_kw/{model}/{method}", {"model": model, "method": method, "args": list(args), "kwargs": kwargs})

    def stream(self, assistant_id: int, message: str) -> dict:
        """One streamed turn: timings in ms from sending, the events, the status."""
        conn = self.connection()
        body = json.dumps({"assistant_id": assistant_id, "message": message})
        headers = {"Content-Type": "application/json", "Cookie": self.cookie, "X-CSRF-Token": self.csrf}
        started = time.perf_counter()
        conn.request("POST", "/ai_mcp/chat/stream", body, headers=headers)
        response = conn.getresponse()
        result = {"status": response.status, "events": [], "ttfb": None, "first_text": None, "total": None}
        if response.status != 200:
            result["error"] = response.read().decode(errors="replace")[:300]
            return result
        decoder = SseDecoder()
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            now = (time.perf_counter() - started) * 1000
            if result["ttfb"] is None:
                result["ttfb"] = now
            for event in decoder.feed(chunk):
                result["events"].append(event)
                if event.event == "text" and result["first_text"] is None:
                    result["first_text"] = now
        result["total"] = (time.perf_counter() - started) * 1000
        conn.close()
        return result


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
    parser = argparse.ArgumentParser(description="SSE chat route overhead and concurrency")
    parser.add_argument("--url", help="an Odoo already running with ai_mcp (default: start one)")
    parser.add_argument("--db")
    parser.add_argument("--login", default="admin")
    parser.add_argument("--password", default="admin")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--concurrent", type=int, default=CONCURRENT)
    opts = parser.parse_args()

    llm = ScriptedLLM(responder=responder, api_key=API_KEY)
    llm.start()
    odoo = None
    try:
        if opts.url:
            if not opts.db:
                sys.exit("--db is required with --url")
            url, db = opts.url, opts.db
        else:
            odoo = OwnOdoo()
            odoo.start()
            url, db = odoo.url, odoo.db
        client = Client(url, db, opts.login, opts.password)
        provider = client.call("ai.provider", "create", {"name": "bench scripted", "base_url": llm.base_url, "api_key": API_KEY, "default_model": MODEL})
        assistant = client.call("ai.assistant", "create", {"name": "bench", "provider_id": provider, "temperature": 0.0})
        settings = AssistantSettings(
            name="bench", llm=LlmSettings(base_url=llm.base_url, api_key=API_KEY, model=MODEL, temperature=0.0), limits=LoopLimits()
        )

        direct_runs, sse_runs = [], []
        for i in range(WARMUP + opts.runs):
            # interleaved, so that both see the same machine
            direct = direct_turn(settings, f"hello {i}")
            sse = client.stream(assistant, f"hello {i}")
            if sse["status"] != 200 or not sse["events"] or sse["events"][-1].event != "done":
                sys.exit(f"the SSE turn failed: {sse.get('error') or [e.event for e in sse['events']]}")
            if i >= WARMUP:
                direct_runs.append(direct)
                sse_runs.append(sse)
        events = len(sse_runs[0]["events"])
        assert events == len(direct_runs[0]["events"]), (events, len(direct_runs[0]["events"]))

        results: list[dict] = [{} for _ in range(opts.concurrent)]
        barrier = threading.Barrier(opts.concurrent)

        def one(index: int) -> None:
            barrier.wait()
            try:
                results[index] = client.stream(assistant, f"concurrent {index}")
            except Exception as exc:  # noqa: BLE001 - counted as an error
                results[index] = {"status": None, "error": repr(exc), "events": []}

        started = time.perf_counter()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(opts.concurrent)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        wall = (time.perf_counter() - started) * 1000
        errors = [r for r in results if r.get("status") != 200 or not r["events"] or r["events"][-1].event != "done"]
        for failed in errors[:3]:
            print(f"  concurrent stream failed: status={failed.get('status')} {failed.get('error') or [e.event for e in failed['events']][-3:]}")
        ok = [r for r in results if r not in errors]
    finally:
        llm.close()
        if odoo is not None:
            odoo.stop()

    d_ttfb, s_ttfb = median(direct_runs, "ttfb"), median(sse_runs, "ttfb")
    d_text, s_text = median(direct_runs, "first_text"), median(sse_runs, "first_text")
    d_total, s_total = median(direct_runs, "total"), median(sse_runs, "total")
    first_text_overhead = s_text - d_text
    per_event = (s_total - d_total) / events
    ttfbs = [r["ttfb"] for r in ok] or [float("nan")]
    print(f"{events} events per turn ({TEXT_CHUNKS} text deltas), medians of {len(sse_runs)} turns after {WARMUP} warm-up")
    print(f"{'':8}{'first byte':>12}{'first text':>12}{'done':>10}   (ms)")
    print(f"{'direct':8}{d_ttfb:12.1f}{d_text:12.1f}{d_total:10.1f}")
    print(f"{'sse':8}{s_ttfb:12.1f}{s_text:12.1f}{s_total:10.1f}")
    print(f"first text {first_text_overhead:+.1f} ms beyond the loop (goal <= {GOAL_FIRST_TEXT_MS:.0f}): "
          f"{'ok' if first_text_overhead <= GOAL_FIRST_TEXT_MS else 'MISSED'}")
    print(f"per event {per_event:.2f} ms beyond the loop")
    print(f"{opts.concurrent} concurrent streams: {len(errors)} errors, wall {wall:.0f} ms, "
          f"first byte p50 {percentile(ttfbs, 0.5):.1f} ms p95 {percentile(ttfbs, 0.95):.1f} ms: {'ok' if not errors else 'MISSED'}")
    print(
        f"sse_ttfb_ms={s_ttfb:.1f} first_text_overhead_ms={first_text_overhead:.1f} per_event_overhead_ms={per_event:.2f} "
        f"sse/direct={s_total / d_total:.2f} concurrent={opts.concurrent} concurrent_errors={len(errors)} "
        f"concurrent_ttfb_p95_ms={percentile(ttfbs, 0.95):.1f}"
    )


if __name__ == "__main__":
    main()
