"""50 concurrent conversations of 5 rounds each against a real Odoo, threaded and prefork.

    python benchmarks/bench_load.py
        installs ai_mcp (no demo data) into a new database, then starts Odoo 18 (ODOO_BIN or
        /opt/odoo18/odoo-bin, run by ODOO_PYTHON or the .venv next to it) twice on it: threaded
        (--workers=0), then prefork (--workers=2); drops the database at the end.
    options: --modes threaded,prefork  --conversations 50  --prefork-workers 2  --waves 2
             --stream-via gevent|http  --pace fast|realistic  --db-maxconn-gevent N  --private-pg N
    python benchmarks/bench_load.py --scale
        the scale run: 200 conversations at once, twice, on the gevent worker of --workers=2, the
        model paced as a real one (300 ms to the first token, then 20 tokens/s, so turns overlap
        as in real use); Odoo's gevent pool sized for 200 streams (--db-maxconn-gevent 240) on a
        private PostgreSQL of this run allowing 600 connections (--private-pg 600; this machine's
        shared one allows 100), as an operator sizes them (README, operators). Same as
        --modes prefork --conversations 200 --waves 2 --pace realistic --db-maxconn-gevent 240 --private-pg 600.

In prefork the chat stream goes to Odoo's gevent worker, as the reverse proxy of the README routes
it (next to /websocket); other requests go to the HTTP workers. --stream-via http sends the stream
to the HTTP workers instead: each turn then holds a worker, and past 8 x workers waiting
connections the kernel resets them (Odoo's listen backlog).

Each conversation is one turn of 5 rounds: the scripted model (in a process of its own) calls a tool
until the turn holds 4 tool results, then answers. The assistant's max_rounds is 6, so round 5 runs
without the "continue?" pause (the pause comes after round max_rounds - 1 when the model still
wants tools). Tools are echo, add and weather of 4 real FastMCP servers over streamable HTTP (12
tools offered; every call goes to echo of one of the 4 servers, in turn). 10 users hold the
conversations.

Measured for each mode:
  errors  a conversation whose stream is not 200, fails, or does not end with `done` after 5 rounds
          with 4 successful tool results (or any `error`/`warning` event)
  lost    a conversation whose stored events (/history) are not exactly the streamed ones, or whose
          messages (user, 4 x assistant call + tool result, answer) do not match what was streamed
  added latency per round: the time from the `start` event to `done` seen by the client, minus
          the scripted model's own time for each round (measured in the model's server, from the
          request read to the last byte written), minus the tools' time (tool_result duration_ms:
          the MCP round trip), divided by the 5 rounds. What is left is what the loop, the database
          writes, the SSE route and the WSGI server add. Like bench_sse, the same is
          measured for the loop alone (run_turn read through hub.iterate in this process) and for
          Odoo one conversation at a time, beside the 50 concurrent ones.
  first byte  time from sending to the `start` event: the wait for a free worker (prefork over
          HTTP workers) or for the CPU (many turns starting in one process).
  hub     GET /ai_mcp/hub/stats (AI managers), asked on every port a turn may run behind: each
          process's open MCP sessions against the pool
          limit; RSS of every Odoo process from /proc, after warm-up, after each wave.
The last line is machine-readable and starts with errors= and lost=.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run as a plain script: the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from typing import NamedTuple  # noqa: E402

from testing.mcp_servers import HttpServer, free_port  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "bench-load-key"
MODEL = "scripted-model"
CONVERSATIONS = 50
TOOL_ROUNDS = 4  # tool results before the answer: 5 rounds
ROUNDS = TOOL_ROUNDS + 1
MAX_ROUNDS = ROUNDS + 1  # no "continue?" pause before round 5
MCP_SERVERS = 4
OFFERED_TOOLS = ("echo", "add", "weather")
USERS = 10
WARMUP = 4
SEQUENTIAL = 5
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
SCALE = {
    "modes": "prefork",
    "conversations": 200,
    "waves": 2,
    "pace": "realistic",
    "db_maxconn_gevent": 240,
    "private_pg": 600,
}
READY_TIMEOUT = 120.0
STREAM_TIMEOUT = 600.0


# -- the scripted model, in a process of its own ------------------------------------------------


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
            [sys.executable, __file__, "--serve-llm", str(self.port), "--timings", str(self.timings), "--pace", pace],
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


# -- PostgreSQL ----------------------------------------------------------------------------------


class PrivatePostgres:
    """A PostgreSQL cluster of this run only, allowing `max_connections`: the shared server of this
    machine allows 100, fewer than the pools of a gevent worker sized for 200 streams. Odoo, dropdb
    and psql find it through PGHOST/PGPORT/PGUSER. initdb refuses root, so it runs as `postgres`."""

    BIN = Path("/usr/lib/postgresql/15/bin")
    OS_USER = "postgres"

    def __init__(self, tmp: Path, max_connections: int) -> None:
        self.dir = tmp / "pg"
        self.dir.mkdir()
        self.port = free_port()
        self.log = tmp / "pg.log"
        # the run's folder (mode 0700) holds its cluster, socket and log
        shutil.chown(tmp, user=self.OS_USER)
        shutil.chown(self.dir, user=self.OS_USER)
        self._as_postgres([str(self.BIN / "initdb"), "-D", str(self.dir), "-U", "root", "-A", "trust", "--no-sync"])
        self._as_postgres(
            [
                str(self.BIN / "pg_ctl"),
                "-D",
                str(self.dir),
                "-l",
                str(self.log),
                "-w",
                "start",
                "-o",
                f"-p {self.port} -k {self.dir} -c listen_addresses='' -c max_connections={max_connections}"
                " -c fsync=off -c shared_buffers=256MB",
            ]
        )
        self.env = {"PGHOST": str(self.dir), "PGPORT": str(self.port), "PGUSER": "root"}

    def _as_postgres(self, command: list[str]) -> None:
        subprocess.run(["runuser", "-u", self.OS_USER, "--", *command], check=True, stdout=subprocess.DEVNULL)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._as_postgres([str(self.BIN / "pg_ctl"), "-D", str(self.dir), "-m", "fast", "-w", "stop"])


# -- Odoo --------------------------------------------------------------------------------------


class BenchOdoo(OdooServer):
    """The Odoo under load, with the memory and role of each of its processes."""

    def processes(self) -> dict[int, int]:
        """{pid: RSS kB} of the Odoo process and its children, from /proc."""
        if self.process is None:
            return {}
        children: dict[int, list[int]] = defaultdict(list)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = (entry / "stat").read_text()
                    children[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry.name))
        pids, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo += children.get(pid, [])
        return {pid: rss for pid in pids if (rss := _rss_kb(pid)) is not None}

    def roles(self) -> dict[int, str]:
        """{pid: main | http worker | gevent} of the processes alive now."""
        roles = {}
        for pid in self.processes():
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                roles[pid] = (
                    "main" if pid == self.process.pid else ("gevent" if b"gevent" in argv[:3] else "http worker")
                )
        return roles


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


def _rss_kb(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def converse(client: WebClient, assistant_id: int, message: str, port: int | None) -> dict:
    """One streamed turn, on `port` (the gevent worker's in prefork) or the client's own."""
    run = client.stream({"assistant_id": assistant_id, "message": message}, port=port, timeout=STREAM_TIMEOUT)
    return {**run, "message": message}


# -- one conversation: checked and measured ----------------------------------------------------


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


# -- the loop alone ----------------------------------------------------------------------------


def direct_costs(llm: LlmProcess, servers: list[HttpServer], runs: int) -> list[float]:
    """The same turn through run_turn in this process, read as an Odoo request reads it."""
    from services.agent_loop import AssistantSettings, LoopLimits, ToolBinding, TurnRequest, run_turn
    from services.hub import get_hub
    from services.llm_stream import LlmSettings
    from services.server_spec import build_server_spec

    hub = get_hub()
    tools = []
    for index, server in enumerate(servers):
        spec = build_server_spec(key=f"direct-{index}", name=f"Load tools {index + 1}", url=server.url)
        tools += [
            ToolBinding(server=spec, tool=t) for t in hub.run(hub.alist_tools(spec)).tools if t.name in OFFERED_TOOLS
        ]
    settings = AssistantSettings(
        name="bench",
        llm=LlmSettings(base_url=llm.base_url, api_key=API_KEY, model=MODEL, temperature=0.0),
        limits=LoopLimits(max_rounds=MAX_ROUNDS),
    )
    collected = []
    for i in range(runs + 1):
        message = f"direct {i}"
        request = TurnRequest(assistant=settings, tools=tools, user_message=message, conversation_id=1)
        started = time.perf_counter()
        events = [(time.perf_counter() - started, event) for event in hub.iterate(lambda r=request: run_turn(r, hub))]
        run = {"message": message, "events": [(t, _Wire(e)) for t, e in events]}
        if i == 0:
            continue  # warm-up
        costs = added_per_round(run, llm.times())
        if costs:
            collected += costs
    hub.shutdown()
    return collected


class _Wire:
    """An Event seen as the SSE client sees it."""

    def __init__(self, event) -> None:
        self.event = event.type
        self.data = event.data()


# -- one mode ----------------------------------------------------------------------------------


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
        groups = admin.call(
            "ir.model.data",
            "search_read",
            [
                ("model", "=", "res.groups"),
                ("name", "in", ["group_user", "group_ai_user"]),
                ("module", "in", ["base", "ai_mcp"]),
            ],
            ["res_id"],
        )
        self.logins = [f"load_user_{i}" for i in range(USERS)]
        for login in self.logins:
            admin.call(
                "res.users",
                "create",
                {
                    "name": login,
                    "login": login,
                    "password": login,
                    "groups_id": [(6, 0, [g["res_id"] for g in groups])],
                },
            )


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


def run_mode(
    mode: str, odoo: BenchOdoo, llm: LlmProcess, servers: list[HttpServer], setup: Setup | None, opts
) -> tuple[dict, Setup]:
    workers = 0 if mode == "threaded" else opts.prefork_workers
    odoo.start(
        mode, workers, extra=(f"--db_maxconn_gevent={opts.db_maxconn_gevent}",) if opts.db_maxconn_gevent else ()
    )
    # A reverse proxy sends /websocket and the chat stream to the gevent worker (README, operators);
    # --stream-via http sends the stream to the HTTP workers instead, as Odoo without that rule does.
    stream_port = odoo.gevent_port if workers and opts.stream_via == "gevent" else None
    route = (
        ""
        if not workers
        else (
            f"; chat stream to the gevent worker (port {odoo.gevent_port})"
            if stream_port
            else f"; chat stream to the HTTP workers, listen backlog 8 x workers = {8 * workers}"
        )
    )
    print(
        f"\n== {mode} (--workers={workers}; limit_time_real 120 s, limit_request 65536: Odoo's defaults{route}) ==",
        flush=True,
    )
    try:
        admin = WebClient(odoo.url, odoo.db, "admin", "admin")
        setup = setup or Setup(admin, llm, servers)
        clients = [WebClient(odoo.url, odoo.db, login, login) for login in setup.logins]
        rss_start = odoo.processes()

        # every worker loads its registry and opens its MCP sessions before the measured waves
        warm, _wall = wave(clients, setup.assistant, f"{mode} warm-up", max(WARMUP, workers), stream_port)
        sequential = [
            {**converse(clients[0], setup.assistant, f"{mode} sequential {i}", stream_port), "client": 0}
            for i in range(SEQUENTIAL)
        ]
        rss_warm = odoo.processes()
        waves, rss_after, errors, lost, walls = [], [], [], [], []
        overflows_before = listen_overflows()
        # the CPU of the process the streams run in (threaded: the one process; prefork: the gevent worker)
        serving = [pid for pid, role in odoo.roles().items() if role == ("gevent" if stream_port else "main")]
        cpu = []
        for number in range(1, opts.waves + 1):
            cpu_before = cpu_seconds(serving)
            runs, wall = wave(clients, setup.assistant, f"{mode} wave {number}", opts.conversations, stream_port)
            cpu.append(cpu_seconds(serving) - cpu_before)
            waves.append(runs)
            walls.append(wall)
            rss_after.append(odoo.processes())
        overflows = None if overflows_before is None else listen_overflows() - overflows_before
        roles = odoo.roles()
        hubs = hub_sample(admin, [odoo.port] + ([stream_port] if stream_port else []))
        llm_times = llm.times()
        for runs in [warm, sequential, *waves]:
            e, lo = check(runs, clients, admin)
            errors += e
            lost += lo
        log_problems = odoo.log_errors()
    finally:
        odoo.stop()

    def costs(runs: list[dict]) -> list[float]:
        out = []
        for run in runs:
            if not stream_problem(run):
                out += added_per_round(run, llm_times) or []
        return out

    seq_costs, load_costs = costs(sequential), costs(waves[0])
    first_bytes = [run["events"][0][0] for run in waves[0] if run.get("events")]
    totals = [run["total"] for run in waves[0] if "total" in run]
    for problem in (errors + lost)[:5]:
        print(f"  problem: {problem}")
    for line in log_problems[:3]:
        print(f"  odoo log: {line[:200]}")
    print(
        f"{opts.conversations} concurrent conversations x {ROUNDS} rounds, {opts.waves} wave(s): "
        f"{len(errors)} errors, {len(lost)} lost, {len(log_problems)} ERROR lines in the Odoo log, "
        f"{'?' if overflows is None else overflows} connections dropped by a full listen queue (host counter)"
    )
    print(
        f"  wave 1: wall {walls[0]:.1f} s; per conversation p50 {percentile(totals, 0.5):.1f} s p95 "
        f"{percentile(totals, 0.95):.1f} s; "
        f"first byte p50 {ms(first_bytes, 0.5):.0f} ms p95 {ms(first_bytes, 0.95):.0f} ms max "
        f"{max(first_bytes, default=0) * 1000:.0f} ms"
    )
    print(
        f"  added latency per round (route - model - tool), ms: one at a time p50 {ms(seq_costs, 0.5):.1f} p95 "
        f"{ms(seq_costs, 0.95):.1f}; "
        f"{opts.conversations} at once p50 {ms(load_costs, 0.5):.1f} p95 {ms(load_costs, 0.95):.1f}"
    )
    cpu_per_round = cpu[0] * 1000 / (opts.conversations * ROUNDS)
    print(
        f"  CPU of the process serving the streams in wave 1: {cpu[0]:.1f} s, {cpu_per_round:.1f} ms per round "
        f"(one core: {opts.conversations} rounds at once need ~{cpu_per_round * opts.conversations:.0f} ms of it)"
    )
    processes = sorted(set(rss_start) | set(rss_warm) | {pid for r in rss_after for pid in r})
    print("  RSS MB per Odoo process (start / after warm-up / after each wave):")
    for pid in processes:
        row = [rss_start.get(pid), rss_warm.get(pid), *(r.get(pid) for r in rss_after)]
        role = roles.get(pid, "exited")
        print(f"    pid {pid} ({role}): " + " / ".join("-" if v is None else f"{mb(v):.0f}" for v in row))
    open_sessions = [h["hub"]["open_sessions"] for h in hubs.values() if h.get("hub")]
    max_sessions = max((h["hub"]["max_sessions"] for h in hubs.values() if h.get("hub")), default=0)
    for pid, data in sorted(hubs.items()):
        hub = data.get("hub")
        print(
            f"  hub of pid {pid}: "
            + (
                f"{hub['open_sessions']} open sessions (limit {hub['max_sessions']}), "
                f"{hub['sessions_opened']} opened in all, {hub['calls_in_flight']} calls in flight"
                if hub
                else "not started"
            )
        )
    warm_total = sum(rss_warm.values())
    growth = (sum(rss_after[-1].values()) - sum(rss_after[0].values())) if len(rss_after) > 1 else 0
    gevent = [pid for pid, role in roles.items() if role == "gevent"]
    # the gevent worker's growth from after the warm-up to after the last wave: what the waves left
    gevent_growth = sum(rss_after[-1].get(pid, 0) - rss_warm.get(pid, 0) for pid in gevent) if gevent else None
    summary = {
        "errors": len(errors),
        "lost": len(lost),
        "log_errors": len(log_problems),
        "added_p50_ms": ms(load_costs, 0.5),
        "added_p95_ms": ms(load_costs, 0.95),
        "seq_added_p50_ms": ms(seq_costs, 0.5),
        "ttfb_p95_ms": ms(first_bytes, 0.95),
        "wall_s": walls[0],
        "open_sessions": max(open_sessions, default=0),
        "max_sessions": max_sessions,
        "rss_mb": mb(sum(rss_after[-1].values())),
        "rss_warm_mb": mb(warm_total),
        "rss_wave_growth_mb": mb(growth),
        "hub_processes": len(hubs),
        "listen_overflows": overflows,
        "gevent_rss_growth_mb": None if gevent_growth is None else mb(gevent_growth),
        "cpu_ms_per_round": cpu_per_round,
    }
    return summary, setup


def main() -> None:
    parser = argparse.ArgumentParser(description="50 concurrent 5-round conversations, threaded and prefork")
    parser.add_argument("--modes", default="threaded,prefork")
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--prefork-workers", type=int, default=2)
    parser.add_argument(
        "--waves", type=int, default=2, help="waves of concurrent conversations (the first is measured)"
    )
    parser.add_argument(
        "--stream-via",
        choices=("gevent", "http"),
        default="gevent",
        help="prefork: the worker the chat stream goes to (a reverse proxy routes it to gevent)",
    )
    parser.add_argument("--keep-logs", type=Path, help="copy the Odoo logs into this folder")
    parser.add_argument("--pace", choices=sorted(PACES), default="fast", help="how the scripted model streams")
    parser.add_argument("--db-maxconn-gevent", type=int, help="Odoo's db_maxconn_gevent (prefork)")
    parser.add_argument(
        "--private-pg",
        type=int,
        metavar="MAX_CONNECTIONS",
        help="run on a PostgreSQL of this run allowing this many connections",
    )
    parser.add_argument(
        "--scale", action="store_true", help="200 at once, twice, on the gevent worker, model paced (see the top)"
    )
    parser.add_argument("--serve-llm", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--timings", type=Path, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.scale:
        for key, value in SCALE.items():
            setattr(opts, key, value)
    if opts.serve_llm:
        serve_llm(opts.serve_llm, opts.timings, PACES[opts.pace])
        return

    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="ai_mcp-bench-load."))
    postgres = PrivatePostgres(tmp, opts.private_pg) if opts.private_pg else None
    if postgres is not None:
        os.environ.update(postgres.env)  # Odoo, dropdb and this run's clients all go to it
        print(f"private PostgreSQL on {postgres.dir}, max_connections={opts.private_pg}", flush=True)
    print(
        f"model pace {opts.pace}: {PACES[opts.pace]}; db_maxconn_gevent={opts.db_maxconn_gevent or 'default'}",
        flush=True,
    )
    llm = LlmProcess(tmp, opts.pace)
    servers = [HttpServer("streamable-http", "--name", f"load-{i + 1}").start() for i in range(MCP_SERVERS)]
    try:
        odoo = BenchOdoo("bench-load", ready_timeout=READY_TIMEOUT)
    except OdooNotFound as exc:
        sys.exit(str(exc))
    results: dict[str, dict] = {}
    try:
        loop_costs = direct_costs(llm, servers, SEQUENTIAL)
        print(
            f"loop alone (run_turn in this process), added latency per round: p50 {ms(loop_costs, 0.5):.1f} ms "
            f"p95 {ms(loop_costs, 0.95):.1f} ms",
            flush=True,
        )
        print(f"odoo: installing ai_mcp into new database {odoo.db}", flush=True)
        odoo.install()
        setup = None
        for mode in opts.modes.split(","):
            results[mode], setup = run_mode(mode, odoo, llm, servers, setup, opts)
    finally:
        odoo.close(keep_logs=opts.keep_logs)
        for server in servers:
            server.stop()
        llm.stop()
        if postgres is not None:
            postgres.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\nrun took {time.monotonic() - started:.0f} s")
    fields = [
        f"errors={sum(r['errors'] for r in results.values())}",
        f"lost={sum(r['lost'] for r in results.values())}",
        f"log_errors={sum(r['log_errors'] for r in results.values())}",
        f"loop_added_p50_ms={ms(loop_costs, 0.5):.1f}",
    ]
    for mode, r in results.items():
        fields += [
            f"{mode}_added_p50_ms={r['added_p50_ms']:.1f}",
            f"{mode}_added_p95_ms={r['added_p95_ms']:.1f}",
            f"{mode}_seq_added_p50_ms={r['seq_added_p50_ms']:.1f}",
            f"{mode}_ttfb_p95_ms={r['ttfb_p95_ms']:.0f}",
            f"{mode}_cpu_ms_per_round={r['cpu_ms_per_round']:.1f}",
            f"{mode}_wall_s={r['wall_s']:.1f}",
            f"{mode}_listen_overflows={r['listen_overflows']}",
            f"{mode}_open_sessions={r['open_sessions']}/{r['max_sessions']}",
            f"{mode}_rss_mb={r['rss_mb']:.0f}",
            f"{mode}_rss_wave_growth_mb={r['rss_wave_growth_mb']:.1f}",
        ]
        if r["gevent_rss_growth_mb"] is not None:
            fields.append(f"{mode}_gevent_rss_growth_mb={r['gevent_rss_growth_mb']:.1f}")
    print(" ".join(fields))


if __name__ == "__main__":
    main()
