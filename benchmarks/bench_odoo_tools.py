"""This Odoo's tools against Odoo's own ORM calls for the same query, on a large database.

    python benchmarks/bench_odoo_tools.py [--partners 100000] [--accounts 200000] [--runs 30]
        installs ai_mcp (no demo data) into a new database of the Odoo the scripts find (Odoo 18, or
        19 with AI_MCP_ODOO_SERIES=19), fills it in SQL with --partners contacts (res.partner) and
        --accounts bank accounts (res.partner.bank: base's own model with many rows, since account
        move lines need the accounting app, which ai_mcp does not depend on), then measures in one
        `odoo-bin shell`, as an internal user (not a superuser: her rules apply) of an assistant
        given both models:

  search      odoo_search (a name domain, three fields, 20 rows and the total count) through the
              executor a turn uses (a cursor of its own), a call after the turn's first, against
              search_read + search_count on a cursor of its own: p95 of each and their ratio (goal:
              search_ratio <= 1.2); first_search: the first call of a turn (a new executor, which
              reads the assistant's lines and describes the fields it names), p95 without a goal
  aggregate   odoo_aggregate (bank accounts counted by bank, in SQL) against _read_group for the
              same groups: p95 and ratio (goal: aggregate_ratio <= 1.2)
  queries     SQL queries of one call of each tool through the executor, and of Odoo's own calls
              (goal: the aggregate's do not grow with the rows: no query per record)
  bytes       what the model reads of a search asking 200 rows of every list column (goal: <= 16 KB)

The database is dropped at the end. The last line holds the figures as key=value pairs; the exit
status is 1 when a goal is missed.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testing.odoo_http import OdooServer  # noqa: E402

GOAL_RATIO = 1.2
GOAL_BYTES = 16_000

SCRIPT = r"""
import json, statistics, time
from odoo import api, sql_db
from odoo.addons.ai_mcp.odoo_tools import OdooTools

PARTNERS, ACCOUNTS, RUNS = {partners}, {accounts}, {runs}
cr = env.cr
cr.execute("SELECT count(*) FROM res_partner")
if cr.fetchone()[0] < PARTNERS:
    cr.execute(
        "INSERT INTO res_partner (name, complete_name, email, city, active, type, is_company, create_date, write_date) "
        "SELECT 'Bench ' || i, 'Bench ' || i, 'p' || i || '@example.com', 'City ' || (i %% 500), true, 'contact', "
        "false, now(), now() FROM generate_series(1, %s) i",
        (PARTNERS,),
    )
    banks = env["res.bank"].create([{{"name": f"Bank {{i}}"}} for i in range(12)])
    cr.execute("SELECT min(id) FROM res_partner WHERE name LIKE 'Bench %%'")
    first = cr.fetchone()[0]
    cr.execute(
        "INSERT INTO res_partner_bank "
        "(acc_number, sanitized_acc_number, partner_id, bank_id, active, create_date, write_date) "
        "SELECT 'ACC' || i, 'ACC' || i, %s + (i %% %s), (%s)[1 + i %% 12], true, now(), now() "
        "FROM generate_series(1, %s) i",
        (first, PARTNERS, banks.ids, ACCOUNTS),
    )
    cr.execute("ANALYZE res_partner; ANALYZE res_partner_bank")
user = env["res.users"].search([("login", "=", "bench")]) or env["res.users"].create(
    {{"name": "Bench", "login": "bench", ("groups_id" if "groups_id" in env["res.users"]._fields else "group_ids"):
      [(6, 0, [env.ref("base.group_user").id, env.ref("ai_mcp.group_ai_user").id])]}}
)
provider = env["ai.provider"].create(
    {{"name": "Bench", "base_url": "http://127.0.0.1:9/v1", "api_key": "x", "default_model": "m"}}
)
assistant = env["ai.assistant"].create({{
    "name": "Bench", "provider_id": provider.id,
    "mcp_server_ids": [(6, 0, env.ref("ai_mcp.mcp_server_this_odoo").ids)],
    "odoo_access_ids": [(0, 0, {{"model_id": env.ref("base.model_res_partner").id}}),
                        (0, 0, {{"model_id": env.ref("base.model_res_partner_bank").id}})],
}})
cr.commit()
registry = env.registry
context = {{"lang": "en_US", "tz": "UTC", "allowed_company_ids": user.company_id.ids}}
tools = OdooTools(registry, user.id, context, assistant.id)
SEARCH = {{
    "model": "res.partner", "domain": [["name", "ilike", "Bench 12"]], "fields": ["name", "email", "city"], "limit": 20
}}
AGGREGATE = {{"model": "res.partner.bank", "domain": [], "groupby": ["bank_id"], "aggregates": ["__count"]}}

