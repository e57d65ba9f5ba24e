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
    python benchmarks/bench_load.py --scale-out
        scale-out: the same 200 at once through nginx (deploy/nginx.conf), first on one chat-stream
        process, then on two (a node's gevent worker and an extra `odoo-bin gevent` beside it),
        each on a new cluster (testing/odoo_cluster.py; benchmarks/load/scale_out.py). Same as
        --gevent-processes 1,2 --nodes 1 --conversations 200 --waves 1 --pace realistic
        --db-maxconn-gevent 240 --private-pg 600; --nodes 2 puts the two processes on two nodes.
        The last line adds the ratios of two processes to one (w200_added_p95_ratio, ...), and each
        wave says how busy the machine's cores were and what else used them.
        --sizes 25,50,100 runs a wave of each size, one after the other, on each cluster: with
        --gevent-processes 1 and --pace realistic, the turns one chat-stream process takes at once
        for a given added time per round (the sizing table of docs/operators.md).

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
# Run as a plain script: the repository root on sys.path so `services`, `testing` and `benchmarks` import.
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from benchmarks.load.measure import (  # noqa: E402
    added_per_round,
    check,
    converse,
    cpu_seconds,
    hub_sample,
    listen_overflows,
    mb,
    ms,
    percentile,
    rss_kb,
    stream_problem,
    wave,
)
from benchmarks.load.workload import (  # noqa: E402
    API_KEY,
    MAX_ROUNDS,
    MCP_SERVERS,
    MODEL,
    OFFERED_TOOLS,
    PACES,
    ROUNDS,
    LlmProcess,
    Setup,
)
from testing.mcp_servers import HttpServer  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient  # noqa: E402
from testing.postgres import PrivatePostgres  # noqa: E402

CONVERSATIONS = 50
WARMUP = 4
SEQUENTIAL = 5
SCALE = {
    "modes": "prefork",
    "conversations": 200,
    "waves": 2,
    "pace": "realistic",
    "db_maxconn_gevent": 240,
    "private_pg": 600,
}
# the scale-out run: the burst of --scale through nginx, on one chat-stream process, then on two
SCALE_OUT = {**SCALE, "waves": 1, "gevent_processes": "1,2"}
READY_TIMEOUT = 120.0


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
        return {pid: rss for pid in pids if (rss := rss_kb(pid)) is not None}

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


# -- the loop alone ----------------------------------------------------------------------------


def direct_costs(llm: LlmProcess, servers: list[HttpServer], runs: int) -> list[float]:
    """The same turn through run_turn in this process, read as an Odoo request reads it."""
    from services.llm import LlmSettings
    from services.loop import (
        AssistantSettings,
        LoopLimits,
        ToolBinding,
        TurnRequest,
        run_turn,
    )
    from services.mcp import get_hub
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


@dataclass
class _ModeRun:
    """What one mode's waves measured, read before its Odoo stops."""

    sequential: list[dict]
    waves: list[list[dict]]
    walls: list[float]
    cpu: list[float]  # CPU seconds of the process serving the streams, per wave
    rss_start: dict
    rss_warm: dict
    rss_after: list[dict]
    overflows: int | None
    roles: dict
    hubs: dict
    llm_times: dict
    errors: list
    lost: list
    log_problems: list

    def costs(self, runs: list[dict]) -> list[float]:
        out = []
        for run in runs:
            if not stream_problem(run):
                out += added_per_round(run, self.llm_times) or []
        return out


def run_mode(
    mode: str, odoo: BenchOdoo, llm: LlmProcess, servers: list[HttpServer], setup: Setup | None, opts
) -> tuple[dict, Setup]:
    workers, stream_port = _start_mode(mode, odoo, opts)
    try:
        run, setup = _measure_mode(mode, odoo, llm, servers, setup, opts, workers, stream_port)
    finally:
        odoo.stop()
    return _report_mode(run, opts), setup


def _start_mode(mode: str, odoo: BenchOdoo, opts) -> tuple[int, int | None]:
    """Odoo started in `mode`: (its workers, the port the chat stream goes to when not the main one)."""
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
    return workers, stream_port


def _measure_mode(
    mode: str,
    odoo: BenchOdoo,
    llm: LlmProcess,
    servers: list[HttpServer],
    setup: Setup | None,
    opts,
    workers: int,
    stream_port: int | None,
) -> tuple[_ModeRun, Setup]:
    """The warm-up, the sequential conversations and the waves, with what they left in Odoo."""
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
    run = _ModeRun(
        sequential,
        waves,
        walls,
        cpu,
        rss_start,
        rss_warm,
        rss_after,
        overflows,
        roles,
        hubs,
        llm_times,
        errors,
        lost,
        log_problems,
    )
    return run, setup


def _report_mode(run: _ModeRun, opts) -> dict:
    """Prints the mode's figures; returns them for the summary line."""
    seq_costs, load_costs = run.costs(run.sequential), run.costs(run.waves[0])
    first_bytes = [r["events"][0][0] for r in run.waves[0] if r.get("events")]
    retried = [r.get("start_retries", 0) for wave_runs in run.waves for r in wave_runs]
    cpu_per_round = run.cpu[0] * 1000 / (opts.conversations * ROUNDS)
    _print_outcome(run, opts, retried)
    _print_latency(run, opts, seq_costs, load_costs, first_bytes, cpu_per_round)
    _print_memory(run)
    warm_total = sum(run.rss_warm.values())
    growth = (sum(run.rss_after[-1].values()) - sum(run.rss_after[0].values())) if len(run.rss_after) > 1 else 0
    gevent = [pid for pid, role in run.roles.items() if role == "gevent"]
    # the gevent worker's growth from after the warm-up to after the last wave: what the waves left
    gevent_growth = sum(run.rss_after[-1].get(pid, 0) - run.rss_warm.get(pid, 0) for pid in gevent) if gevent else None
    hubs = [h["hub"] for h in run.hubs.values() if h.get("hub")]
    return {
        "errors": len(run.errors),
        "lost": len(run.lost),
        "log_errors": len(run.log_problems),
        "added_p50_ms": ms(load_costs, 0.5),
        "added_p95_ms": ms(load_costs, 0.95),
        "seq_added_p50_ms": ms(seq_costs, 0.5),
        "ttfb_p95_ms": ms(first_bytes, 0.95),
        "wall_s": run.walls[0],
        "open_sessions": max((hub["open_sessions"] for hub in hubs), default=0),
        "max_sessions": max((hub["max_sessions"] for hub in hubs), default=0),
        "rss_mb": mb(sum(run.rss_after[-1].values())),
        "rss_warm_mb": mb(warm_total),
        "rss_wave_growth_mb": mb(growth),
        "hub_processes": len(run.hubs),
        "listen_overflows": run.overflows,
        "gevent_rss_growth_mb": None if gevent_growth is None else mb(gevent_growth),
        "cpu_ms_per_round": cpu_per_round,
        "start_retries": sum(retried),
    }


def _print_outcome(run: _ModeRun, opts, retried: list[int]) -> None:
    for problem in (run.errors + run.lost)[:5]:
        print(f"  problem: {problem}")
    for line in run.log_problems[:3]:
        print(f"  odoo log: {line[:200]}")
    print(
        f"{opts.conversations} concurrent conversations x {ROUNDS} rounds, {opts.waves} wave(s): "
        f"{len(run.errors)} errors, {len(run.lost)} lost, {len(run.log_problems)} ERROR lines in the Odoo log, "
        f"{'?' if run.overflows is None else run.overflows} connections dropped by a full listen queue (host counter)"
    )
    print(
        f"  starts sent again as the widget does (a full pool: Odoo's 500): {sum(retried)} in all, "
        f"{sum(1 for n in retried if n)} conversations, at most {max(retried, default=0)} for one"
    )


def _print_latency(
    run: _ModeRun, opts, seq_costs: list[float], load_costs: list[float], first_bytes: list[float], cpu_per_round: float
) -> None:
    totals = [r["total"] for r in run.waves[0] if "total" in r]
    print(
        f"  wave 1: wall {run.walls[0]:.1f} s; per conversation p50 {percentile(totals, 0.5):.1f} s p95 "
        f"{percentile(totals, 0.95):.1f} s; "
        f"first byte p50 {ms(first_bytes, 0.5):.0f} ms p95 {ms(first_bytes, 0.95):.0f} ms max "
        f"{max(first_bytes, default=0) * 1000:.0f} ms"
    )
    print(
        f"  added latency per round (route - model - tool), ms: one at a time p50 {ms(seq_costs, 0.5):.1f} p95 "
        f"{ms(seq_costs, 0.95):.1f}; "
        f"{opts.conversations} at once p50 {ms(load_costs, 0.5):.1f} p95 {ms(load_costs, 0.95):.1f}"
    )
    print(
        f"  CPU of the process serving the streams in wave 1: {run.cpu[0]:.1f} s, {cpu_per_round:.1f} ms per round "
        f"(one core: {opts.conversations} rounds at once need ~{cpu_per_round * opts.conversations:.0f} ms of it)"
    )


def _print_memory(run: _ModeRun) -> None:
    processes = sorted(set(run.rss_start) | set(run.rss_warm) | {pid for r in run.rss_after for pid in r})
    print("  RSS MB per Odoo process (start / after warm-up / after each wave):")
    for pid in processes:
        row = [run.rss_start.get(pid), run.rss_warm.get(pid), *(r.get(pid) for r in run.rss_after)]
        role = run.roles.get(pid, "exited")
        print(f"    pid {pid} ({role}): " + " / ".join("-" if v is None else f"{mb(v):.0f}" for v in row))
    for pid, data in sorted(run.hubs.items()):
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
    parser.add_argument(
        "--gevent-processes",
        metavar="N[,N...]",
        help="through nginx, one cluster per number of chat-stream processes (e.g. 1,2), instead of --modes",
    )
    parser.add_argument("--nodes", type=int, default=1, help="with --gevent-processes: Odoo nodes of each cluster")
    parser.add_argument(
        "--sizes", metavar="N[,N...]", help="with --gevent-processes: a wave of each size (default: --conversations)"
    )
    parser.add_argument(
        "--scale-out", action="store_true", help="200 at once with 1 and with 2 chat-stream processes (see the top)"
    )
    opts = parser.parse_args()
    for preset, values in (("scale", SCALE), ("scale_out", SCALE_OUT)):
        if getattr(opts, preset):
            for key, value in values.items():
                setattr(opts, key, value)

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
        summary = scale_out(opts, llm, servers) if opts.gevent_processes else modes(opts, llm, servers)
    finally:
        for server in servers:
            server.stop()
        llm.stop()
        if postgres is not None:
            postgres.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nrun took {time.monotonic() - started:.0f} s")
    print(summary)


def modes(opts, llm: LlmProcess, servers: list[HttpServer]) -> str:
    """--modes: one Odoo, run threaded and in prefork in turn; the loop alone measured beside it.
    Returns the machine-readable summary."""
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
            f"{mode}_start_retries={r['start_retries']}",
            f"{mode}_listen_overflows={r['listen_overflows']}",
            f"{mode}_open_sessions={r['open_sessions']}/{r['max_sessions']}",
            f"{mode}_rss_mb={r['rss_mb']:.0f}",
            f"{mode}_rss_wave_growth_mb={r['rss_wave_growth_mb']:.1f}",
        ]
        if r["gevent_rss_growth_mb"] is not None:
            fields.append(f"{mode}_gevent_rss_growth_mb={r['gevent_rss_growth_mb']:.1f}")
    return " ".join(fields)


