"""An assistant run by a server action against the same turn in the chat, and a scheduled batch.

    python benchmarks/bench_flows.py [--turns 30] [--records 200]
        installs ai_mcp (no demo data) into a new database of the Odoo the scripts find (ODOO_BIN,
        ODOO_PYTHON; Odoo 18, or 19 with AI_MCP_ODOO_SERIES=19). One scripted model (the only stand-in)
        answers every turn alike: it calls the real MCP tool `add` of a test server on 127.0.0.1,
        then answers. Then:

  per record  in one `odoo-bin shell`, as an internal AI user (not a superuser), interleaved, after
              warm-up turns of each:
              run   the server action "Run an AI Assistant" (answer: a note in the chatter, `add`
                    listed) run on a contact as a button runs it (the request that queues it,
                    committed), then what the queue's cron calls (`_cron_run`: a run taken under
                    its lock, the turn as the user, the note posted with the conversation's link,
                    each step committed, then the queue found empty);
              chat  the same instruction sent in a chat about the same contact (`_chat_send`,
                    committed as the chat route's request is, then the turn read to its end, as
                    the Discuss chat and the chat route read it).
              The medians per record and their ratio, measured twice: with the model answering
              at once (run_ratio_instant, and run_added_ms: what a run adds, Odoo's own work
              alone: the button's request, the queue, the note), and with the model paced as a
              real one (300 ms to the first token, then 20 tokens/s, bench_load's realistic pace):
              run_ratio, goal <= 1.1, what a record costs beside a chat turn.
  batch       Odoo started threaded with Odoo's default cron settings (2 cron threads); a scheduled
              action over --records contacts, run as a named user, is triggered as "Run Manually"
              does; the queue's cron answers them, committing each record: records per minute from
              the trigger to the last answer, and the database's commits per record (information).

The database is dropped at the end. The last line holds the figures as key=value pairs; the exit
status is 1 when a goal is missed or a run failed.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load.workload import PACES, Pace  # noqa: E402
from testing.mcp_servers import HttpServer  # noqa: E402
from testing.odoo_http import OdooServer, WebClient  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

GOAL_RATIO = 1.1
API_KEY = "sk-bench-flows"
WARMUP = 3
BATCH_TIMEOUT = 3600
# Odoo's default (odoo-bin --max-cron-threads): the servers run with 0 unless told
DEFAULT_CRON = ("--max-cron-threads=2",)


# the model's pace of each measure of a record: none (what Odoo adds, alone), and a real model's
PACED = {"instant": None, "realistic": PACES["realistic"]}


class Responder:
    """Adds 2 and 3 with the tool, then answers: the same two model calls for every turn, at the
    pace set (None: at once)."""

    def __init__(self) -> None:
        self.pace: Pace | None = None

    def __call__(self, body: dict) -> Turn:
        pace = self.pace
        timing = {"latency": pace.latency, "chunk_delay": pace.chunk_delay} if pace else {}
        if not any(message.get("role") == "tool" for message in body.get("messages") or []):
            chunks = {"arg_chunks": pace.arg_chunks} if pace else {}
            return Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),), **chunks, **timing)
        chunks = {"chunks": pace.answer_chunks} if pace else {}
        return Turn(text="Call them this week: **2 + 3 = 5** days since signing.", **chunks, **timing)


SETUP = r"""
import json
groups = [env.ref(x).id for x in ("base.group_user", "base.group_partner_manager", "ai_mcp.group_ai_user")]
groups_field = "groups_id" if "groups_id" in env["res.users"]._fields else "group_ids"
user = env["res.users"].create({{"name": "Bench Flows", "login": "bench_flows", "password": "bench_flows",
                                groups_field: [(6, 0, groups)]}})
provider = env["ai.provider"].create(
    {{"name": "Scripted", "base_url": {llm_url!r}, "api_key": {api_key!r}, "default_model": "scripted"}}
)
server = env["mcp.server"].create({{"name": "Bench tools", "scope": "system", "url": {mcp_url!r}}})
synced = server._sync_tools()
assert not synced.get("error"), synced
add = server.tool_ids.filtered(lambda t: t.name == "add")
assistant = env["ai.assistant"].create({{"name": "Greeter", "provider_id": provider.id, "system_prompt": "Be brief.",
                                        "mcp_server_ids": [(6, 0, server.ids)]}})
model = env["ir.model"]._get("res.partner")
common = {{"model_id": model.id, "state": "ai_assistant", "ai_assistant_id": assistant.id,
          "ai_instruction": "Draft a welcome call for {{{{ object.name }}}} of {{{{ object.city }}}}.",
          "ai_tool_ids": [(6, 0, add.ids)]}}
