"""bench_load across chat-stream processes and nodes: the same waves sent through nginx, as a
browser reaches a deployment made from deploy/nginx.conf and deploy/odoo-node.conf.

For each number of chat-stream processes asked for (`--gevent-processes 1,2`), a new cluster
(testing/odoo_cluster.py): `--nodes` prefork nodes on one database, each with its gevent worker,
and as many extra `odoo-bin gevent` processes as make up the number, nginx spreading the chat's
streams over them. Measured per run: errors and lost conversations (as bench_load), turns per
second, added time per round p50/p95, first byte p95, and each chat-stream process's CPU and the
rounds it served (a stream says which process served it: nginx's X-Upstream header).
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import contextlib
import os
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from benchmarks.load.measure import (
    added_per_round,
    check,
    converse,
    cpu_seconds,
    ms,
    percentile,
    stream_problem,
    wave,
)
from benchmarks.load.workload import ROUNDS, LlmProcess, Setup
from testing.mcp_servers import HttpServer
from testing.odoo_cluster import OdooCluster
from testing.odoo_http import WebClient

WARMUP_PER_PROCESS = 4
SEQUENTIAL = 5


def stream_pids(cluster: OdooCluster) -> dict[int, str]:
    """{pid: "node i gevent" | "node i extra"} of the cluster's chat-stream processes."""
    found: dict[int, str] = {}
    groups = {node.process.pid: node.index for node in cluster.nodes if node.process is not None}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            pid = int(stat.parent.name)
            _state, ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
            if int(pgrp) not in groups:
                continue
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
            if b"gevent" in argv[:3]:
                node = groups[int(pgrp)]
                master = cluster.nodes[node].process
                kind = "gevent" if master is not None and int(ppid) == master.pid else "extra"
                found[pid] = f"node {node} {kind}"
    return found


def machine_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the whole machine so far, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


def postgres_pids() -> list[int]:
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError, ValueError):
            if comm.read_text().strip() == "postgres":
                pids.append(int(comm.parent.name))
    return pids


def served_by(cluster: OdooCluster, run: dict) -> str:
    with contextlib.suppress(LookupError):
        node, kind = cluster.served_by(run.get("headers") or {})
        return f"node {node} {kind}"
    return "?"


class Wave(NamedTuple):
    """One measured wave: its conversations, wall time, each chat-stream process's CPU, what else
    used the machine, and how busy its cores were."""

    size: int
    runs: list[dict]
    wall: float
    cpu: dict[int, float]
    others: dict[str, float]
    busy: float


def measured_wave(cluster, clients, setup, llm, servers, size: int, label: str) -> Wave:
    pids = stream_pids(cluster)
    # who else spends the machine's cores: this client, the model, the MCP servers, PostgreSQL
    others = {
        "the benchmark's client": [os.getpid()],
        "the scripted model": [llm.process.pid],
        "the MCP servers": [server.process.pid for server in servers if server.process is not None],
        "PostgreSQL": postgres_pids(),
    }
    cpu_before = {pid: cpu_seconds([pid]) for pid in pids}
    others_before = {name: cpu_seconds(group) for name, group in others.items()}
    ticks_before = machine_ticks()
    runs, wall = wave(clients, setup.assistant, label, size, None)
    ticks_after = machine_ticks()
    busy = (ticks_after[0] - ticks_before[0]) / max(1, ticks_after[1] - ticks_before[1])
    return Wave(
        size=size,
        runs=runs,
        wall=wall,
        cpu={pid: cpu_seconds([pid]) - cpu_before[pid] for pid in pids},
        others={name: cpu_seconds(group) - others_before[name] for name, group in others.items()},
        busy=busy,
    )


