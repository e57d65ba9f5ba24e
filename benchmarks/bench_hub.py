"""Per-call cost of an MCP tool call: raw SDK session vs the hub's pool vs langchain-mcp-adapters.

Run from the repository root: `python benchmarks/bench_hub.py`.

On one FastMCP server per transport (stdio and streamable HTTP) it times the same cheap call,
`echo("ping")`, three ways:

  raw      the mcp SDK's ClientSession, opened once and reused (the floor);
  pooled   `McpHub.acall_tool` on the hub's loop (what the agent loop calls);
  adapter  langchain-mcp-adapters' default pattern, `MultiServerMCPClient.get_tools()` then
           `tool.ainvoke(...)`, which opens a new session for the listing and another for the call
           (a new server process each over stdio: docs/pitfalls.md says why never to).

Raw, pooled and adapter coroutines all run on the hub's event loop so they pay the same scheduling
costs, and they are measured in interleaved rounds (alternating which goes first) so machine noise
hits them alike. Each figure is the median of per-call times taken with perf_counter inside the
coroutine. The synchronous bridge (`hub.call_tool` from a plain thread, as an Odoo request does) is
printed for information only.

The last line is machine-readable; the goals are pooled/raw <= 1.15, adapter_http/pooled >= 5 and
adapter_stdio/pooled >= 50.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

# Run as a plain script: put the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable, Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import IO, Any  # noqa: E402

from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_mcp_adapters.sessions import Connection  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from benchmarks.raw_session import RawSession  # noqa: E402
from services.hub import McpHub  # noqa: E402
from services.server_spec import ServerSpec, build_server_spec  # noqa: E402
from testing.mcp_servers import serve_http, server_argv  # noqa: E402

TEXT = "ping"
ARGS: dict[str, Any] = {"text": TEXT}
ROUNDS = 20
CALLS_PER_ROUND = 10  # raw, pooled and bridge: ROUNDS * CALLS_PER_ROUND = 200 calls per transport
ADAPTER_PER_ROUND = 1  # the adapter spawns two processes per stdio call: 20 calls is ~25 s already
WARMUP_CALLS = 20
ADAPTER_WARMUP = 1
OPEN_TIMEOUT = 30.0

GOAL_POOLED_RAW = 1.15
GOAL_ADAPTER_HTTP = 5.0
GOAL_ADAPTER_STDIO = 50.0

Call = Callable[[], Awaitable[object]]


# -- the raw SDK session --------------------------------------------------------------------


# -- what one measured call is, per method ----------------------------------------------------


def raw_call(raw: RawSession) -> Call:
    return lambda: raw.session.call_tool("echo", ARGS)


def pooled_call(hub: McpHub, spec: ServerSpec) -> Call:
    return lambda: hub.acall_tool(spec, "echo", ARGS)


def adapter_call(client: MultiServerMCPClient) -> Call:
    async def call() -> object:
        # the default pattern: list tools through a fresh session, then call through another
        tools = await client.get_tools()
        tool = next(t for t in tools if t.name == "echo")
        return await tool.ainvoke(ARGS)

    return call


async def time_calls(call: Call, count: int) -> list[float]:
    """Per-call seconds, measured inside the loop so thread hand-offs are not counted."""
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


def time_bridge(hub: McpHub, spec: ServerSpec, count: int) -> list[float]:
    """Per-call seconds of the synchronous API, as an Odoo request thread sees it."""
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        hub.run(hub.acall_tool(spec, "echo", ARGS))
        samples.append(time.perf_counter() - started)
    return samples


@contextlib.contextmanager
def child_stderr_silenced(enabled: bool) -> Iterator[None]:
    """The adapter hands its stdio servers our own stderr (fd 2) with no way to choose another; each
    server prints a start-up line, so point fd 2 at /dev/null while it spawns them. Timing is not
    affected; exceptions still propagate and are printed after fd 2 is back."""
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# -- one transport's set-up and bookkeeping ---------------------------------------------------


@dataclass
class Lane:
    """Everything measured on one transport."""

    name: str
    spec: ServerSpec
    raw: RawSession
    adapter: MultiServerMCPClient
    quiet_children: bool
    samples: dict[str, list[float]] = field(
        default_factory=lambda: {"raw": [], "pooled": [], "adapter": [], "bridge": []}
    )

    def median_ms(self, method: str) -> float:
        return statistics.median(self.samples[method]) * 1000


def stdio_lane(devnull: IO[str]) -> Lane:
    argv = server_argv("stdio")
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    connection: Connection = {"transport": "stdio", "command": argv[0], "args": argv[1:]}
    return Lane(
        name="stdio",
        spec=build_server_spec(
            key="bench-stdio", name="bench stdio", transport="stdio", command=argv[0], args=tuple(argv[1:])
        ),
        # the server's start-up line goes to /dev/null; the hub collects it in its own pipe
        raw=RawSession(lambda: stdio_client(params, errlog=devnull)),
        adapter=MultiServerMCPClient({"s": connection}),
        quiet_children=True,
    )


def http_lane(url: str) -> Lane:
    connection: Connection = {"transport": "streamable_http", "url": url}
    return Lane(
        name="http",
        spec=build_server_spec(key="bench-http", name="bench http", transport="streamable_http", url=url),
        raw=RawSession(lambda: streamable_http_client(url)),
        adapter=MultiServerMCPClient({"s": connection}),
        quiet_children=False,
    )


def check_answers(hub: McpHub, lane: Lane) -> None:
    """Fail loudly rather than time an error path: every method must really echo the text."""
    raw = hub.run(lane.raw.session.call_tool("echo", ARGS), timeout=OPEN_TIMEOUT)
    pooled = hub.run(hub.acall_tool(lane.spec, "echo", ARGS), timeout=OPEN_TIMEOUT)
    with child_stderr_silenced(lane.quiet_children):
        adapted = hub.run(adapter_call(lane.adapter)(), timeout=OPEN_TIMEOUT)
    raw_text = [getattr(block, "text", None) for block in raw.content]
    if raw.isError or raw_text != [TEXT]:
        raise RuntimeError(f"{lane.name} raw echo answered {raw!r}")
    if pooled.is_error or pooled.text_for_model() != TEXT:
        raise RuntimeError(f"{lane.name} pooled echo answered {pooled!r}")
    if TEXT not in str(adapted):
        raise RuntimeError(f"{lane.name} adapter echo answered {adapted!r}")


def warm_up(hub: McpHub, lane: Lane) -> None:
    hub.run(time_calls(raw_call(lane.raw), WARMUP_CALLS))
    hub.run(time_calls(pooled_call(hub, lane.spec), WARMUP_CALLS))
    time_bridge(hub, lane.spec, WARMUP_CALLS)
    with child_stderr_silenced(lane.quiet_children):
        hub.run(time_calls(adapter_call(lane.adapter), ADAPTER_WARMUP))


def run_round(hub: McpHub, lane: Lane, flip: bool) -> None:
    """One round of every method; the raw/pooled order alternates between rounds so neither
    always runs right after the adapter's process churn."""
    fast: list[tuple[str, Call]] = [("raw", raw_call(lane.raw)), ("pooled", pooled_call(hub, lane.spec))]
    for method, call in reversed(fast) if flip else fast:
        lane.samples[method] += hub.run(time_calls(call, CALLS_PER_ROUND))
    lane.samples["bridge"] += time_bridge(hub, lane.spec, CALLS_PER_ROUND)
    with child_stderr_silenced(lane.quiet_children):
        lane.samples["adapter"] += hub.run(time_calls(adapter_call(lane.adapter), ADAPTER_PER_ROUND))