button = env["ir.actions.server"].create({{"name": "Welcome call", **common}})
scheduled = env["ir.actions.server"].create({{"name": "Welcome all", **common, "ai_run_as": "user",
                                             "ai_run_user_id": user.id, "ai_domain": "[('city', '=', 'Batchville')]"}})
cron = env["ir.cron"].create({{"name": "Welcome all", "ir_actions_server_id": scheduled.id, "interval_number": 1,
                              "interval_type": "days", "nextcall": "2099-01-01 00:00:00"}})
for pace in {paces!r}:
    env["res.partner"].create([{{"name": f"Turn {{pace}} {{i:03d}}", "city": "Gent"}} for i in range({pairs} * 2)])
env["res.partner"].create([{{"name": f"Batch {{i:03d}}", "city": "Batchville"}} for i in range({records})])
env["res.partner"].create([{{"name": f"Profile {{i:03d}}", "city": "Gent"}} for i in range({profiled})])
env.cr.commit()
print("SETUP " + json.dumps({{"user": user.id, "assistant": assistant.id, "button": button.id, "cron": cron.id}}))
"""

PER_RECORD = r"""
import json, statistics, time
from odoo import SUPERUSER_ID, api
from odoo.addons.ai_mcp.models.discuss_channel import Outcome

TURNS, WARMUP, PROFILE = {turns}, {warmup}, {profile}
registry = env.registry
user = env["res.users"].search([("login", "=", "bench_flows")])
assistant = env["ai.assistant"].search([("name", "=", "Greeter")])
button = env["ir.actions.server"].search([("name", "=", "Welcome call")])
context = {{"lang": "en_US", "tz": "UTC"}}
partners = env["res.partner"].search([("name", "=like", "Turn {pace} %")], order="name")
chats, runs = list(partners[0::2]), list(partners[1::2])
extra = list(env["res.partner"].search([("name", "=like", "Profile %")]))


def chat(partner):
    text = f"Draft a welcome call for {{partner.name}} of {{partner.city}}."
    start = time.perf_counter()
    with registry.cursor() as cr:  # the chat route's request, committed before the turn streams
        turn = api.Environment(cr, user.id, context)["ai.conversation"]._chat_send(
            assistant.id, text, res_model="res.partner", res_id=partner.id
        )
    outcome = Outcome.of(turn)
    elapsed = time.perf_counter() - start
    assert outcome.final is not None and outcome.final.type == "done" and len(outcome.calls) == 1, outcome
    return elapsed


def run(partner):
    start = time.perf_counter()
    with registry.cursor() as cr:  # the button's request: it only queues
        action = api.Environment(cr, user.id, context)["ir.actions.server"].browse(button.id)
        action.with_context(active_model="res.partner", active_id=partner.id, active_ids=partner.ids).run()
    with registry.cursor() as cr:  # what the queue's cron calls: it runs until none is left
        done = api.Environment(cr, SUPERUSER_ID, {{}})["ai.assistant.run"]._cron_run()
    elapsed = time.perf_counter() - start
    assert done == 1
    return elapsed


times = {{"chat": [], "run": []}}
for index in range(TURNS + WARMUP):
    order = (("chat", chat), ("run", run)) if index % 2 else (("run", run), ("chat", chat))
    for name, measure in order:
        elapsed = measure((chats if name == "chat" else runs)[index])
        if index >= WARMUP:
            times[name].append(elapsed)
if PROFILE:
    import cProfile, io, pstats
    for name, measure, records in (("run", run, extra[0::2]), ("chat", chat, extra[1::2])):
        profile = cProfile.Profile()
        profile.enable()
        for partner in records:
            measure(partner)
        profile.disable()
        out = io.StringIO()
        ours = r"ai_mcp|odoo/(models|fields|sql_db|api)\.py"
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(ours, 45)
        print(f"PROFILE {{name}} ({{len(records)}} records)\n" + out.getvalue())
with registry.cursor() as cr:  # a cursor of its own: the shell's saw the database before the runs
    check = api.Environment(cr, SUPERUSER_ID, {{}})
    failed = check["ai.assistant.run"].search_count([("state", "!=", "done")])
    noted = check["mail.message"].search_count(
        [("model", "=", "res.partner"), ("res_id", "in", [p.id for p in runs[WARMUP:TURNS + WARMUP]]),
         ("body", "ilike", "2 + 3 = 5")]
    )
