"""What an assistant with many tools sends the model, with and without tool search.

Run from the repository root: `python benchmarks/bench_tools.py`.

Eight real MCP servers of 40 tools each (testing/tool_catalogue.py: excel-mcp-server's tools and
argument shapes, filesystem, git, an ERP, github, tickets, drive, database; 320 tools) and one
in-process ScriptedLLM. The user's request needs two tools, `read_data_from_excel` and
`create_invoice`; the scripted model calls them as soon as they are offered, searching for them
first when it is offered `search_tools`, and answers once both results are in.

  without  every tool offered in every model call (tool_search_threshold 500, no size trigger):
           round 1 calls both tools, round 2 answers: 2 model calls, each carrying 320 schemas.
  with     the assistant's defaults (more than 30 tools: search): round 1 searches twice, round 2
           calls both tools found, round 3 answers: 3 model calls, each carrying search_tools and
           the tools found so far.

Both are real turns (`run_turn` on the hub, tools called on the servers). A request's bytes are its
JSON body as the model server received it, encoded again compactly. Then the same two turns against
a ScriptedLLM that refuses more than 128 tools as api.openai.com does (`400 ... array too long`):
without search the turn fails, with it the turn succeeds. Last, the search itself: p95 of
`ToolIndex.search` over 1,000 tools (the 320, again under other server names, to 1,000) for the
queries of tests_py/test_tool_search.py.

Goals: a turn that needs 2 tools sends at most 1/10 of the bytes it sends without search
(`turn_bytes_ratio <= 0.1`), and search p95 under 5 ms for 1,000 tools. The last line is
machine-readable.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

# Run as a plain script: put the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests_py"))

import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from contextlib import ExitStack  # noqa: E402
from typing import Any  # noqa: E402

from services.events import ErrorEvent, Event, ToolResultEvent  # noqa: E402
from services.llm import LlmSettings  # noqa: E402
from services.loop import AssistantSettings, LoopLimits, ToolBinding, TurnRequest, run_turn  # noqa: E402
from services.loop.tool_search import SearchableTool, ToolIndex  # noqa: E402
from services.mcp import McpHub  # noqa: E402
from services.server_spec import build_server_spec  # noqa: E402
from testing.mcp_servers import serve_http  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402
from testing.tool_catalogue import CATALOGUES, catalogue_tools  # noqa: E402

MODEL = "scripted-model"
API_KEY = "bench-key"
USER_MESSAGE = "Read the sales range of sales.xlsx and invoice Azure Interior for it."
WANTED = ("read_data_from_excel", "create_invoice")
QUERIES = ("read data from an excel worksheet", "create a customer invoice")
ANSWER = "Invoice created for the sales range."
OPENAI_MAX_TOOLS = 128
SEARCH_TOOLS = 1000
SEARCH_REPEATS = 50

GOAL_RATIO = 0.1
GOAL_SEARCH_P95_MS = 5.0

# the search's ranking table, as tests_py/test_tool_search.py has it
RANKING_QUERIES = (
    "apply a formula to a cell",
    "read data from an excel worksheet",
    "create a pivot table",
    "list the contents of a directory",
    "move or rename a file",
    "show the working tree status",
    "create a new git branch",
    "create a customer invoice",
    "register a payment on an invoice",
    "open a pull request",
    "run a read-only sql query",
    "share a folder with someone",
)


def responder(body: dict[str, Any]) -> Turn:
    """Calls the wanted tools once offered, searches for them when it can, answers when both ran."""
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    messages = body.get("messages") or []
    called = {
        c["function"]["name"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []
    }
    if all(name in called for name in WANTED):
        return Turn(text=ANSWER)
    arguments = {
        "read_data_from_excel": {
            "filepath": "sales.xlsx",
            "sheet_name": "Sales",
            "start_cell": "A1",
            "end_cell": "D20",
        },
        "create_invoice": {"partner_id": 12, "lines": ["Sales range of sales.xlsx"]},
    }
    if all(name in offered for name in WANTED):
        return Turn(tool_calls=tuple(ToolCall(name, arguments[name]) for name in WANTED if name not in called))
    if "search_tools" in offered and "search_tools" not in called:
        return Turn(tool_calls=tuple(ToolCall("search_tools", {"query": query}) for query in QUERIES))
    return Turn(text="I could not find the tools.")


def request_bytes(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def tools_bytes(body: dict[str, Any]) -> int:
    return len(json.dumps(body.get("tools") or [], ensure_ascii=False, separators=(",", ":")).encode())


def bindings(hub: McpHub, servers: dict[str, Any]) -> list[ToolBinding]:
    found = []
    for name, server in servers.items():
        spec = build_server_spec(
            key=f"bench/{name}", name=name.capitalize(), transport="streamable_http", url=server.url
        )
        found += [ToolBinding(server=spec, tool=tool) for tool in hub.run(hub.alist_tools(spec)).tools]
    return found


def settings(llm: ScriptedLLM, searching: bool) -> AssistantSettings:
    limits = LoopLimits() if searching else LoopLimits(tool_search_threshold=500, tool_search_bytes=10**9)
    return AssistantSettings(
        name="Bench",
        llm=LlmSettings(base_url=llm.base_url, api_key=API_KEY, model=MODEL, max_retries=0),
        limits=limits,
    )


def turn(hub: McpHub, llm: ScriptedLLM, tools: list[ToolBinding], searching: bool) -> tuple[list[Event], list[dict]]:
    """The events of one turn and the model requests it made."""
    first = len(llm.requests)
    request = TurnRequest(assistant=settings(llm, searching), tools=tools, user_message=USER_MESSAGE)
    events = list(hub.iterate(lambda: run_turn(request, hub)))
    return events, llm.requests[first:]


def outcome(events: list[Event]) -> str:
    last = events[-1] if events else None
    if isinstance(last, ErrorEvent):
        return f"failed ({last.code}: {last.message[:110]})"
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    if last is not None and last.type == "done" and len(results) == len(WANTED) and all(r.ok for r in results):
        return "ok"
    return f"unexpected: {[e.type for e in events]}"


def search_p95_ms() -> tuple[float, float, int]:
    """(p95 ms of a search, ms to build the index, tools indexed) over SEARCH_TOOLS tools."""
    tools: list[SearchableTool] = []
    copy = 0
    while len(tools) < SEARCH_TOOLS:
        for name in CATALOGUES:
            server = f"{name.capitalize()}{copy or ''}"
            for tool in catalogue_tools(name):
                if len(tools) < SEARCH_TOOLS:
                    model_name = f"{server}__{tool.name}"
                    tools.append(SearchableTool.of(model_name, tool.title, tool.description, server, tool.input_schema))
        copy += 1
    started = time.perf_counter()
    index = ToolIndex(tools)
    built_ms = (time.perf_counter() - started) * 1000
    samples = []
    for _ in range(SEARCH_REPEATS):
        for query in RANKING_QUERIES:
            started = time.perf_counter()
            index.search(query)
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.quantiles(samples, n=20)[-1], built_ms, len(tools)


def print_calls(label: str, requests: list[dict]) -> None:
    for index, body in enumerate(requests, 1):
        print(
            f"{label:<8} call {index}: {len(body.get('tools') or []):>4} tools, {tools_bytes(body):>8} bytes of tools,"
            f" {request_bytes(body):>8} bytes in all"
        )


def main() -> int:
    started = time.perf_counter()
    hub = McpHub()
    with ExitStack() as stack:
        servers = {name: stack.enter_context(serve_http("streamable-http", "--catalogue", name)) for name in CATALOGUES}
        stack.callback(hub.shutdown)  # its sessions close while the servers still answer
        tools = bindings(hub, servers)
        llm = stack.enter_context(ScriptedLLM(responder=responder, model=MODEL, api_key=API_KEY))
        plain_events, plain = turn(hub, llm, tools, searching=False)
        search_events, searched = turn(hub, llm, tools, searching=True)
        strict = stack.enter_context(
            ScriptedLLM(responder=responder, model=MODEL, api_key=API_KEY, max_tools=OPENAI_MAX_TOOLS)
        )
        strict_plain, _ = turn(hub, strict, tools, searching=False)
        strict_search, _ = turn(hub, strict, tools, searching=True)
    p95, built_ms, indexed = search_p95_ms()

    print(f"(info) {len(tools)} tools on {len(CATALOGUES)} real MCP servers; the turn needs {', '.join(WANTED)}")
    print_calls("without", plain)
    print_calls("with", searched)
    plain_total = sum(request_bytes(body) for body in plain)
    search_total = sum(request_bytes(body) for body in searched)
    ratio = search_total / plain_total
    per_call = (search_total / len(searched)) / (plain_total / len(plain))
    print(f"without: {len(plain)} model calls, {plain_total} bytes; outcome {outcome(plain_events)}")
    print(f"with:    {len(searched)} model calls, {search_total} bytes; outcome {outcome(search_events)}")
    print(f"turn bytes with/without {ratio:.3f} (goal <= {GOAL_RATIO:g}: {'ok' if ratio <= GOAL_RATIO else 'MISSED'})")
    print(f"per model call with/without {per_call:.3f}")
    strict_without, strict_with = outcome(strict_plain), outcome(strict_search)
    print(
        f"provider refusing more than {OPENAI_MAX_TOOLS} tools: without search {strict_without};"
        f" with search {strict_with}"
    )
    search_ok = p95 < GOAL_SEARCH_P95_MS
    print(
        f"search over {indexed} tools: p95 {p95:.3f} ms"
        f" (goal < {GOAL_SEARCH_P95_MS:g}: {'ok' if search_ok else 'MISSED'});"
        f" index built in {built_ms:.1f} ms, once per set of tools"
    )
    print(f"(info) wall time {time.perf_counter() - started:.1f} s")
    pairs = [
        ("turn_bytes_ratio", f"{ratio:.4f}"),
        ("call_bytes_ratio", f"{per_call:.4f}"),
        ("turn_bytes_without", str(plain_total)),
        ("turn_bytes_with", str(search_total)),
        ("calls_without", str(len(plain))),
        ("calls_with", str(len(searched))),
        ("strict_without", "ok" if strict_without == "ok" else "failed"),
        ("strict_with", "ok" if strict_with == "ok" else "failed"),
        ("search_p95_ms", f"{p95:.3f}"),
        ("search_tools", str(indexed)),
        ("index_build_ms", f"{built_ms:.1f}"),
        ("tools", str(len(tools))),
    ]
    print(" ".join(f"{key}={value}" for key, value in pairs))
    # a goal missed is a failed run, as for a test: the caller's exit status says so
    met = ratio <= GOAL_RATIO and search_ok and strict_without != "ok" and strict_with == "ok"
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
