"""Per-round cost of the agent loop against a bare loop making the same HTTP calls.

Run from the repository root: `python benchmarks/bench_loop.py` (add `--profile` to always print
the profile of our turn; it is printed anyway when the goal is missed).

Two streamable-HTTP test servers (child processes), the same server at either protocol generation:
2026-07-28 (stateless, every request stands alone) and 2025-11-25 (`--era legacy`: a session agreed
by the initialize handshake); and one in-process ScriptedLLM whose responder
asks for `echo` while fewer than TOOL_ROUNDS tool results are in the request, then answers with a
short text. Both answer at once, so what is left is the clients' own cost. A turn is therefore
TOOL_ROUNDS tool rounds plus one answering call: TOOL_ROUNDS + 1 model calls (streamed, tools
offered every time) and TOOL_ROUNDS `tools/call` requests. max_rounds is TOOL_ROUNDS + 2 so the
loop never stops to ask "continue?" (that happens when round max_rounds - 1 ended with tools).

  ours    `run_turn(TurnRequest, hub)` consumed inside one coroutine on the hub's loop, so no
          thread hand-off is counted; the pooled MCP session is warm. Everything a turn does is in:
          binding tools, building the chat model, converting messages, validating arguments,
          building events.
          The model request is posted as LangChain built it (services/llm/_chat_completions.py), not
          walked by openai's create() first: that walk alone cost more than the rest of the loop.
  bare    on the same loop: an `openai.AsyncOpenAI` client created once and a raw
          `mcp.Client` over `streamable_http_client` opened once, driven by hand
          (stream consumed, tool-call deltas assembled, `echo` called, result appended). It offers
          the exact tool list our loop sent (LangChain drops the schema's "title" keys), and the
          script checks that the model server got the same request bodies from both (ids masked).
  bridge  (information) `hub.iterate(lambda: run_turn(...))` read from the main thread, as an Odoo
          request reads it: ours plus the thread hand-off per event.

Per-round time = turn time / (TOOL_ROUNDS + 1), the number of model calls, for all three. The
three run interleaved, the order rotating each turn, both generations taking turns, and each
figure is the median over TURNS turns after WARMUP_TURNS warm-up turns of each.

When our loop is over the goal (or with --profile), ten more of our turns run under cProfile on
the hub loop's thread, and the time is attributed to the usual suspects (ChatOpenAI per turn,
message conversion, chunk aggregation, argument validation, pydantic, ...) before the top entries
by cumulative time.

With `--replay`, the model puts a field on each tool call that later requests must carry back (as
Gemini's `extra_content.google.thought_signature`), and streams a reasoning text on each reply;
our loop keeps both (the field sent back, the reasoning shown) and the bare loop sends the field
back too, so the bodies stay equal: the overhead then includes what keeping and replaying costs.

The last line is machine-readable, overhead first; the goal is loop_overhead_ms_per_round <= 1.5
(the worse of the two generations). stateless/session (a round of our loop against the 2026-07-28
server over one against the 2025-11-25 session) is printed for information: a round is mostly the
model's call, and the per-call goal of the two generations is bench_hub's.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

# Run as a plain script: put the repository root on sys.path so `services` and `testing` import.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

import openai  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from benchmarks.raw_session import RawSession  # noqa: E402
from services.events import DoneEvent, Event, ToolResultEvent  # noqa: E402
from services.llm import LlmSettings  # noqa: E402
from services.loop import (  # noqa: E402
    AssistantSettings,
    LoopLimits,
    ToolBinding,
    TurnRequest,
    run_turn,
)
from services.mcp import McpHub  # noqa: E402
from services.server_spec import ServerSpec, build_server_spec  # noqa: E402
from services.tool_info import ToolInfo  # noqa: E402
from testing.mcp_servers import serve_http  # noqa: E402
from testing.scripted_llm import Provider, ScriptedLLM, ToolCall, Turn  # noqa: E402

TOOL_ROUNDS = 8
MAX_ROUNDS = TOOL_ROUNDS + 2  # > TOOL_ROUNDS + 1: no "continue?" pause
MODEL_CALLS = TOOL_ROUNDS + 1  # the per-round divisor, the same for every method
TURNS = 50
WARMUP_TURNS = 3
PROFILE_TURNS = 10
MODEL = "scripted-model"
API_KEY = "bench-key"
USER_MESSAGE = "Echo a few times, then answer."
ANSWER = "All echoed."
OPEN_TIMEOUT = 30.0
TURN_TIMEOUT = 30.0

GOAL_OVERHEAD_MS = 1.5
ERAS = ("dual", "legacy")  # the server's --era: 2026-07-28 and 2025-11-25

METHODS = ("ours", "bare", "bridge")


# -- the scripted model ------------------------------------------------------------------------


def responder(body: dict[str, Any]) -> Turn:
    """A tool call to `echo` while fewer than TOOL_ROUNDS results are in the messages, then the answer."""
    done = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
    if done < TOOL_ROUNDS:
        return Turn(tool_calls=(ToolCall("echo", {"text": f"ping {done}"}),))
    return Turn(text=ANSWER)


class SignedCalls(Provider):
    """--replay: each tool call carries a field the next requests must send back, and each reply
    streams some reasoning first (shown, never sent back)."""

    def stream(self, reply: Any, chunks: list[dict]) -> list[bytes]:
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                for call in (choice.get("delta") or {}).get("tool_calls") or ():
                    if "id" in call:
                        call["extra_content"] = {"google": {"thought_signature": "c2lnbmF0dXJl"}}
        thinking = [{**chunks[0], "choices": [{**chunks[0]["choices"][0], "delta": {"reasoning": "Echo next."}}]}]
        return super().stream(reply, [chunks[0], *thinking, *chunks[1:]])


# -- the bare loop -----------------------------------------------------------------------------


class BareLoop:
    """The same model and tool calls, in the same order, with nothing but the two SDK clients."""

    def __init__(self, base_url: str, mcp_url: str) -> None:
        self._base_url = base_url
        self.raw = RawSession(lambda: streamable_http_client(mcp_url))
        self.tools: list[dict[str, Any]] = []  # set to the exact tools our loop sends
        self.client: openai.AsyncOpenAI | None = None

    async def open(self) -> None:
        # created on the hub loop, where its httpx pool will live
        self.client = openai.AsyncOpenAI(base_url=self._base_url, api_key=API_KEY, max_retries=0)
        await self.raw.open()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        await self.raw.close()

    async def turn(self, user_message: str) -> tuple[int, str]:
        """(model calls, final text) of one turn."""
        assert self.client is not None
        session = self.raw.session
        messages: list[dict[str, Any]] = [{"role": "user", "content": user_message}]
        calls_made = 0
        while True:
            stream = await self.client.chat.completions.create(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                tools=self.tools,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
            calls_made += 1
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async for chunk in stream:
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                    for part in delta.tool_calls or ():
                        slot = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                        if part.model_extra:  # --replay: what the next requests must carry back
                            slot["extra"] = part.model_extra
                        if part.id:
                            slot["id"] = part.id
                        if part.function is not None:
                            slot["name"] += part.function.name or ""
                            slot["arguments"] += part.function.arguments or ""
            if not calls:
                return calls_made, "".join(text)
            ordered = [calls[i] for i in sorted(calls)]
            messages.append(
                {
                    "role": "assistant",
                    "content": "".join(text) or None,  # as langchain-openai sends a tool-only reply
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                            **c.get("extra", {}),
                        }
                        for c in ordered
                    ],
                }
            )
            for call in ordered:
                result = await session.call_tool(call["name"], json.loads(call["arguments"] or "{}"))
                content = "\n".join(block.text for block in result.content if block.type == "text")
                messages.append({"role": "tool", "content": content, "tool_call_id": call["id"]})


# -- our loop ------------------------------------------------------------------------------------


def turn_request(llm: ScriptedLLM, spec: ServerSpec, tool: ToolInfo) -> TurnRequest:
    return TurnRequest(
        assistant=AssistantSettings(
            name="Bench",
            llm=LlmSettings(base_url=llm.base_url, api_key=API_KEY, model=MODEL, max_retries=0),
            limits=LoopLimits(max_rounds=MAX_ROUNDS),
        ),
        tools=[ToolBinding(server=spec, tool=tool)],
        user_message=USER_MESSAGE,
    )


async def our_turn(request: TurnRequest, hub: McpHub) -> list[Event]:
    return [event async for event in run_turn(request, hub)]


def check_ours(events: list[Event]) -> None:
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    done = events[-1] if events else None
    if (
        not isinstance(done, DoneEvent)
        or done.rounds != MODEL_CALLS
        or len(results) != TOOL_ROUNDS
        or not all(r.ok for r in results)
    ):
        raise RuntimeError(f"our turn did not run {TOOL_ROUNDS} tool rounds and answer: {[e.data() for e in events]}")


def check_bare(outcome: tuple[int, str]) -> None:
    if outcome != (MODEL_CALLS, ANSWER):
        raise RuntimeError(f"the bare turn made {outcome[0]} model calls and answered {outcome[1]!r}")


# -- timing ------------------------------------------------------------------------------------


async def timed(make: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """Seconds of one turn measured inside the hub's loop, and its outcome."""
    started = time.perf_counter()
    outcome = await make()
    return time.perf_counter() - started, outcome


