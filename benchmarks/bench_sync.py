""" "Sync tools" of 10 servers x 50 tools, as the cron runs it, against the raw SDK listing them.

Run from the repository root: `python benchmarks/bench_sync.py` (options: --repeat 5).

Ten real FastMCP servers of testing/mcp_servers.py, each offering 50 tools (its 13 own plus 37
numbered ones): five over streamable HTTP (child processes started once) and five over stdio (a
process started by each connection, as every stdio sync does). Measured side by side in one run,
the order rotating each repetition; the figure is the median over the repetitions:

  ours  the services-level sync the cron calls, for all ten: `services.mcp.sync.connect_all(hub, specs)` read
        from this thread as an Odoo request reads it (connect afresh, initialize, tools/list with
        its pages, normalize each tool, close). mcp.server._cron_sync_all does exactly this, then
        writes the mcp.tool rows; that ORM write is not in this figure.
  raw   the mcp SDK alone, on the same hub loop: for each server `stdio_client` or
        `streamable_http_client`, `ClientSession.initialize()`, `list_tools()` (following pages),
        close; all ten at once, as ours does.
  raw_sequential  (information) the raw SDK one server after the other, as the cron used to.
  *_http, *_stdio (information) ours and raw on the five servers of one transport only: where the
        time goes (a stdio sync starts a Python process that imports the mcp SDK).

The last line is machine-readable, the ratio first; goals: sync_s <= 1 and ours/raw <= 1.5.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

# Run as a plain script: put the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from mcp import Client, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from services.mcp import McpHub, connect_all  # noqa: E402
from services.server_spec import ServerSpec, build_server_spec  # noqa: E402
from testing.mcp_servers import HttpServer, server_argv  # noqa: E402

SERVERS_PER_TRANSPORT = 5
OWN_TOOLS = 13  # echo, add, slow, ... of testing/mcp_servers.py
TOOLS = 50
EXTRA = ("--tools", str(TOOLS - OWN_TOOLS))
GOAL_SECONDS = 1.0
GOAL_RATIO = 1.5
METHODS = ("ours", "raw", "raw_sequential", "ours_http", "raw_http", "ours_stdio", "raw_stdio")


def specs(http_servers: list[HttpServer]) -> list[ServerSpec]:
    out = [build_server_spec(key=f"sync-http-{i}", name=f"http {i}", url=s.url) for i, s in enumerate(http_servers)]
    for i in range(SERVERS_PER_TRANSPORT):
        argv = server_argv("stdio", "--name", f"stdio-{i}", *EXTRA)
        out.append(
            build_server_spec(
                key=f"sync-stdio-{i}", name=f"stdio {i}", transport="stdio", command=argv[0], args=tuple(argv[1:])
            )
        )
    return out


async def raw_list(spec: ServerSpec) -> int:
    """Tools listed by the bare SDK: connect, agree on a revision, every page, close."""
    if spec.transport == "stdio":
        assert spec.command is not None
        transport = stdio_client(StdioServerParameters(command=spec.command, args=list(spec.args)))
    else:
        assert spec.url is not None
        transport = streamable_http_client(spec.url)
    async with Client(transport, cache=None) as client:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                return len(tools)


async def raw_all(all_specs: list[ServerSpec]) -> list[int]:
    return list(await asyncio.gather(*(raw_list(s) for s in all_specs)))


async def raw_each(all_specs: list[ServerSpec]) -> list[int]:
    return [await raw_list(s) for s in all_specs]


def check(counts: list[int], method: str) -> None:
    if counts != [TOOLS] * len(counts):
        raise RuntimeError(f"{method} listed {counts} tools, expected {TOOLS} per server")


def one(method: str, hub: McpHub, all_specs: list[ServerSpec]) -> float:
    kind, _, transport = method.partition("_")
    if transport in ("http", "stdio"):
        all_specs = [s for s in all_specs if (s.transport == "stdio") == (transport == "stdio")]
        method = kind
    started = time.perf_counter()
    if method == "ours":
        reports = connect_all(hub, all_specs)
        counts = [len(r.tools) if not isinstance(r, Exception) else -1 for r in reports]
    elif method == "raw":
        counts = hub.run(raw_all(all_specs), timeout=120)
    else:
        counts = hub.run(raw_each(all_specs), timeout=120)
    seconds = time.perf_counter() - started
    check(counts, method)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    http_servers = [
        HttpServer("streamable-http", "--name", f"http-{i}", *EXTRA).start() for i in range(SERVERS_PER_TRANSPORT)
    ]
    hub = McpHub()
    samples: dict[str, list[float]] = {m: [] for m in METHODS}
    try:
        all_specs = specs(http_servers)
        for method in METHODS:  # warm-up: imports, first connections
            one(method, hub, all_specs)
        for turn in range(opts.repeat):
            shift = turn % len(METHODS)
            for method in METHODS[shift:] + METHODS[:shift]:
                samples[method].append(one(method, hub, all_specs))
    finally:
        hub.shutdown()
        for server in http_servers:
            server.stop()
    median = {m: statistics.median(v) for m, v in samples.items()}
    for method in METHODS:
        print(
            f"{method:15s} median {median[method]:.3f} s  min {min(samples[method]):.3f}  max "
            f"{max(samples[method]):.3f}"
        )
    ratio = median["ours"] / median["raw"]
    ok = median["ours"] <= GOAL_SECONDS and ratio <= GOAL_RATIO
    print(
        f"(info) {len(all_specs)} servers x {TOOLS} tools ({SERVERS_PER_TRANSPORT} streamable HTTP, "
        f"{SERVERS_PER_TRANSPORT} stdio); "
        f"medians of {opts.repeat}; goal sync_s <= {GOAL_SECONDS} and ours/raw <= {GOAL_RATIO}: "
        f"{'ok' if ok else 'missed'}"
    )
    print(
        f"ours/raw={ratio:.2f} ours/raw_sequential={median['ours'] / median['raw_sequential']:.2f} "
        f"sync_s={median['ours']:.3f} "
        f"raw_s={median['raw']:.3f} raw_sequential_s={median['raw_sequential']:.3f} servers={len(all_specs)} "
        f"tools_per_server={TOOLS}"
    )
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