def run_processes(processes: int, opts, llm: LlmProcess, servers: list[HttpServer]) -> list[dict]:
    """One cluster with `processes` chat-stream processes over `opts.nodes` nodes; a measured wave
    of each size of `opts.sizes`, one after the other. A summary per wave."""
    nodes = max(1, opts.nodes)
    if processes < nodes:
        raise SystemExit(f"--gevent-processes {processes}: each of the {nodes} nodes has its own gevent worker")
    extra = (f"--db_maxconn_gevent={opts.db_maxconn_gevent}",) if opts.db_maxconn_gevent else ()
    print(
        f"\n== {processes} chat-stream process(es) on {nodes} node(s) behind nginx "
        f"(each node --workers=2; {processes - nodes} extra `odoo-bin gevent`) ==",
        flush=True,
    )
    cluster = OdooCluster(f"bench-scale-{processes}", nodes=nodes, extra_gevent=processes - nodes, extra=extra)
    try:
        cluster.start()
        admin = WebClient(cluster.url, cluster.db, "admin", "admin")
        setup = Setup(admin, llm, servers)
        clients = [WebClient(cluster.url, cluster.db, login, login) for login in setup.logins]
        # every process loads its registry and opens its MCP sessions before the measured waves
        warm, _wall = wave(clients, setup.assistant, f"{processes}p warm-up", WARMUP_PER_PROCESS * processes, None)
        sequential = [
            {**converse(clients[0], setup.assistant, f"{processes}p sequential {i}", None), "client": 0}
            for i in range(SEQUENTIAL)
        ]
        waves = [
            measured_wave(cluster, clients, setup, llm, servers, size, f"{processes}p wave of {size}")
            for size in opts.sizes
        ]
        llm_times = llm.times()
        checked = {id(batch): check(batch, clients, admin) for batch in [warm, sequential, *(w.runs for w in waves)]}
        log_problems = cluster.log_errors()
        pids = stream_pids(cluster)
        served = [Counter(served_by(cluster, run) for run in w.runs) for w in waves]
    finally:
        cluster.close(keep_logs=opts.keep_logs / f"{processes}-processes" if opts.keep_logs else None)

    for line in [line for line in log_problems if "PoolError" not in line][:3]:
        print(f"  odoo log: {line[:200]}")
    seq_costs = [c for run in sequential if not stream_problem(run) for c in added_per_round(run, llm_times) or []]
    print(f"  one at a time: added per round p50 {ms(seq_costs, 0.5):.1f} ms")
    warm_errors, warm_lost = checked[id(warm)]
    seq_errors, seq_lost = checked[id(sequential)]
    results = []
    for index, (w, counts) in enumerate(zip(waves, served, strict=True)):
        errors, lost = checked[id(w.runs)]
        if index == 0:  # the warm-up and the one-at-a-time turns count with the first wave
            errors, lost = errors + warm_errors + seq_errors, lost + warm_lost + seq_lost
        results.append(report(w, counts, pids, errors, lost, llm_times))
    return results


def report(w: Wave, counts: Counter, pids: dict[int, str], errors: list[str], lost: list[str], llm_times) -> dict:
    costs = [c for run in w.runs if not stream_problem(run) for c in added_per_round(run, llm_times) or []]
    first_bytes = [run["events"][0][0] for run in w.runs if run.get("events")]
    done = sum(1 for run in w.runs if not stream_problem(run))
    retried = [run.get("start_retries", 0) for run in w.runs]
    for problem in (errors + lost)[:5]:
        print(f"  problem: {problem}")
    print(
        f"  {w.size} at once: {len(errors)} errors, {len(lost)} lost; {done / w.wall:.2f} turns/s "
        f"(wall {w.wall:.1f} s); added per round p50 {ms(costs, 0.5):.1f} ms p95 {ms(costs, 0.95):.1f} ms; "
        f"first byte p50 {ms(first_bytes, 0.5):.0f} ms p95 {ms(first_bytes, 0.95):.0f} ms; "
        f"starts sent again: {sum(retried)}"
    )
    for pid, label in sorted(pids.items(), key=lambda item: item[1]):
        turns = counts.get(label, 0)
        seconds = w.cpu.get(pid, 0.0)
        per_round = seconds * 1000 / (turns * ROUNDS) if turns else 0.0
        print(f"    {label} (pid {pid}): {turns} turns, CPU {seconds:.1f} s, {per_round:.1f} ms per round")
    print(
        f"    the machine's {os.cpu_count()} cores {w.busy:.0%} busy; CPU s beside Odoo: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in w.others.items())
    )
    return {
        "size": w.size,
        "errors": len(errors),
        "lost": len(lost),
        "added_p50_ms": ms(costs, 0.5),
        "added_p95_ms": ms(costs, 0.95),
        "ttfb_p95_ms": ms(first_bytes, 0.95),
        "turns_per_s": done / w.wall if w.wall else 0.0,
        "cpu_ms_per_round": sum(w.cpu.values()) * 1000 / (w.size * ROUNDS),
        "machine_busy": w.busy,
        "start_retries": sum(retried),
        "turns_p50_s": percentile([run.get("total", 0.0) for run in w.runs], 0.5),
    }