class Bench:
    def __init__(self, hub: McpHub, request: TurnRequest, bare: BareLoop) -> None:
        self.hub = hub
        self.request = request
        self.bare = bare
        self.samples: dict[str, list[float]] = {m: [] for m in METHODS}
        self.measured = 0

    def run_ours(self) -> float:
        seconds, events = self.hub.run(timed(lambda: our_turn(self.request, self.hub)), timeout=TURN_TIMEOUT)
        check_ours(events)
        return seconds

    def run_bare(self) -> float:
        seconds, outcome = self.hub.run(timed(lambda: self.bare.turn(USER_MESSAGE)), timeout=TURN_TIMEOUT)
        check_bare(outcome)
        return seconds

    def run_bridge(self) -> float:
        started = time.perf_counter()
        events = list(self.hub.iterate(lambda: run_turn(self.request, self.hub)))
        seconds = time.perf_counter() - started
        check_ours(events)
        return seconds

    def one(self, method: str) -> float:
        return {"ours": self.run_ours, "bare": self.run_bare, "bridge": self.run_bridge}[method]()

    def measure(self, turns: int) -> None:
        for _ in range(turns):
            shift = self.measured % len(METHODS)  # rotate the order so none always runs first
            for method in METHODS[shift:] + METHODS[:shift]:
                self.samples[method].append(self.one(method))
            self.measured += 1

    def per_round_ms(self, method: str) -> float:
        return statistics.median(self.samples[method]) * 1000 / MODEL_CALLS

    def spread_ms(self, method: str) -> tuple[float, float]:
        """Per-round ms at the 10th and 90th percentile of turns."""
        deciles = statistics.quantiles(self.samples[method], n=10)
        return deciles[0] * 1000 / MODEL_CALLS, deciles[-1] * 1000 / MODEL_CALLS