print("FIGURES " + json.dumps({{
    "run_ms": statistics.median(times["run"]) * 1000,
    "chat_ms": statistics.median(times["chat"]) * 1000,
    "runs_not_done": failed,
    "runs_noted": noted,
}}))
"""


def sql(server: OdooServer, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", server.db, "-c", query]
    return subprocess.run(command, capture_output=True, text=True, check=True, env=server.environ()).stdout.strip()


def commits(server: OdooServer) -> int:
    return int(sql(server, f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{server.db}'"))


def batch(server: OdooServer, cron: int, records: int) -> dict:
    """Triggers the scheduled action as "Run Manually" does and waits for its last record."""
    server.start("batch", extra=DEFAULT_CRON)
    admin = WebClient(server.url, server.db, "admin", "admin")
    before = commits(server)
    start = time.perf_counter()
    admin.call("ir.cron", "method_direct_trigger", [cron])
    left = "SELECT count(*) FROM ai_assistant_run WHERE state IN ('queued', 'running')"
    while int(sql(server, left)) and time.perf_counter() - start < BATCH_TIMEOUT:
        time.sleep(0.5)
    elapsed = time.perf_counter() - start
    time.sleep(1)  # PostgreSQL's statistics are sent at most every 500 ms
    done = int(
        sql(
            server,
            "SELECT count(*) FROM ai_assistant_run WHERE state = 'done' AND res_id IN "
            "(SELECT id FROM res_partner WHERE city = 'Batchville')",
        )
    )
    return {
        "batch_records": done,
        "batch_seconds": elapsed,
        "records_per_minute": done / elapsed * 60,
        "commits_per_record": (commits(server) - before) / max(done, 1),
        "batch_errors": len(server.log_errors()),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30, help="measured turns of each (after warm-up ones)")
    parser.add_argument("--records", type=int, default=200, help="contacts of the scheduled batch (0: no batch)")
    parser.add_argument("--profile", action="store_true", help="also print the profile of 10 runs and 10 chat turns")
    options = parser.parse_args()
    server = OdooServer("flows", ready_timeout=600)
    mcp = HttpServer("streamable-http").start()
    try:
        responder = Responder()
        with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
            print(f"installing ai_mcp into {server.db} (Odoo {server.series}) ...", flush=True)
            server.install()
            setup = server.shell(
                SETUP.format(
                    llm_url=llm.base_url,
                    mcp_url=mcp.url,
                    api_key=API_KEY,
                    pairs=options.turns + WARMUP,
                    paces=tuple(PACED),
                    records=options.records,
                    profiled=20 if options.profile else 0,
                )
            )
            ids = _line(setup, "SETUP ")
            figures = {}
            for pace, timing in PACED.items():
                print(f"per record, model {pace}: {options.turns} runs and {options.turns} chat turns ...", flush=True)
                responder.pace = timing
                profile = options.profile and timing is None
                output = server.shell(PER_RECORD.format(turns=options.turns, warmup=WARMUP, profile=profile, pace=pace))
                if profile:
                    print(output[output.index("PROFILE ") : output.index("FIGURES ")])
                measured = _line(output, "FIGURES ")
                suffix = "" if timing else "_instant"
                figures.update({f"{key}{suffix}": value for key, value in measured.items()})
            responder.pace = None
            if options.records:
                print(f"batch: {options.records} records on Odoo's default cron settings ...", flush=True)
                figures.update(batch(server, ids["cron"], options.records))
    finally:
        mcp.stop()
        server.close()
    figures["run_ratio"] = round(figures["run_ms"] / figures["chat_ms"], 2)
    figures["run_ratio_instant"] = round(figures["run_ms_instant"] / figures["chat_ms_instant"], 2)
    figures["run_added_ms"] = round(figures["run_ms_instant"] - figures["chat_ms_instant"], 1)
    noted = all(
        figures[f"runs_not_done{suffix}"] == 0 and figures[f"runs_noted{suffix}"] == options.turns
        for suffix in ("", "_instant")
    )
    goals = {
        f"run_ratio <= {GOAL_RATIO}": figures["run_ratio"] <= GOAL_RATIO,
        "every run done, its answer noted": noted,
        "every record of the batch answered": figures.get("batch_records", 0) == options.records,
    }
    for goal, met in goals.items():
        print(f"{'met' if met else 'MISSED'}: {goal}")
    print(" ".join(f"{key}={round(value, 2) if isinstance(value, float) else value}" for key, value in figures.items()))
    return 0 if all(goals.values()) else 1


def _line(output: str, prefix: str) -> dict:
    line = next((ln for ln in output.splitlines() if ln.startswith(prefix)), None)
    if line is None:
        print(output[-3000:])
        raise SystemExit(1)
    return json.loads(line[len(prefix) :])


if __name__ == "__main__":
    sys.exit(main())