def scale_out(opts, llm: LlmProcess, servers: list[HttpServer]) -> str:
    """--gevent-processes: one cluster per number of chat-stream processes, a wave of each of
    --sizes on each; the summary adds the ratios of the last number of processes to the first,
    wave by wave."""
    from benchmarks.load.scale_out import run_processes  # needs nginx, only here

    counts = [int(n) for n in opts.gevent_processes.split(",")]
    opts.sizes = [int(n) for n in opts.sizes.split(",")] if opts.sizes else [opts.conversations]
    results = {n: run_processes(n, opts, llm, servers) for n in counts}
    every = [r for waves in results.values() for r in waves]
    fields = [f"errors={sum(r['errors'] for r in every)}", f"lost={sum(r['lost'] for r in every)}"]
    for n, waves in results.items():
        for r in waves:
            tag = f"p{n}_w{r['size']}"
            fields += [
                f"{tag}_added_p50_ms={r['added_p50_ms']:.1f}",
                f"{tag}_added_p95_ms={r['added_p95_ms']:.1f}",
                f"{tag}_ttfb_p95_ms={r['ttfb_p95_ms']:.0f}",
                f"{tag}_turns_per_s={r['turns_per_s']:.2f}",
                f"{tag}_cpu_ms_per_round={r['cpu_ms_per_round']:.1f}",
                f"{tag}_machine_busy={r['machine_busy']:.2f}",
                f"{tag}_start_retries={r['start_retries']}",
            ]
    if len(counts) > 1:
        for first, last in zip(results[counts[0]], results[counts[-1]], strict=True):
            tag = f"w{first['size']}"
            fields += [
                f"{tag}_added_p95_ratio={last['added_p95_ms'] / max(first['added_p95_ms'], 1e-9):.2f}",
                f"{tag}_ttfb_p95_ratio={last['ttfb_p95_ms'] / max(first['ttfb_p95_ms'], 1e-9):.2f}",
                f"{tag}_turns_per_s_ratio={last['turns_per_s'] / max(first['turns_per_s'], 1e-9):.2f}",
            ]
    return " ".join(fields)


if __name__ == "__main__":
    main()