# -- same HTTP calls? ------------------------------------------------------------------------------


def _normalized(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with the per-call ids masked (they come from the server's counter)."""
    text = json.dumps(body, sort_keys=True)
    for message in body.get("messages") or []:
        for call in message.get("tool_calls") or []:
            text = text.replace(json.dumps(call["id"]), '"<id>"')
    return json.loads(text)


def compare_bodies(ours: list[dict[str, Any]], bare: list[dict[str, Any]]) -> str:
    """'identical' or a description of where the first differing request body differs."""
    if len(ours) != len(bare):
        return f"ours made {len(ours)} model calls, bare {len(bare)}"
    for index, (a, b) in enumerate(zip(ours, bare, strict=False)):
        na, nb = _normalized(a), _normalized(b)
        if na != nb:
            keys = sorted(k for k in set(na) | set(nb) if na.get(k) != nb.get(k))
            details = "; ".join(
                f"{k}: ours={json.dumps(na.get(k))[:160]} bare={json.dumps(nb.get(k))[:160]}" for k in keys
            )
            return f"request {index + 1} differs in {details}"
    return "identical"


# -- profile -------------------------------------------------------------------------------------


# Where our loop's own time goes, by suspect: (label, file name, function name) as pstats names
# them. A function that no longer exists reads 0.
SUSPECTS: tuple[tuple[str, str, str], ...] = (
    ("ChatOpenAI built per turn (make_chat_model)", "chat_model.py", "make_chat_model"),
    ("langchain tool per turn (_langchain_tool)", "agent_loop.py", "_langchain_tool"),
    ("bind_tools per model call", "base.py", "bind_tools"),
    ("history -> langchain messages (to_langchain)", "transcript.py", "to_langchain"),
    ("langchain request payload (_get_request_payload)", "base.py", "_get_request_payload"),
    ("langchain callbacks set-up (AsyncCallbackManager.configure)", "manager.py", "configure"),
    ("openai chunk -> langchain chunk", "base.py", "_convert_chunk_to_generation_chunk"),
    ("AIMessageChunk + AIMessageChunk (aggregation)", "ai.py", "__add__"),
    ("partial JSON of tool-call chunks", "json.py", "parse_partial_json"),
    (
        "reading the stream (langchain's chunk-timeout wrapper, off: the whole read)",
        "_client_utils.py",
        "_astream_with_chunk_timeout",
    ),
    ("argument check (check_arguments)", "tool_runner.py", "check_arguments"),
    ("jsonschema check_schema (once per schema: cached validators)", "validators.py", "check_schema"),
    ("tool call through the hub (acall_tool; the SDK call inside)", "hub.py", "acall_tool"),
    ("pydantic model __init__ (events, messages, ...)", "main.py", "__init__"),
    (
        "openai SDK body transform (bare pays it; ours posts the payload as is)",
        "_transform.py",
        "async_maybe_transform",
    ),
    ("openai SDK create() in all (bare; ours: the row below)", "completions.py", "create"),
    ("request sent as is (PlainChatCompletions.create)", "chat_completions.py", "create"),
)


async def profiled_turns(request: TurnRequest, hub: McpHub, turns: int) -> tuple[cProfile.Profile, float]:
    """cProfile of `turns` of our turns on the hub loop's thread (so the SDK and httpx tasks the
    turn wakes on this loop are in it too), and the profiled wall time."""
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    try:
        for _ in range(turns):
            check_ours(await our_turn(request, hub))
    finally:
        profile.disable()
    return profile, time.perf_counter() - started


def print_profile(
    profile: cProfile.Profile, wall: float, turns: int, ours_ms_per_round: float, limit: int = 25
) -> None:
    """Rows nest (partial JSON runs inside chunk aggregation, for one), so they do not add up.
    "~ms/round" scales a row's share of the profiled CPU time to the unprofiled per-round time:
    an estimate, as the profiler slows small Python calls more than C and I/O."""
    stats = pstats.Stats(profile, stream=io.StringIO())
    stats.strip_dirs()
    cpu_per_turn = stats.total_tt * 1000 / turns  # type: ignore[attr-defined]
    print(
        f"(profile) our loop, {turns} turns on the hub loop under cProfile: {wall * 1000 / turns:.1f} ms wall,"
        f" {cpu_per_turn:.1f} ms profiled CPU per turn (the profiler inflates every figure)"
    )
    print(f"(profile) {'suspect':<64}{'calls/turn':>11}{'cum ms/turn':>13}{'share':>8}{'~ms/round':>11}")
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    for label, filename, function in SUSPECTS:
        rows = [row for (file, _, func), row in raw.items() if file == filename and func == function]
        calls = sum(row[1] for row in rows) / turns  # primitive calls: an async resume counts as one
        cumulative = sum(row[3] for row in rows) * 1000 / turns
        share = cumulative / cpu_per_turn
        print(
            f"(profile) {label:<64}{calls:>11.1f}{cumulative:>13.2f}"
            f"{share * 100:>7.1f}%{share * ours_ms_per_round:>11.3f}"
        )
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("cumulative").print_stats(limit)
    print(f"(profile) top {limit} by cumulative time:")
    for line in out.getvalue().splitlines():
        if line.strip() and not line.lstrip().startswith(("Ordered by", "List reduced")):
            print(f"(profile) {line}")


# -- report --------------------------------------------------------------------------------------


def print_table(benches: dict[str, Bench]) -> None:
    print(f"{'server':<9}{'method':<8}{'ms/turn':>10}{'ms/round':>10}{'p10':>8}{'p90':>8}{'over bare':>11}")
    for era, bench in benches.items():
        bare = bench.per_round_ms("bare")
        for method in METHODS:
            per_round = bench.per_round_ms(method)
            p10, p90 = bench.spread_ms(method)
            print(
                f"{era:<9}{method:<8}{per_round * MODEL_CALLS:>10.2f}{per_round:>10.3f}"
                f"{p10:>8.3f}{p90:>8.3f}{per_round - bare:>+11.3f}"
            )
    print(
        f"(info) a turn = {TOOL_ROUNDS} tool rounds + 1 answer = {MODEL_CALLS} streamed model calls and "
        f"{TOOL_ROUNDS} echo calls;"
        f" per-round = turn / {MODEL_CALLS}; medians over {TURNS} interleaved turns each after {WARMUP_TURNS} "
        "warm-up turns; dual = 2026-07-28 (stateless), legacy = 2025-11-25 (session)"
    )


def overhead(bench: Bench) -> float:
    return bench.per_round_ms("ours") - bench.per_round_ms("bare")


def stateless_session(benches: dict[str, Bench]) -> float:
    return benches["dual"].per_round_ms("ours") / benches["legacy"].per_round_ms("ours")


def summary_line(benches: dict[str, Bench]) -> str:
    modern, legacy = benches["dual"], benches["legacy"]
    ours, bare, bridge = (modern.per_round_ms(m) for m in METHODS)
    pairs = [
        ("loop_overhead_ms_per_round", f"{max(overhead(modern), overhead(legacy)):.3f}"),
        ("stateless/session", f"{stateless_session(benches):.3f}"),
        ("loop_overhead_ms_per_round_2026", f"{overhead(modern):.3f}"),
        ("loop_overhead_ms_per_round_2025", f"{overhead(legacy):.3f}"),
        ("loop_ms_per_round", f"{ours:.3f}"),
        ("bare_ms_per_round", f"{bare:.3f}"),
        ("ratio", f"{ours / bare:.3f}"),
        ("loop_ms_per_round_2025", f"{legacy.per_round_ms('ours'):.3f}"),
        ("bare_ms_per_round_2025", f"{legacy.per_round_ms('bare'):.3f}"),
        ("bridge_ms_per_round", f"{bridge:.3f}"),
        ("bridge_overhead_ms_per_round", f"{bridge - ours:.3f}"),
        ("tool_rounds", str(TOOL_ROUNDS)),
        ("turns", str(TURNS)),
    ]
    return " ".join(f"{key}={value}" for key, value in pairs)


# -- main ----------------------------------------------------------------------------------------


def prepare(hub: McpHub, llm: ScriptedLLM, era: str, url: str) -> tuple[Bench, str]:
    """A Bench on the server at `url`, after one checked turn of ours and one bare turn whose
    model requests must match (the bare loop offers exactly the tools ours sent)."""
    spec = build_server_spec(key=f"bench-http-{era}", name="bench http", transport="streamable_http", url=url)
    listing = hub.run(hub.alist_tools(spec), timeout=OPEN_TIMEOUT)  # also opens the pooled session
    tool = next(t for t in listing.tools if t.name == "echo")
    bench = Bench(hub, turn_request(llm, spec, tool), BareLoop(llm.base_url, url))
    hub.run(bench.bare.open(), timeout=OPEN_TIMEOUT)
    first = len(llm.requests)
    bench.run_ours()
    middle = len(llm.requests)
    bench.bare.tools = llm.requests[first]["tools"]
    bench.run_bare()
    requests = llm.requests
    same = compare_bodies(requests[first:middle], requests[middle:])
    bench.run_bridge()
    return bench, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile", action="store_true", help="print the profile of our turn even when the goal is met"
    )
    parser.add_argument(
        "--replay", action="store_true", help="tool calls carry a field to send back, replies stream reasoning"
    )
    opts = parser.parse_args(argv)
    started = time.perf_counter()
    hub = McpHub()
    profile: tuple[cProfile.Profile, float] | None = None
    benches: dict[str, Bench] = {}
    same: dict[str, str] = {}
    with (
        serve_http("streamable-http") as dual,
        serve_http("streamable-http", "--era", "legacy") as legacy,
        ScriptedLLM(
            responder=responder, model=MODEL, api_key=API_KEY, provider=SignedCalls() if opts.replay else None
        ) as llm,
    ):
        try:
            for era, server in zip(ERAS, (dual, legacy), strict=True):
                benches[era], same[era] = prepare(hub, llm, era, server.url)
            for _ in range(WARMUP_TURNS - 1):
                for bench in benches.values():
                    for method in METHODS:
                        bench.one(method)
            for _ in range(TURNS):
                for bench in benches.values():
                    bench.measure(1)
            worst = max(overhead(bench) for bench in benches.values())
            if opts.profile or worst > GOAL_OVERHEAD_MS:
                request = benches["dual"].request
                profile = hub.run(profiled_turns(request, hub, PROFILE_TURNS), timeout=TURN_TIMEOUT * PROFILE_TURNS)
        finally:
            # close our SDK sessions and the hub's while the MCP servers still answer
            for bench in benches.values():
                hub.run(bench.bare.close(), timeout=OPEN_TIMEOUT)
            hub.shutdown()
    if profile is not None:
        print_profile(*profile, PROFILE_TURNS, benches["dual"].per_round_ms("ours"))
    print_table(benches)
    for era, verdict_of_bodies in same.items():
        print(f"(info) {era}: model request bodies, ours vs bare (ids masked): {verdict_of_bodies}")
    overhead_ok = "ok" if worst <= GOAL_OVERHEAD_MS else "MISSED"
    print(
        f"(info) goal: loop_overhead_ms_per_round <= {GOAL_OVERHEAD_MS:g} {overhead_ok}"
        f"; stateless/session {stateless_session(benches):.3f}"
        f"; wall time {time.perf_counter() - started:.1f} s"
    )
    print(summary_line(benches))
    return 0 if overhead_ok == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
