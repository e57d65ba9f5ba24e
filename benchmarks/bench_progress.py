"""What a server's progress notifications cost a turn, and how soon the user sees them.

    python benchmarks/bench_progress.py
        starts its own Odoo 18 (ODOO_BIN or /opt/odoo18/odoo-bin) on a new database holding ai_mcp,
        and drops it at the end

A real FastMCP server (testing/mcp_servers.py --notifying) runs `progress`: 1,000 steps over 2 s,
either sending a notification at each step ("chatty") or keeping the same pace silently ("quiet").
Each turn goes through Odoo's SSE chat route as the widget reads it: the scripted model calls the
tool once, then answers. Runs alternate so both modes see the same machine; medians after a
warm-up.

  chatty/quiet         turn time with 1,000 notifications over turn time with none (goal <= 1.05)
  stored_progress_max  tool_progress events stored for the call, most of any run (goal < 10)
  first_progress_ms    from the server sending its first notification (its own clock, stamped in
                       the message) to the SSE event reaching this client, median (goal <= 100)
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from testing.mcp_servers import serve_http  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "bench-key"
STEPS = 1000
SECONDS = 2.0
RUNS = 5
WARMUP = 1
GOAL_RATIO = 1.05
GOAL_STORED = 10
GOAL_FIRST_MS = 100.0


def responder(body: dict) -> Turn:
    messages = body.get("messages") or []
    if any(m.get("role") == "tool" for m in messages):
        return Turn(text="Finished.")
    asked = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
    return Turn(
        tool_calls=(
            ToolCall(
                "progress", {"steps": STEPS, "seconds": SECONDS, "quiet": asked.startswith("quiet"), "stamp": True}
            ),
        )
    )


def one_turn(client: WebClient, assistant: int, mode: str, index: int) -> dict:
    received_at: list[float] = []

    def stamp(event) -> bool:
        if event.event == "tool_progress" and not received_at:
            received_at.append(time.time())
        return False

    result = client.stream({"assistant_id": assistant, "message": f"{mode} {index}"}, until=stamp)
    events = [event for _at, event in result["events"]]
    if result["status"] != 200 or not events or events[-1].event != "done":
        sys.exit(f"the {mode} turn failed: {result.get('error') or [e.event for e in events][-3:]}")
    progress = [e for e in events if e.event == "tool_progress"]
    first_ms = None
    if progress:
        sent = float(progress[0].data["message"].rsplit(" sent ", 1)[1])
        first_ms = (received_at[0] - sent) * 1000
    conversation = events[0].data["conversation_id"]
    stored = client.call(
        "ai.conversation.event",
        "search_count",
        [("conversation_id", "=", conversation), ("type", "=", "tool_progress")],
    )
    return {"total": result["total"], "streamed": len(progress), "stored": stored, "first_ms": first_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description="progress notifications: cost per turn and latency to the browser")
    parser.add_argument("--runs", type=int, default=RUNS)
    opts = parser.parse_args()
    try:
        odoo = OdooServer("bench-progress")
    except OdooNotFound as exc:
        sys.exit(str(exc))
    llm = ScriptedLLM(responder=responder, api_key=API_KEY)
    llm.start()
    try:
        with serve_http("streamable-http", "--notifying") as mcp:
            print(f"odoo: installing ai_mcp into new database {odoo.db} (logs in {odoo.tmp})", flush=True)
            odoo.install()
            odoo.start("threaded")
            client = WebClient(odoo.url, odoo.db, "admin", "admin", timeout=60)
            provider = client.call(
                "ai.provider",
                "create",
                {"name": "bench", "base_url": llm.base_url, "api_key": API_KEY, "default_model": "scripted-model"},
            )
            server = client.call("mcp.server", "create", {"name": "progress", "url": mcp.url})
            client.call("mcp.server", "action_sync_tools", [server])
            tools = client.call("mcp.tool", "search", [("server_id", "=", server), ("name", "=", "progress")])
            client.call("mcp.tool", "write", tools, {"requires_approval": False})
            assistant = client.call(
                "ai.assistant",
                "create",
                {"name": "bench", "provider_id": provider, "mcp_server_ids": [(6, 0, [server])]},
            )
            runs: dict[str, list[dict]] = {"quiet": [], "chatty": []}
            for i in range(WARMUP + opts.runs):
                for mode in ("quiet", "chatty"):
                    run = one_turn(client, assistant, mode, i)
                    if i >= WARMUP:
                        runs[mode].append(run)
    finally:
        llm.close()
        odoo.close()

    quiet = statistics.median(r["total"] for r in runs["quiet"])
    chatty = statistics.median(r["total"] for r in runs["chatty"])
    stored = max(r["stored"] for r in runs["chatty"])
    streamed = max(r["streamed"] for r in runs["chatty"])
    first = statistics.median(r["first_ms"] for r in runs["chatty"])
    ratio = chatty / quiet
    print(f"{STEPS} notifications over {SECONDS:.0f} s, medians of {opts.runs} turns each after {WARMUP} warm-up")
    print(
        f"turn: quiet {quiet * 1000:.0f} ms, chatty {chatty * 1000:.0f} ms: ratio {ratio:.3f} (goal <= {GOAL_RATIO}): "
        f"{'ok' if ratio <= GOAL_RATIO else 'MISSED'}"
    )
    print(
        f"progress events per call: {streamed} streamed, {stored} stored (goal < {GOAL_STORED}): "
        f"{'ok' if stored < GOAL_STORED else 'MISSED'}"
    )
    print(
        f"first progress reached the client {first:.1f} ms after the server sent it (goal <= {GOAL_FIRST_MS:.0f}): "
        f"{'ok' if first <= GOAL_FIRST_MS else 'MISSED'}"
    )
    print(
        f"chatty/quiet={ratio:.3f} stored_progress_max={stored} first_progress_ms={first:.1f} "
        f"quiet_ms={quiet * 1000:.0f} "
        f"chatty_ms={chatty * 1000:.0f}"
    )
    if ratio > GOAL_RATIO or stored >= GOAL_STORED or first > GOAL_FIRST_MS:
        sys.exit(1)


if __name__ == "__main__":
    main()
