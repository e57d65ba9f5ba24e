"""Many turns at once charged to the same budgets, in a real Odoo: threaded, then the gevent worker.

Two users of one company send 20 turns at the same moment (each one HTTP stream, as the chat widget
sends it, answered by one model call); every model call is charged to the company's budget, and
the first user's calls to his own budget too. None of the budgets is near its amount: a budget
must never turn load into failed turns. Every turn ends with its answer, and each budget's
counter holds exactly the usage rows charged to it (none lost, none counted twice).

Conditions are waited for with generous deadlines; no duration is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.scripted_llm import ScriptedLLM, Turn  # noqa: E402

API_KEY = "budget-load-key"
TURNS = 20
WAIT = 180
# 2.50 per million input tokens: a call of 40,000 tokens costs 0.10
CALL_TOKENS = 40_000


def responder(_body: dict) -> Turn:
    """The answer, at once: the turns' charges come as close together as they can."""
    return Turn(text="Done.", usage={"prompt_tokens": CALL_TOKENS, "completion_tokens": 0, "total_tokens": CALL_TOKENS})


@pytest.fixture(scope="module")
def odoo() -> Iterator[dict]:
    """The database, configured once on a threaded Odoo left running for the first test."""
    try:
        server = OdooServer("budget-load", ready_timeout=600)  # a busy machine starts Odoo slowly
    except OdooNotFound as exc:
        pytest.skip(str(exc))
    with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
        try:
            server.install()
            server.start("threaded")
            yield {"server": server, "setup": _configure(server, llm)}
        finally:
            server.close()


def _configure(server: OdooServer, llm: ScriptedLLM) -> dict:
    admin = WebClient(server.url, server.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    admin.call("ai.provider.model", "create", {"provider_id": provider, "name": "scripted", "price_input": 2.5})
    assistant = admin.call("ai.assistant", "create", {"name": "Work", "provider_id": provider})
    users = [create_ai_user(admin, login) for login in ("load_one", "load_two")]
    company = admin.call("ai.budget", "create", {"name": "Company", "scope": "company", "amount": 1000.0})
    own = admin.call(
        "ai.budget",
        "create",
        {"name": "Own", "scope": "user", "user_id": users[0], "unit": "tokens", "amount": 1e9},
    )
    clients = [WebClient(server.url, server.db, login, login) for login in ("load_one", "load_two")]
    return {"admin": admin, "assistant": assistant, "users": users, "clients": clients, "budgets": (company, own)}


def sql(server: OdooServer, query: str) -> list[list[str]]:
    command = ["psql", "-X", "-At", "-F", "|", "-d", server.db, "-c", query]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    return [line.split("|") for line in out.splitlines()]


def _turns_at_once(setup: dict, port: int | None) -> list[dict]:
    runs: list[dict] = [{} for _ in range(TURNS)]
    start = threading.Barrier(TURNS)

    def one(index: int) -> None:
        client = setup["clients"][index % 2]
        start.wait(WAIT)
        runs[index] = client.stream(
            {"assistant_id": setup["assistant"], "message": f"turn {index}"}, port=port, timeout=WAIT
        )

    threads = [threading.Thread(target=one, args=(i,)) for i in range(TURNS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    return runs


def _assert_all_answered_and_charged(odoo: dict, runs: list[dict]) -> None:
    server, setup = odoo["server"], odoo["setup"]
    ends = [(r.get("status"), r.get("error"), r["events"][-1][1].data if r.get("events") else None) for r in runs]
    failed = [
        end
        for end, run in zip(ends, runs, strict=True)
        if not run.get("events") or run["events"][-1][1].event != "done"
    ]
    assert not failed, f"{len(failed)} of {TURNS} turns failed: {failed[:3]}"
    conversations = [run["events"][0][1].data["conversation_id"] for run in runs]
    calls = sql(server, f"SELECT count(*) FROM ai_usage WHERE conversation_id IN ({','.join(map(str, conversations))})")
    assert int(calls[0][0]) == TURNS, "every model call has its usage row"
    company, own = setup["budgets"]
    counters = dict(sql(server, "SELECT budget_id, spent FROM ai_budget_period"))
    usage_cost, usage_tokens = sql(
        server, f"SELECT sum(cost), sum(total_tokens) FILTER (WHERE user_id = {setup['users'][0]}) FROM ai_usage"
    )[0]
    assert Decimal(counters[str(company)]) == Decimal(usage_cost), "the company's counter holds every call's cost"
    assert Decimal(counters[str(own)]) == Decimal(usage_tokens), "the user's counter holds every one of his calls"
    assert not server.log_errors(), server.log_errors()[:3]


def test_twenty_turns_at_once_on_shared_budgets_all_answer_threaded(odoo: dict) -> None:
    _assert_all_answered_and_charged(odoo, _turns_at_once(odoo["setup"], None))


def test_twenty_turns_at_once_on_shared_budgets_all_answer_in_the_gevent_worker(odoo: dict) -> None:
    server = odoo["server"]
    server.stop()
    server.start("prefork", workers=2)
    _assert_all_answered_and_charged(odoo, _turns_at_once(odoo["setup"], server.gevent_port))