# -- report -----------------------------------------------------------------------------------


def ratios(lane: Lane) -> tuple[float, float]:
    pooled = lane.median_ms("pooled")
    return pooled / lane.median_ms("raw"), lane.median_ms("adapter") / pooled


def print_table(lanes: list[Lane]) -> None:
    print(f"{'transport':<10}{'raw ms':>10}{'pooled ms':>11}{'adapter ms':>12}{'pooled/raw':>12}{'adapter/pooled':>16}")
    for lane in lanes:
        pooled_raw, adapter_pooled = ratios(lane)
        print(
            f"{lane.name:<10}{lane.median_ms('raw'):>10.3f}{lane.median_ms('pooled'):>11.3f}"
            f"{lane.median_ms('adapter'):>12.1f}{pooled_raw:>12.3f}{adapter_pooled:>16.1f}"
        )
    for lane in lanes:
        print(
            f"(info) {lane.name} sync bridge hub.call_tool from the main thread: "
            f"{lane.median_ms('bridge'):.3f} ms per call"
            f" ({lane.median_ms('bridge') - lane.median_ms('pooled'):+.3f} ms over pooled on the loop)"
        )
    counts = ", ".join(f"{m}={len(v)}" for m, v in lanes[0].samples.items())
    print(f"(info) medians over calls per transport: {counts}")


