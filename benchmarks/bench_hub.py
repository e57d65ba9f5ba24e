"""Per-call cost of an MCP tool call: raw SDK Client vs the hub's pool vs a session per call, at
both protocol generations.

Run from the repository root: `python benchmarks/bench_hub.py`.

On test servers over stdio and streamable HTTP, each in two generations (2026-07-28, stateless:
a request stands alone; 2025-11-25, a session agreed by the initialize handshake: the same server
in `--era legacy`), it times the same cheap call, `echo("ping")`, three ways:

  raw       the mcp SDK's Client, opened once and reused (the floor);
  pooled    `McpHub.acall_tool` on the hub's loop (what the agent loop calls);
  per_call  a fresh SDK Client to list the tools and another for the call, closed after each:
            what langchain-mcp-adapters' MultiServerMCPClient did by default (a new server process
            each over stdio), and what the hub's pool exists to avoid.

Raw, pooled and per-call coroutines all run on the hub's event loop so they pay the same
scheduling costs, and they are measured in interleaved rounds (alternating which goes first) so
machine noise hits them alike. Each figure is the median of per-call times taken with
perf_counter inside the coroutine. The synchronous bridge (`hub.call_tool` from a plain thread,
as an Odoo request does) is printed for information only.

The last line is machine-readable; the goals are pooled/raw <= 1.15 (every lane),
per_call_http/pooled >= 5 and per_call_stdio/pooled >= 50 (2026-07-28 lanes), and
stateless/session_http <= 1.0: a pooled call to a stateless (2026-07-28) streamable-HTTP server
costs no more than the same call in a 2025-11-25 session. Over stdio neither generation keeps a
session on a server of its own (the process is the session), and what the 2026-07-28 envelope
costs every request is the SDK's own: stateless/session_stdio is printed beside the bare SDK's
ratio (raw_stateless/session_stdio), for information.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

# Run as a plain script: put the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import IO, Any  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from benchmarks.raw_session import RawSession  # noqa: E402
from services.mcp import McpHub  # noqa: E402
from services.server_spec import ServerSpec, build_server_spec  # noqa: E402
from testing.mcp_servers import serve_http, server_argv  # noqa: E402

TEXT = "ping"
ARGS: dict[str, Any] = {"text": TEXT}
ROUNDS = 20
CALLS_PER_ROUND = 10  # raw, pooled and bridge: ROUNDS * CALLS_PER_ROUND = 200 calls per transport
PER_CALL_PER_ROUND = 1  # two server processes per stdio call: 20 calls is ~25 s already
WARMUP_CALLS = 20
PER_CALL_WARMUP = 1
OPEN_TIMEOUT = 30.0
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"

GOAL_POOLED_RAW = 1.15
GOAL_PER_CALL_HTTP = 5.0
GOAL_PER_CALL_STDIO = 50.0
GOAL_STATELESS_SESSION = 1.0

Call = Callable[[], Awaitable[object]]


# -- the raw SDK session --------------------------------------------------------------------


# -- what one measured call is, per method ----------------------------------------------------


def raw_call(raw: RawSession) -> Call:
    return lambda: raw.session.call_tool("echo", ARGS)


def pooled_call(hub: McpHub, spec: ServerSpec) -> Call:
    return lambda: hub.acall_tool(spec, "echo", ARGS)


def per_call(transport: Callable[[], Any]) -> Call:
    async def call() -> object:
        async with Client(transport(), cache=None) as lister:
            tools = await lister.list_tools()
        assert any(tool.name == "echo" for tool in tools.tools)
        async with Client(transport(), cache=None) as caller:
            return await caller.call_tool("echo", ARGS)

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


# -- one transport's set-up and bookkeeping ---------------------------------------------------


@dataclass
class Lane:
    """Everything measured on one transport and generation."""

    name: str
    era: str
    spec: ServerSpec
    transport: Callable[[], Any]
    raw: RawSession
    samples: dict[str, list[float]] = field(
        default_factory=lambda: {"raw": [], "pooled": [], "per_call": [], "bridge": []}
    )

    def median_ms(self, method: str) -> float:
        return statistics.median(self.samples[method]) * 1000


def stdio_lane(devnull: IO[str], era: str) -> Lane:
    argv = server_argv("stdio", "--era", era)
    params = StdioServerParameters(command=argv[0], args=argv[1:])

    def transport() -> Any:
        # the server's start-up line goes to /dev/null; the hub collects it in its own pipe
        return stdio_client(params, errlog=devnull)

    return Lane(
        name=f"stdio_{era}",
        era=era,
        spec=build_server_spec(
            key=f"bench-stdio-{era}", name="bench stdio", transport="stdio", command=argv[0], args=tuple(argv[1:])
        ),
        transport=transport,
        raw=RawSession(transport),
    )


def http_lane(url: str, era: str) -> Lane:
    return Lane(
        name=f"http_{era}",
        era=era,
        spec=build_server_spec(key=f"bench-http-{era}", name="bench http", transport="streamable_http", url=url),
        transport=lambda: streamable_http_client(url),
        raw=RawSession(lambda: streamable_http_client(url)),
    )


def check_answers(hub: McpHub, lane: Lane) -> None:
    """Fail loudly rather than time an error path: every method must really echo the text, at
    the generation the lane is about."""
    expected = MODERN if lane.era == "dual" else HANDSHAKE
    if lane.raw.session.protocol_version != expected:
        raise RuntimeError(f"{lane.name}: the SDK agreed on {lane.raw.session.protocol_version}, not {expected}")
    pooled_session = hub.run(hub.pool.acquire(lane.spec), timeout=OPEN_TIMEOUT)
    if pooled_session.info is None or pooled_session.info.protocol_version != expected:
        raise RuntimeError(f"{lane.name}: the hub agreed on {pooled_session.info}, not {expected}")
    raw = hub.run(lane.raw.session.call_tool("echo", ARGS), timeout=OPEN_TIMEOUT)
    pooled = hub.run(hub.acall_tool(lane.spec, "echo", ARGS), timeout=OPEN_TIMEOUT)
    fresh = hub.run(per_call(lane.transport)(), timeout=OPEN_TIMEOUT)
    for method, result in (("raw", raw), ("per_call", fresh)):
        texts = [getattr(block, "text", None) for block in result.content]
        if result.is_error or texts != [TEXT]:
            raise RuntimeError(f"{lane.name} {method} echo answered {result!r}")
    if pooled.is_error or pooled.text_for_model() != TEXT:
        raise RuntimeError(f"{lane.name} pooled echo answered {pooled!r}")


def warm_up(hub: McpHub, lane: Lane) -> None:
    hub.run(time_calls(raw_call(lane.raw), WARMUP_CALLS))
    hub.run(time_calls(pooled_call(hub, lane.spec), WARMUP_CALLS))
    time_bridge(hub, lane.spec, WARMUP_CALLS)
    hub.run(time_calls(per_call(lane.transport), PER_CALL_WARMUP))


def run_round(hub: McpHub, lane: Lane, flip: bool) -> None:
    """One round of every method; the raw/pooled order alternates between rounds so neither
    always runs right after the per-call process churn."""
    fast: list[tuple[str, Call]] = [("raw", raw_call(lane.raw)), ("pooled", pooled_call(hub, lane.spec))]
    for method, call in reversed(fast) if flip else fast:
        lane.samples[method] += hub.run(time_calls(call, CALLS_PER_ROUND))
    lane.samples["bridge"] += time_bridge(hub, lane.spec, CALLS_PER_ROUND)
    lane.samples["per_call"] += hub.run(time_calls(per_call(lane.transport), PER_CALL_PER_ROUND))


# -- report -----------------------------------------------------------------------------------


def ratios(lane: Lane) -> tuple[float, float]:
    pooled = lane.median_ms("pooled")
    return pooled / lane.median_ms("raw"), lane.median_ms("per_call") / pooled


def stateless_session(lanes: dict[str, Lane], transport: str, method: str = "pooled") -> float:
    """A call's cost to a 2026-07-28 server against a 2025-11-25 session, on `transport`."""
    return lanes[f"{transport}_dual"].median_ms(method) / lanes[f"{transport}_legacy"].median_ms(method)


