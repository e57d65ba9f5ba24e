"""Two turns charged to one nearly spent budget at once, in two Odoo processes.

testing/odoo_cluster.py starts two prefork nodes behind nginx on one database; two users of one
company, each on a node, start a turn of many rounds at the same moment while their company's
budget has little left. The counter of the budget (one row per period, raised by an atomic UPDATE
in each node's turn writer) must hold every charge, each turn may go over the budget by one round
at most, both users are told why their answer stopped, and the 80% warning is given once.

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

from testing.mcp_servers import serve_http  # noqa: E402
from testing.odoo_cluster import NginxNotFound, OdooCluster  # noqa: E402
from testing.odoo_http import OdooNotFound, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "budget-race-key"
A, B = 0, 1
WAIT = 120
# 2.50 per million input tokens: a round of 40,000 tokens costs 0.10
ROUND_TOKENS = 40_000
ROUND_COST = Decimal("0.10")
BUDGET = Decimal("1.00")
# what the users had spent before: 0.75, under the 80% warning
BEFORE_TOKENS = 300_000
ROUNDS_WANTED = 8


def reported(prompt: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt}


def responder(body: dict) -> Turn:
    """`spend N`: an answer of N input tokens; `rounds`: an echo call per round, ROUNDS_WANTED
    times, each ROUND_TOKENS, then the answer."""
    messages = body.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    asked = messages[last_user]["content"]
    if asked.startswith("spend "):
        return Turn(text="Spent.", usage=reported(int(asked.split()[1])))
    results = [m for m in messages[last_user:] if m.get("role") == "tool"]
    if len(results) >= ROUNDS_WANTED:
        return Turn(text="Done.", usage=reported(ROUND_TOKENS))
    echo = next(t["function"]["name"] for t in body.get("tools") or [] if "echo" in t["function"]["name"])
    return Turn(tool_calls=(ToolCall(echo, {"text": f"round {len(results) + 1}"}),), usage=reported(ROUND_TOKENS))


@pytest.fixture(scope="module")
def ctx() -> Iterator[dict]:
    try:
        cluster = OdooCluster("budget-race", nodes=2)
    except (OdooNotFound, NginxNotFound) as exc:
        missing(str(exc))
    with (
        ScriptedLLM(responder=responder, api_key=API_KEY) as llm,
        serve_http("streamable-http", "--name", "work") as work,
    ):
        try:
            cluster.start()
            yield _configure(cluster, llm, work.url)
        finally:
            errors = cluster.log_errors()
            cluster.close()
    assert not errors, f"ERROR lines in the nodes' logs: {errors[:3]}"


def _configure(cluster: OdooCluster, llm: ScriptedLLM, url: str) -> dict:
    admin = WebClient(cluster.url, cluster.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    admin.call("ai.provider.model", "create", {"provider_id": provider, "name": "scripted", "price_input": 2.5})
    server = admin.call("mcp.server", "create", {"name": "Work", "scope": "system", "url": url})
    admin.call("mcp.server", "action_sync_tools", [server])
    tools = admin.call("mcp.tool", "search", [("server_id", "=", server)])
    admin.call("mcp.tool", "write", tools, {"requires_approval": False})
    assistant = admin.call(
        "ai.assistant",
        "create",
        {"name": "Work", "provider_id": provider, "mcp_server_ids": [(6, 0, [server])], "max_rounds": 20},
    )
    budget = admin.call("ai.budget", "create", {"name": "Company", "scope": "company", "amount": float(BUDGET)})
    users = []
    for login in ("race_one", "race_two"):
        create_ai_user(admin, login)
        users.append(WebClient(cluster.url, cluster.db, login, login))
    return {"cluster": cluster, "admin": admin, "assistant": assistant, "budget": budget, "users": users}


def sql(ctx: dict, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", ctx["cluster"].db, "-c", query]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def events_of(run: dict) -> list:
    return [event for _t, event in run["events"]]


def test_two_turns_on_a_nearly_spent_budget_each_go_over_by_one_round_at_most(ctx: dict) -> None:
    one, two = ctx["users"]
    cluster = ctx["cluster"]
    before = one.with_headers(cluster.pin(A)).stream(
        {"assistant_id": ctx["assistant"], "message": f"spend {BEFORE_TOKENS}"}, timeout=WAIT
    )
    assert events_of(before)[-1].event == "done", before["error"]
    assert not [e for e in events_of(before) if e.event == "warning"], "75% is under the warning"

    runs: dict[int, dict] = {}
    start = threading.Barrier(2)

    def turn(index: int, client: WebClient) -> None:
        start.wait(WAIT)
        runs[index] = client.stream({"assistant_id": ctx["assistant"], "message": "rounds"}, timeout=WAIT)

    threads = [
        threading.Thread(target=turn, args=(A, one.with_headers(cluster.pin(A)))),
        threading.Thread(target=turn, args=(B, two.with_headers(cluster.pin(B)))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert set(runs) == {A, B}
    for index, run in runs.items():
        assert run["status"] == 200, run["error"]
        assert cluster.served_by(run["headers"])[0] == index
        last = events_of(run)[-1]
        assert (last.event, last.data["code"]) == ("error", "BUDGET_SPENT"), last.data
        assert "“Company”" in last.data["message"], "both users are told which budget stopped them"

    warnings = [e.data for run in runs.values() for e in events_of(run) if e.event == "warning"]
    assert [w["code"] for w in warnings] == ["BUDGET_NEAR"], "one warning for the two turns"

    conversations = [events_of(run)[0].data["conversation_id"] for run in runs.values()]
    rows = ctx["admin"].call(
        "ai.usage", "search_read", [("conversation_id", "in", conversations)], ["conversation_id", "cost"], order="id"
    )
    per_turn = {c: [Decimal(str(r["cost"])) for r in rows if r["conversation_id"][0] == c] for c in conversations}
    assert all(1 <= len(costs) < ROUNDS_WANTED for costs in per_turn.values()), per_turn
    spent_before = Decimal(BEFORE_TOKENS) * Decimal("2.5") / 1_000_000
    total = spent_before + sum(sum(costs) for costs in per_turn.values())
    # every charge is in the counter: none was lost to the other process's
    counter = Decimal(sql(ctx, f"SELECT spent FROM ai_budget_period WHERE budget_id = {ctx['budget']}"))
    assert counter == total
    assert total >= BUDGET
    # each turn on its own: at most one of its rounds was charged once the budget was spent (the
    # rows are in the order of their charges: each row is written after its charge, under the
    # counter's lock)
    spent, after_spent = spent_before, dict.fromkeys(conversations, 0)
    for row in rows:
        if spent >= BUDGET:
            after_spent[row["conversation_id"][0]] += 1
        spent += Decimal(str(row["cost"]))
    assert all(count <= 1 for count in after_spent.values()), f"rounds charged to a spent budget: {after_spent}"

    # and the next turn is refused before it starts
    refused = one.with_headers(cluster.pin(B)).stream({"assistant_id": ctx["assistant"], "message": "rounds"})
    assert refused["status"] == 402 and "BUDGET_SPENT" in refused["error"]