def summary_line(stdio: Lane, http: Lane) -> str:
    stdio_pooled_raw, stdio_adapter = ratios(stdio)
    http_pooled_raw, http_adapter = ratios(http)
    pairs: list[tuple[str, str]] = [
        ("pooled/raw", f"{max(stdio_pooled_raw, http_pooled_raw):.2f}"),
        ("adapter_http/pooled", f"{http_adapter:.1f}"),
        ("adapter_stdio/pooled", f"{stdio_adapter:.1f}"),
        ("pooled/raw_stdio", f"{stdio_pooled_raw:.3f}"),
        ("pooled/raw_http", f"{http_pooled_raw:.3f}"),
    ]
    for lane in (stdio, http):
        for method in ("raw", "pooled", "adapter", "bridge"):
            pairs.append((f"{method}_{lane.name}_ms", f"{lane.median_ms(method):.3f}"))
    return " ".join(f"{key}={value}" for key, value in pairs)


def verdict(stdio: Lane, http: Lane) -> str:
    worst = max(ratios(stdio)[0], ratios(http)[0])
    checks = [
        f"pooled/raw {'ok' if worst <= GOAL_POOLED_RAW else 'MISSED'} (<= {GOAL_POOLED_RAW})",
        f"adapter_http/pooled {'ok' if ratios(http)[1] >= GOAL_ADAPTER_HTTP else 'MISSED'} (>= {GOAL_ADAPTER_HTTP:g})",
        f"adapter_stdio/pooled {'ok' if ratios(stdio)[1] >= GOAL_ADAPTER_STDIO else 'MISSED'} (>= "
        f"{GOAL_ADAPTER_STDIO:g})",
    ]
    return "goals: " + ", ".join(checks)


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    started = time.perf_counter()
    hub = McpHub()
    with open(os.devnull, "w") as devnull, serve_http("streamable-http") as server:
        lanes = [stdio_lane(devnull), http_lane(server.url)]
        opened: list[RawSession] = []
        try:
            for lane in lanes:
                hub.run(lane.raw.open(), timeout=OPEN_TIMEOUT)
                opened.append(lane.raw)
                hub.run(hub.pool.acquire(lane.spec), timeout=OPEN_TIMEOUT)
                check_answers(hub, lane)
                warm_up(hub, lane)
            for round_no in range(ROUNDS):
                for lane in lanes:
                    run_round(hub, lane, flip=bool(round_no % 2))
        finally:
            # close our SDK sessions (stdio servers exit with them), then the hub's, then the HTTP server
            for raw in opened:
                hub.run(raw.close(), timeout=OPEN_TIMEOUT)
            hub.shutdown()
    stdio, http = lanes
    print_table(lanes)
    print(f"(info) {verdict(stdio, http)}; wall time {time.perf_counter() - started:.1f} s")
    print(summary_line(stdio, http))
    return 0


if __name__ == "__main__":
    sys.exit(main())