def own_search():
    with registry.cursor() as cr2:
        model = api.Environment(cr2, user.id, context)["res.partner"]
        domain = [("name", "ilike", "Bench 12")]
        model.search_read(domain, ["name", "email", "city"], limit=20)
        model.search_count(domain)

def own_aggregate():
    with registry.cursor() as cr2:
        model = api.Environment(cr2, user.id, context)["res.partner.bank"]
        [(bank.display_name, count) for bank, count in model._read_group([], ["bank_id"], ["__count"])]

def p95s(*runs):
    # each of `runs` in turn in each round: a load that comes and goes on the machine weighs on all alike
    times = [[] for _ in runs]
    for _ in range(RUNS):
        for run, taken in zip(runs, times):
            start = time.perf_counter()
            run()
            taken.append(time.perf_counter() - start)
    return [sorted(taken)[int(0.95 * (len(taken) - 1))] * 1000 for taken in times]

def first_search():
    OdooTools(registry, user.id, context, assistant.id).call("odoo_search", SEARCH)

def queries(run):
    before = sql_db.sql_counter  # every query of this process (the shell runs no other thread)
    run()
    return sql_db.sql_counter - before

for _ in range(3):  # warm the caches of both, as a running server has them
    tools.call("odoo_search", SEARCH); own_search(); tools.call("odoo_aggregate", AGGREGATE); own_aggregate()
figures = {{}}
figures["search_p95_ms"], figures["own_search_p95_ms"], figures["first_search_p95_ms"] = p95s(
    lambda: tools.call("odoo_search", SEARCH), own_search, first_search
)
figures["aggregate_p95_ms"], figures["own_aggregate_p95_ms"] = p95s(
    lambda: tools.call("odoo_aggregate", AGGREGATE), own_aggregate
)
figures["search_queries"] = queries(lambda: tools.call("odoo_search", SEARCH))
figures["own_search_queries"] = queries(own_search)
figures["first_search_queries"] = queries(first_search)
figures["aggregate_queries"] = queries(lambda: tools.call("odoo_aggregate", AGGREGATE))
figures["own_aggregate_queries"] = queries(own_aggregate)
big = tools.call("odoo_search", {{"model": "res.partner", "domain": [], "limit": 200}})
figures["bytes_to_model"] = len(big.text_for_model().encode())
figures["aggregate_ok"] = not tools.call("odoo_aggregate", AGGREGATE).is_error
print("FIGURES " + json.dumps(figures))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partners", type=int, default=100_000)
    parser.add_argument("--accounts", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    server = OdooServer("odoo-tools", ready_timeout=600)
    try:
        print(f"installing ai_mcp into {server.db} (Odoo {server.series}) ...", flush=True)
        server.install()
        output = server.shell(SCRIPT.format(partners=options.partners, accounts=options.accounts, runs=options.runs))
    finally:
        server.close()
    line = next((ln for ln in output.splitlines() if ln.startswith("FIGURES ")), None)
    if line is None:
        print(output[-3000:])
        return 1
    figures = json.loads(line[len("FIGURES ") :])
    figures["search_ratio"] = round(figures["search_p95_ms"] / figures["own_search_p95_ms"], 2)
    figures["first_search_ratio"] = round(figures["first_search_p95_ms"] / figures["own_search_p95_ms"], 2)
    figures["aggregate_ratio"] = round(figures["aggregate_p95_ms"] / figures["own_aggregate_p95_ms"], 2)
    goals = {
        "search_ratio <= 1.2": figures["search_ratio"] <= GOAL_RATIO,
        "aggregate_ratio <= 1.2": figures["aggregate_ratio"] <= GOAL_RATIO,
        "bytes_to_model <= 16000": figures["bytes_to_model"] <= GOAL_BYTES,
        "aggregate answered": figures["aggregate_ok"],
    }
    for goal, met in goals.items():
        print(f"{'met' if met else 'MISSED'}: {goal}")
    print(" ".join(f"{key}={round(value, 2) if isinstance(value, float) else value}" for key, value in figures.items()))
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
