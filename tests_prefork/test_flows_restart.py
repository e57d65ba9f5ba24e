"""A scheduled server action "Run an AI Assistant" over 200 contacts, its Odoo killed half-way
and started again: every contact is answered once, none twice.

A real Odoo process (threaded, with one cron thread, as Odoo's default settings) runs the queue;
it is killed with SIGKILL while runs are under way, and a new process on the same database goes on
from the runs it left. Conditions are waited for with generous deadlines; no duration is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, Turn  # noqa: E402

API_KEY = "flows-restart-key"
RECORDS = 200
WAIT = 600
CRON = ("--max-cron-threads=1",)


def responder(body: dict) -> Turn:
    """Each contact's answer names it, a little slowly: the kill finds runs under way."""
    asked = [m for m in body.get("messages") or [] if m.get("role") == "user"][-1]["content"]
    return Turn(text=f"Welcome, {asked.rsplit(' ', 1)[-1]}", latency=0.05)


@pytest.fixture(scope="module")
def ctx() -> Iterator[dict]:
    try:
        server = OdooServer("flows-restart", ready_timeout=600)  # a busy machine starts Odoo slowly
    except OdooNotFound as exc:
        missing(str(exc))
    with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
        try:
            server.install()
            server.start("first", extra=CRON)
            yield {"server": server, **_configure(server, llm)}
        finally:
            server.close()


def _configure(server: OdooServer, llm: ScriptedLLM) -> dict:
    admin = WebClient(server.url, server.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    assistant = admin.call("ai.assistant", "create", {"name": "Greeter", "provider_id": provider})
    user = create_ai_user(admin, "flows_batch")
    admin.call("res.partner", "create", [{"name": f"Batch{i:03d}", "city": "Batchville"} for i in range(RECORDS)])
    model = admin.call("ir.model", "search", [("model", "=", "res.partner")])[0]
    action = admin.call(
        "ir.actions.server",
        "create",
        {
            "name": "Greet",
            "model_id": model,
            "state": "ai_assistant",
            "ai_assistant_id": assistant,
            "ai_instruction": "Greet {{ object.name }}",
            "ai_run_as": "user",
            "ai_run_user_id": user,
            "ai_domain": "[('city', '=', 'Batchville')]",
        },
    )
    cron = admin.call(
        "ir.cron",
        "create",
        # run by hand below: the schedule itself comes round tomorrow
        {
            "name": "Greet all",
            "ir_actions_server_id": action,
            "interval_number": 1,
            "interval_type": "days",
            "nextcall": "2099-01-01 00:00:00",
        },
    )
    return {"admin": admin, "action": action, "cron": cron}


def sql(server: OdooServer, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", server.db, "-c", query]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def wait_for(server: OdooServer, query: str, expected, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if expected(int(sql(server, query) or 0)):
            return
        time.sleep(0.2)
    pytest.fail(f"{what}: not reached within {WAIT} s; log {server.log}")


@pytest.mark.timeout(1800)
def test_a_batch_killed_half_way_finishes_each_record_once(ctx: dict) -> None:
    server: OdooServer = ctx["server"]
    ctx["admin"].call("ir.cron", "method_direct_trigger", [ctx["cron"]])
    assert int(sql(server, "SELECT count(*) FROM ai_assistant_run")) == RECORDS
    done = "SELECT count(*) FROM ai_assistant_run WHERE state = 'done'"
    wait_for(server, done, lambda n: n >= RECORDS // 2, "half of the batch done")

    assert server.process is not None
    server.process.kill()  # as the machine dies: no cleanup of its own
    server.process.wait(30)
    server.process = None
    left = int(sql(server, "SELECT count(*) FROM ai_assistant_run WHERE state <> 'done'"))
    assert left > 0, "killed before the end of the batch"

    server.start("after-kill", extra=CRON)
    wait_for(
        server,
        "SELECT count(*) FROM ai_assistant_run WHERE state IN ('queued', 'running')",
        lambda n: n == 0,
        "the batch finished",
    )
    states = dict(
        line.split("|")
        for line in sql(server, "SELECT state, count(*) FROM ai_assistant_run GROUP BY state").splitlines()
    )
    assert states == {"done": str(RECORDS)}, states
    # each contact answered once: one note from the assistant each, and one conversation each
    notes = sql(
        server,
        "SELECT count(*), count(DISTINCT res_id) FROM mail_message WHERE model = 'res.partner' "
        "AND body LIKE '%Welcome, Batch%'",
    )
    assert notes == f"{RECORDS}|{RECORDS}", notes
    per_record = sql(
        server,
        "SELECT max(n) FROM (SELECT count(*) AS n FROM ai_conversation WHERE res_model = 'res.partner' "
        "AND state = 'idle' AND id IN (SELECT conversation_id FROM ai_assistant_run) GROUP BY res_id) t",
    )
    assert per_record == "1", per_record
    assert not server.log_errors(), server.log_errors()[:3]