def print_table(lanes: list[Lane]) -> None:
    print(f"{'lane':<14}{'raw ms':>10}{'pooled ms':>11}{'per call ms':>13}{'pooled/raw':>12}{'per_call/pooled':>17}")
    for lane in lanes:
        pooled_raw, per_call_pooled = ratios(lane)
        print(
            f"{lane.name:<14}{lane.median_ms('raw'):>10.3f}{lane.median_ms('pooled'):>11.3f}"
            f"{lane.median_ms('per_call'):>13.1f}{pooled_raw:>12.3f}{per_call_pooled:>17.1f}"
        )
    for lane in lanes:
        print(
            f"(info) {lane.name} sync bridge hub.call_tool from the main thread: "
            f"{lane.median_ms('bridge'):.3f} ms per call"
            f" ({lane.median_ms('bridge') - lane.median_ms('pooled'):+.3f} ms over pooled on the loop)"
        )
    counts = ", ".join(f"{m}={len(v)}" for m, v in lanes[0].samples.items())
    print(f"(info) lanes: *_dual = {MODERN} (stateless), *_legacy = {HANDSHAKE} (session)")
    print(f"(info) medians over calls per lane: {counts}")


def summary_line(lanes: dict[str, Lane]) -> str:
    worst = max(ratios(lane)[0] for lane in lanes.values())
    pairs: list[tuple[str, str]] = [
        ("pooled/raw", f"{worst:.2f}"),
        ("per_call_http/pooled", f"{ratios(lanes['http_dual'])[1]:.1f}"),
        ("per_call_stdio/pooled", f"{ratios(lanes['stdio_dual'])[1]:.1f}"),
        ("stateless/session_http", f"{stateless_session(lanes, 'http'):.3f}"),
        ("stateless/session_stdio", f"{stateless_session(lanes, 'stdio'):.3f}"),
        ("raw_stateless/session_stdio", f"{stateless_session(lanes, 'stdio', 'raw'):.3f}"),
    ]
    for lane in lanes.values():
        pairs.append((f"pooled/raw_{lane.name}", f"{ratios(lane)[0]:.3f}"))
    for lane in lanes.values():
        for method in ("raw", "pooled", "per_call", "bridge"):
            pairs.append((f"{method}_{lane.name}_ms", f"{lane.median_ms(method):.3f}"))
    return " ".join(f"{key}={value}" for key, value in pairs)


