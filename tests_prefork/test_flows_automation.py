"""An automation rule on a new lead runs an assistant that drafts an activity with a tool, in Odoo's
own flow: the CRM and Automation Rules apps installed beside ai_mcp, a salesman making a lead over
JSON-RPC as the web client does, the rule's server action "Run an AI Assistant" queueing the run as
her, Odoo's own cron thread (woken by the queue's trigger) running it, the scripted model calling a
real MCP tool on 127.0.0.1.

Conditions are waited for with generous deadlines; no duration is asserted.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testing.mcp_servers import HttpServer  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "flows-automation-key"
WAIT = 300
ANSWER = "Call them this week: 2 + 3 = 5 days since the request."


def responder(body: dict) -> Turn:
    """Adds 2 and 3 with the tool, then drafts the call."""
    if not any(message.get("role") == "tool" for message in body.get("messages") or []):
        return Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),))
    return Turn(text=ANSWER)


@pytest.fixture(scope="module")
def ctx() -> Iterator[dict]:
    try:
        server = OdooServer("flows-automation", ready_timeout=600)  # a busy machine starts Odoo slowly
    except OdooNotFound as exc:
        missing(str(exc))
    mcp = HttpServer("streamable-http").start()
    try:
        with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
            server.install("crm", "base_automation")
            # Odoo's cron thread runs the queue, woken by the trigger the run's request leaves
            server.start("rule", extra=("--max-cron-threads=1",))
            yield {"server": server, **_configure(server, llm, mcp)}
    finally:
        server.close()
        mcp.stop()


def _configure(server: OdooServer, llm: ScriptedLLM, mcp: HttpServer) -> dict:
    admin = WebClient(server.url, server.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    tools = admin.call("mcp.server", "create", {"name": "Calculator", "scope": "system", "url": mcp.url})
    admin.call("mcp.server", "action_sync_tools", [tools])
    add = admin.call("mcp.tool", "search", [("server_id", "=", tools), ("name", "=", "add")])
    assistant = admin.call(
        "ai.assistant", "create", {"name": "Lead helper", "provider_id": provider, "mcp_server_ids": [(6, 0, [tools])]}
    )
    salesman = create_ai_user(admin, "rule_salesman", "Sally Salesman")
    crm_group = admin.call(
        "ir.model.data",
        "search_read",
        [("module", "=", "sales_team"), ("name", "=", "group_sale_salesman")],
        ["res_id"],
    )[0]["res_id"]
    admin.call("res.users", "write", [salesman], {admin.groups_field: [(4, crm_group)]})
    lead_model = admin.call("ir.model", "search", [("model", "=", "crm.lead")])[0]
    rule = admin.call(
        "base.automation", "create", {"name": "New lead: first call", "model_id": lead_model, "trigger": "on_create"}
    )
    action = admin.call(
        "ir.actions.server",
        "create",
        {
            "name": "Draft a first call",
            "model_id": lead_model,
            "usage": "base_automation",
            "base_automation_id": rule,
            "state": "ai_assistant",
            "ai_assistant_id": assistant,
            "ai_instruction": "Draft a first call for {{ object.name }}.",
            "ai_answer_to": "activity",
            "ai_tool_ids": [(6, 0, add)],
        },
    )
    return {"admin": admin, "salesman": salesman, "action": action, "add": add[0]}


def wait_for(found: Callable[[], Any], what: str, log: Path) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"{what}: not reached within {WAIT} s; log {log}")


@pytest.mark.timeout(1800)
def test_a_new_lead_gets_a_first_call_drafted_with_a_tool_as_the_salesman(ctx: dict) -> None:
    server: OdooServer = ctx["server"]
    admin: WebClient = ctx["admin"]
    sally = WebClient(server.url, server.db, "rule_salesman", "rule_salesman")
    lead = sally.call("crm.lead", "create", {"name": "Acme wants 40 desks", "type": "opportunity"})

    runs = admin.call("ai.assistant.run", "search_read", [("res_model", "=", "crm.lead"), ("res_id", "=", lead)], [])
    assert len(runs) == 1, "the rule queued one run for the new lead"
    assert runs[0]["user_id"][0] == ctx["salesman"], "it runs as the salesman whose lead fired the rule"

    def activity() -> list[dict]:
        return sally.call(
            "mail.activity", "search_read", [("res_model", "=", "crm.lead"), ("res_id", "=", lead)], ["note", "user_id"]
        )

    drafted = wait_for(activity, "the activity drafted by the assistant", server.log)
    assert "2 + 3 = 5" in drafted[0]["note"], drafted
    assert drafted[0]["user_id"][0] == ctx["salesman"], "the activity is hers"

    run = admin.call("ai.assistant.run", "read", [runs[0]["id"]], ["state", "conversation_id"])[0]
    assert run["state"] == "done", run
    calls = admin.call(
        "ai.tool.call",
        "search_read",
        [("conversation_id", "=", run["conversation_id"][0])],
        ["tool_id", "status", "user_id"],
    )
    assert [(c["tool_id"][0], c["status"], c["user_id"][0]) for c in calls] == [(ctx["add"], "ok", ctx["salesman"])], (
        "the listed tool ran once, as her, without anyone to approve it"
    )