def verdict(lanes: dict[str, Lane]) -> str:
    worst = max(ratios(lane)[0] for lane in lanes.values())
    stateless = stateless_session(lanes, "http")
    http, stdio = ratios(lanes["http_dual"])[1], ratios(lanes["stdio_dual"])[1]
    checks = [
        f"pooled/raw {'ok' if worst <= GOAL_POOLED_RAW else 'MISSED'} (<= {GOAL_POOLED_RAW})",
        f"per_call_http/pooled {'ok' if http >= GOAL_PER_CALL_HTTP else 'MISSED'} (>= {GOAL_PER_CALL_HTTP:g})",
        f"per_call_stdio/pooled {'ok' if stdio >= GOAL_PER_CALL_STDIO else 'MISSED'} (>= {GOAL_PER_CALL_STDIO:g})",
        f"stateless/session_http {'ok' if stateless <= GOAL_STATELESS_SESSION else 'MISSED'} "
        f"(<= {GOAL_STATELESS_SESSION:g})",
    ]
    return "goals: " + ", ".join(checks)


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    started = time.perf_counter()
    hub = McpHub()
    with (
        open(os.devnull, "w") as devnull,
        serve_http("streamable-http") as dual,
        serve_http("streamable-http", "--era", "legacy") as legacy,
    ):
        lanes = [
            stdio_lane(devnull, "dual"),
            stdio_lane(devnull, "legacy"),
            http_lane(dual.url, "dual"),
            http_lane(legacy.url, "legacy"),
        ]
        opened: list[RawSession] = []
        try:
            for lane in lanes:
                hub.run(lane.raw.open(), timeout=OPEN_TIMEOUT)
                opened.append(lane.raw)
                check_answers(hub, lane)
                warm_up(hub, lane)
            for round_no in range(ROUNDS):
                for lane in lanes:
                    run_round(hub, lane, flip=bool(round_no % 2))
        finally:
            # close our SDK sessions (stdio servers exit with them), then the hub's, then the HTTP servers
            for raw in opened:
                hub.run(raw.close(), timeout=OPEN_TIMEOUT)
            hub.shutdown()
    print_table(lanes)
    by_name = {lane.name: lane for lane in lanes}
    print(f"(info) {verdict(by_name)}; wall time {time.perf_counter() - started:.1f} s")
    print(summary_line(by_name))
    return 1 if "MISSED" in verdict(by_name) else 0


if __name__ == "__main__":
    sys.exit(main())
