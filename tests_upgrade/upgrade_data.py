"""Run by `odoo-bin shell` (as `env`): what a database of the previous version holds, written
through the previous version's own code, and a snapshot of it read back after an update.

This file runs against old code: a field or method that only some versions have is used only where
the installed version has it (`since()`, `has()`).
"""

import json
from datetime import datetime, timedelta

from odoo.tools.parse_version import parse_version

# bookkeeping an update may touch without losing anything a user made
VOLATILE = {
    "write_date",
    "write_uid",
    "__last_update",
    "message_ids",
    "message_follower_ids",
    "activity_ids",
    "website_message_ids",
    "rating_ids",
    "message_partner_ids",
    "message_is_follower",
}
# a fixed moment, so that what is compared does not depend on when the test ran
LATER = datetime(2031, 5, 4, 3, 2, 1)


def installed_version(env):
    return env["ir.module.module"].sudo().search([("name", "=", "ai_mcp")]).latest_version


def module_version(version):
    """The addon's own part of a version as Odoo stores it ("18.0.1.2.0" and "19.0.1.2.0" are both
    1.2.0): the series is Odoo's."""
    return parse_version(".".join(version.split(".")[2:]))


def since(env, version):
    return module_version(installed_version(env)) >= module_version(version)


def has(env, model, field):
    return model in env and field in env[model]._fields


def module_models(env):
    """The module's own models that hold rows: every one of them is filled and compared."""
    return sorted(
        name
        for name, model in env.registry.items()
        if model._original_module == "ai_mcp" and model._auto and not model._abstract and not model._transient
    )


def populate(env):
    env = env(context=dict(env.context, tracking_disable=True, mail_notrack=True))
    users = make_users(env)
    servers = make_servers(env, users)
    tools = make_tools(env, servers)
    assistants = make_assistants(env, servers, tools)
    make_conversations(env, users, servers, tools, assistants)
    if "ai.usage" in env:
        make_recorded_usage(env, users, assistants)
    if "ai.budget" in env:
        make_budgets(env, users)
    if since(env, "18.0.1.2.0"):
        make_oauth(env, users, servers, assistants)
    if "ai.assistant.run" in env:
        make_assistant_runs(env, users, assistants)
    if "mcp.skill" in env:
        make_host_extensions(env, servers, assistants)
    env.cr.commit()


def make_users(env):
    Users = env["res.users"]
    groups = env.ref("base.group_user") | env.ref("ai_mcp.group_ai_user")
    # renamed in Odoo 19
    groups_id = "groups_id" if has(env, "res.users", "groups_id") else "group_ids"
    owner = Users.create({"name": "Owner", "login": "upgrade_owner", groups_id: [(6, 0, groups.ids)]})
    other = Users.create({"name": "Other", "login": "upgrade_other", groups_id: [(6, 0, groups.ids)]})
    portal = Users.create(
        {"name": "Portal", "login": "upgrade_portal", groups_id: [(6, 0, env.ref("base.group_portal").ids)]}
    )
    if not since(env, "18.0.1.1.0"):
        # a portal user holding the AI role, which only 18.0.1.0.0 allowed (from 18.0.1.1.0 on, the
        # role makes an internal user and Odoo refuses a user with two user types)
        env.cr.execute(
            "INSERT INTO res_groups_users_rel (gid, uid) VALUES (%s, %s)",
            (env.ref("ai_mcp.group_ai_user").id, portal.id),
        )
    Params = env["ir.config_parameter"].sudo()
    # settings an administrator changed: an update keeps them (stdio servers need the first)
    Params.set_param("ai_mcp.allow_stdio", "True")
    Params.set_param("ai_mcp.tool_call_retention_days", "30")
    return {"owner": owner, "other": other, "portal": portal}


def make_servers(env, users):
    """One server of each kind of connection, each with the secrets that kind keeps."""
    Server = env["mcp.server"]
    servers = {
        "bearer": Server.create(
            {"name": "Bearer", "url": "http://127.0.0.1:9/mcp", "auth_type": "bearer", "api_key": "tok-upgrade-2"}
        ),
        "headers": Server.create(
            {
                "name": "Headers",
                "url": "http://127.0.0.1:9/mcp",
                "auth_type": "headers",
                "headers": '{"X-Org": "acme", "X-Key": "k-3"}',
            }
        ),
        "api_key": Server.create(
            {
                "name": "Keyed",
                "transport": "sse",
                "url": "http://127.0.0.1:9/sse",
                "auth_type": "api_key",
                "api_key_header": "X-Token",
                "api_key": "key-upgrade-7",
                "connect_timeout": 12.0,
                "call_timeout": 45.0,
            }
        ),
        "stdio": Server.create(
            {
                "name": "Local",
                "transport": "stdio",
                "command": "/usr/bin/python3",
                "args": "-m\nexample_server\n--verbose",
                "env_vars": '{"API_TOKEN": "env-upgrade-5", "REGION": "eu"}',
                "cwd": "/tmp",
            }
        ),
        "archived": Server.create(
            {"name": "Retired", "url": "http://127.0.0.1:9/old", "auth_type": "bearer", "api_key": "tok-retired-8"}
        ),
    }
    servers["archived"].active = False
    # what a successful connection stored
    servers["bearer"].write(
        {
            "state": "connected",
            "server_name": "upgrade-server",
            "server_version": "1.2.3",
            "protocol_version": "2025-06-18",
            "last_sync": LATER,
            "last_latency_ms": 42,
        }
    )
    servers["stdio"].write({"last_stderr": "started\nlistening on stdio"})
    owner = users["owner"]
    service = env["cloud.service"].with_user(owner).create({"name": "Shop"}).sudo()
    servers["mine"] = (
        env["mcp.server"]
        .with_user(owner)
        .create(
            {
                "name": "Mine",
                "scope": "user",
                "cloud_service_id": service.id,
                "url": "https://93.184.216.34/mcp",
                "auth_type": "bearer",
                "api_key": "tok-owner-4",
            }
        )
        .sudo()
    )
    servers["service"] = service
    return servers


def make_tools(env, servers):
    """The administrator's decisions on tools: approved or changed since, needing approval or not,
    disabled, gone from their server."""
    Tool = env["mcp.tool"]
    bearer = servers["bearer"]
    tools = {
        "search": Tool.create(
            {
                "name": "search",
                "server_id": bearer.id,
                "description": "Search",
                "content_hash": "h1",
                "approved_hash": "h1",
                "input_schema": '{"type": "object", "properties": {"q": {"type": "string"}}}',
            }
        ),
        "read": Tool.create(
            {
                "name": "read_order",
                "title": "Read an order",
                "server_id": bearer.id,
                "description": "Reads one order",
                "content_hash": "h2",
                "approved_hash": "h2",
                "read_only_hint": True,
                "input_schema": '{"type": "object", "properties": {"id": {"type": "integer"}}}',
                "output_schema": '{"type": "object", "properties": {"state": {"type": "string"}}}',
            }
        ),
        "delete": Tool.create(
            {
                "name": "delete_order",
                "server_id": bearer.id,
                "description": "Deletes one order",
                "content_hash": "h3",
                "approved_hash": "h3",
                "destructive_hint": True,
                "requires_approval": True,
            }
        ),
        # its description changed on the server since an administrator approved it
        "changed": Tool.create(
            {
                "name": "export",
                "server_id": bearer.id,
                "description": "Exports everything, now with attachments",
                "content_hash": "h4-new",
                "approved_hash": "h4-old",
            }
        ),
        "disabled": Tool.create(
            {"name": "shell", "server_id": servers["stdio"].id, "content_hash": "h5", "approved_hash": "h5"}
        ),
        "gone": Tool.create(
            {"name": "legacy", "server_id": servers["headers"].id, "content_hash": "h6", "approved_hash": "h6"}
        ),
    }
    # an administrator's choices against the server's hints
    tools["read"].requires_approval = True
    tools["delete"].requires_approval = False
    tools["disabled"].enabled = False
    tools["gone"].active = False
    return tools


def provider_values(env, kind, values):
    """`values` of a provider, with its kind and, on the compatible one, extra headers (a secret)
    and query parameters (a secret since 1.10.0, in clear before) where the version has them; a
    version before kinds classifies it by its URL when updated."""
    fields = env["ai.provider"]._fields
    if "kind" in fields:
        values = {**values, "kind": kind}
    if "extra_headers" in fields and kind == "compatible":
        values = {**values, "extra_headers": '{"X-Tenant": "upgrade-tenant-11"}'}
    if "extra_query" in fields and kind == "compatible":
        values = {**values, "extra_query": '{"gateway_key": "upgrade-query-12"}'}
    return values


def make_assistants(env, servers, tools):
    Provider = env["ai.provider"]
    provider = Provider.create(
        provider_values(
            env,
            "compatible",
            {"name": "Upgrade LLM", "base_url": "https://llm.example.com/v1", "api_key": "sk-upgrade-1"},
        )
    )
    openai = Provider.create(
        provider_values(
            env,
            "openai",
            {
                "name": "Upgrade OpenAI",
                "base_url": "https://api.openai.com/v1",
                "default_model": "o3",
                "api_key": "sk-o",
            },
        )
    )
    env["ai.assistant"].create({"name": "Reasoner", "provider_id": openai.id})
    Provider.create(
        provider_values(
            env,
            "azure",
            {"name": "Upgrade Azure", "base_url": "https://acme.openai.azure.com/openai/v1", "api_key": "sk-az"},
        )
    )
    Assistant = env["ai.assistant"]
    helper = Assistant.create(
        {
            "name": "Helper",
            "provider_id": provider.id,
            "model": "gpt-upgrade",
            "system_prompt": "Be brief.",
            "temperature": 0.3,
            "max_rounds": 4,
            "mcp_server_ids": [(6, 0, [servers["bearer"].id, servers["headers"].id, servers["stdio"].id])],
            "mcp_tool_disabled_ids": [(6, 0, [tools["changed"].id])],
        }
    )
    restricted = Assistant.create(
        {
            "name": "Managers only",
            "provider_id": provider.id,
            "prompted_tools": True,
            "group_ids": [(6, 0, env.ref("ai_mcp.group_ai_manager").ids)],
            "mcp_server_ids": [(6, 0, [servers["api_key"].id])],
        }
    )
    retired = Assistant.create({"name": "Retired", "provider_id": provider.id})
    retired.active = False
    env["ai.tool.preset"].create(
        {"assistant_id": helper.id, "tool_id": tools["search"].id, "arguments": '{"q": "{{user.login}}"}'}
    )
    if "ai.provider.model" in env:
        # the helper's model as a record of its provider (versions with models as records)
        env["ai.provider.model"].create({"provider_id": provider.id, "name": "gpt-upgrade"})
    if "ai.assistant.odoo.access" in env:
        # what the assistants may touch of This Odoo's records (versions with This Odoo)
        Access = env["ai.assistant.odoo.access"]
        Access.create(
            {"assistant_id": helper.id, "model_id": env["ir.model"]._get_id("res.partner"), "access": "write"}
        )
        Access.create({"assistant_id": restricted.id, "model_id": env["ir.model"]._get_id("res.users")})
    return {"helper": helper, "restricted": restricted, "retired": retired, "provider": provider}


def make_conversations(env, users, servers, tools, assistants):
    """A finished conversation with a tool call, one paused for the user's approval of a call, one
    in Discuss, one archived: their messages, tool calls, events and audit rows."""
    owner, helper = users["owner"], assistants["helper"]
    audit = {"user_id": owner.id, "assistant_id": helper.id, "server_id": servers["bearer"].id}
    done = _make_finished_conversation(env, owner, helper, servers["service"], tools, audit)
    paused = _make_paused_conversation(env, owner, helper, tools, audit)
    if "ai.conversation.approval" in env:
        _make_remembered_approvals(env, owner, tools, done, paused)
    _make_archived_conversation(env, owner, helper, tools, audit)
    if hasattr(helper, "_discuss_chat"):
        _make_discuss_chat(env, owner, helper)


def _make_finished_conversation(env, owner, helper, service, tools, audit):
    """Orders: a tool call answered (and one its app made), with its events and audit rows."""
    Conversation, Message = env["ai.conversation"], env["ai.message"]
    done = Conversation.create(
        {"assistant_id": helper.id, "user_id": owner.id, "name": "Orders", "cloud_service_id": service.id}
    )
    first = {"conversation_id": done.id, "role": "user", "content": "Find order 42"}
    if has(env, "ai.message", "request_key"):
        first["request_key"] = "key-upgrade-1"
    Message.create(first)
    Message.create(
        {
            "conversation_id": done.id,
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "42"}}],
        }
    )
    found = {
        "conversation_id": done.id,
        "role": "tool",
        "content": "order 42: shipped",
        "tool_call_id": "c1",
        "tool_name": "search",
        "server_name": "Bearer",
        "arguments": {"q": "42"},
        "status": "done",
        "duration_ms": 12,
    }
    if has(env, "ai.message", "app_context"):
        found["app_context"] = {"title": "Orders", "text": "order 42 selected", "at": "2031-05-04T03:02:01+00:00"}
    Message.create(found)
    if has(env, "ai.message", "app_call_id"):
        Message.create(
            {
                "conversation_id": done.id,
                "role": "user",
                "content": "Show order 42's invoice",
                "app_call_id": "c1",
                "app_title": "Orders",
            }
        )
    Message.create(
        {
            "conversation_id": done.id,
            "role": "assistant",
            "content": "Order 42 has shipped.",
            "rounds": 1,
            "usage": {"input_tokens": 120, "output_tokens": 9},
        }
    )
    for seq, (kind, payload) in enumerate(
        [("start", {"conversation_id": done.id}), ("text", {"delta": "Order 42"}), ("done", {"rounds": 1})],
        start=1,
    ):
        env["ai.conversation.event"].create({"conversation_id": done.id, "seq": seq, "type": kind, "payload": payload})
    _audit_finished_calls(env, done, tools, audit)
    return done


def _audit_finished_calls(env, done, tools, audit):
    """The audit rows of Orders: the model's call, and (versions that record it) one its app made."""
    Call = env["ai.tool.call"]
    Call.create(
        {
            **audit,
            "conversation_id": done.id,
            "tool_id": tools["search"].id,
            "server_name": "Bearer",
            "tool_name": "search",
            "call_id": "c1",
            "status": "ok",
            "duration_ms": 12,
        }
    )
    if has(env, "ai.tool.call", "origin"):
        # a call the app of call c1 made
        Call.create(
            {
                **audit,
                "conversation_id": done.id,
                "tool_id": tools["search"].id,
                "server_name": "Bearer",
                "tool_name": "search",
                "call_id": "c1",
                "origin": "app",
                "status": "ok",
                "duration_ms": 4,
            }
        )


def _make_paused_conversation(env, owner, helper, tools, audit):
    """Clean-up: the model asked for a call that needs the user's approval, and one was denied before."""
    Conversation, Message, Call = env["ai.conversation"], env["ai.message"], env["ai.tool.call"]
    paused = Conversation.create({"assistant_id": helper.id, "user_id": owner.id, "name": "Clean-up"})
    Message.create({"conversation_id": paused.id, "role": "user", "content": "Delete orders 7 and 8"})
    Message.create(
        {
            "conversation_id": paused.id,
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "d7", "name": "delete_order", "arguments": {"id": 7}},
                {"id": "d8", "name": "delete_order", "arguments": {"id": 8}},
            ],
        }
    )
    denied = {
        "conversation_id": paused.id,
        "role": "tool",
        "content": "The user denied this call.",
        "tool_call_id": "d7",
        "tool_name": "delete_order",
        "server_name": "Bearer",
        "arguments": {"id": 7},
        "status": "denied",
        "error_code": "TOOL_DENIED",
    }
    if has(env, "ai.message", "note"):
        denied["note"] = "denied from the chat"
    Message.create(denied)
    Message.create(
        {
            "conversation_id": paused.id,
            "role": "tool",
            "tool_call_id": "d8",
            "tool_name": "delete_order",
            "server_name": "Bearer",
            "arguments": {"id": 8},
            "status": "pending",
        }
    )
    events = [
        ("start", {"conversation_id": paused.id}),
        ("tool_call", {"id": "d7", "name": "delete_order", "arguments": {"id": 7}, "requires_approval": True}),
        ("tool_call", {"id": "d8", "name": "delete_order", "arguments": {"id": 8}, "requires_approval": True}),
        ("approval_required", {"calls": ["d7", "d8"], "turn_ms": 800}),
    ]
    for seq, (kind, payload) in enumerate(events, start=1):
        env["ai.conversation.event"].create(
            {"conversation_id": paused.id, "seq": seq, "type": kind, "payload": payload}
        )
    paused.write({"state": "awaiting_approval", "last_seq": len(events), "rounds_used": 1})
    Call.create(
        {
            **audit,
            "conversation_id": paused.id,
            "tool_id": tools["delete"].id,
            "server_name": "Bearer",
            "tool_name": "delete_order",
            "call_id": "d7",
            "status": "denied",
            "error_code": "TOOL_DENIED",
        }
    )
    return paused


def _make_remembered_approvals(env, owner, tools, done, paused):
    """Tools the user allowed for the rest of a conversation, and for one app in it."""
    Approval = env["ai.conversation.approval"]
    Approval.create(
        {"conversation_id": paused.id, "user_id": owner.id, "tool_id": tools["delete"].id, "scope": "conversation"}
    )
    Approval.create(
        {
            "conversation_id": done.id,
            "user_id": owner.id,
            "tool_id": tools["read"].id,
            "scope": "app",
            "app_uri": "ui://orders/app.html",
        }
    )


def _make_archived_conversation(env, owner, helper, tools, audit):
    """Old: a server's question the user answered, in a conversation since archived."""
    Conversation, Message, Call = env["ai.conversation"], env["ai.message"], env["ai.tool.call"]
    archived = Conversation.create({"assistant_id": helper.id, "user_id": owner.id, "name": "Old"})
    asked = {
        "conversation_id": archived.id,
        "role": "tool",
        "content": "exported",
        "tool_call_id": "e1",
        "tool_name": "export",
        "server_name": "Bearer",
        "status": "error",
        "error_code": "MCP_EXECUTION_ERROR",
        "duration_ms": 3000,
    }
    if has(env, "ai.message", "elicitation_answer"):
        asked["elicitation_answer"] = {"action": "accept", "content": {"format": "csv"}}
    Message.create(asked)
    Call.create(
        {
            **audit,
            "conversation_id": archived.id,
            "tool_id": tools["changed"].id,
            "server_name": "Bearer",
            "tool_name": "export",
            "call_id": "e1",
            "status": "error",
            "error_code": "MCP_EXECUTION_ERROR",
            "duration_ms": 3000,
        }
    )
    archived.active = False


def _make_discuss_chat(env, owner, helper):
    """In Discuss: a chat with the assistant's partner."""
    Conversation, Message = env["ai.conversation"], env["ai.message"]
    channel = helper.with_user(owner)._discuss_chat()
    chat = Conversation.create(
        {"assistant_id": helper.id, "user_id": owner.id, "name": "In Discuss", "channel_id": channel.id}
    )
    Message.create({"conversation_id": chat.id, "role": "user", "content": "Hello"})
    Message.create({"conversation_id": chat.id, "role": "assistant", "content": "Hello! How can I help?"})


def make_recorded_usage(env, users, assistants):
    """A turn whose model calls left their usage rows as it ran (versions with ai.usage): the
    update must not count its answer a second time."""
    owner, helper = users["owner"], assistants["helper"]
    recorded = env["ai.conversation"].create({"assistant_id": helper.id, "user_id": owner.id, "name": "Recorded"})
    Message = env["ai.message"]
    Message.create({"conversation_id": recorded.id, "role": "user", "content": "How many orders?"})
    answer = Message.create(
        {
            "conversation_id": recorded.id,
            "role": "assistant",
            "content": "Seven.",
            "rounds": 1,
            "usage": {"input_tokens": 300, "output_tokens": 4, "total_tokens": 304},
        }
    )
    env.flush_all()
    env["ai.usage"].create(
        {
            "date": answer.create_date,
            "user_id": owner.id,
            "company_id": owner.company_id.id,
            "currency_id": owner.company_id.currency_id.id,
            "assistant_id": helper.id,
            "provider_id": helper.provider_id.id,
            "model_name": "upgrade-model",
            "conversation_id": recorded.id,
            "round": 1,
            "input_tokens": 300,
            "output_tokens": 4,
            "total_tokens": 304,
            "cost": 0.0021,
            # a version that converts each row's cost as it records it (1.10.0 on) stores it so
            **(
                {"report_cost": 0.0021, "report_currency_id": owner.company_id.currency_id.id}
                if has(env, "ai.usage", "report_cost")
                else {}
            ),
        }
    )


def make_budgets(env, users):
    """A user's money budget part spent and warned this period, and a company's token budget
    (versions with budgets): both keep their amounts, their counters and their warning."""
    owner = users["owner"]
    Budget = env["ai.budget"]
    mine = Budget.create(
        {
            "name": "Owner's month",
            "scope": "user",
            "user_id": owner.id,
            "unit": "money",
            "amount": 5.0,
            "period": "month",
        }
    )
    Budget.create(
        {
            "name": "Company tokens",
            "scope": "company",
            "company_id": owner.company_id.id,
            "unit": "tokens",
            "amount": 150000,
            "period": "week",
        }
    )
    period_start = datetime.now().date().replace(day=1)
    # a version that opens a budget's period when the budget is made (1.10.0 on) has this row already
    Period = env["ai.budget.period"]
    period = Period.search([("budget_id", "=", mine.id), ("period_start", "=", period_start)])
    values = {"spent": 4.25, "warned": True}
    if period:
        period.write(values)
    else:
        Period.create({"budget_id": mine.id, "period_start": period_start, **values})


def make_assistant_runs(env, users, assistants):
    """A server action running the helper on contacts as the owner, with one run done and one
    queued (versions with server actions running assistants)."""
    owner = users["owner"]
    action = env["ir.actions.server"].create(
        {
            "name": "Upgrade: ask the helper",
            "model_id": env["ir.model"]._get_id("res.partner"),
            "state": "ai_assistant",
            "ai_assistant_id": assistants["helper"].id,
            "ai_instruction": "Summarise {{ object.name }}",
            "ai_run_as": "user",
            "ai_run_user_id": owner.id,
        }
    )
    Run = env["ai.assistant.run"]
    partner = owner.partner_id
    Run.create({"action_id": action.id, "res_model": "res.partner", "res_id": partner.id, "user_id": owner.id})
    Run.create(
        {
            "action_id": action.id,
            "res_model": "res.partner",
            "res_id": partner.id,
            "user_id": owner.id,
            "state": "done",
        }
    )


def make_host_extensions(env, servers, assistants):
    """A skill a server published, chosen for the helper; a server whose sampling and skills an admin
    turned off; a task that outlived its turn; a grant bound to a DPoP key (versions with skills,
    sampling, tasks and DPoP)."""
    shared = servers["shared"]
    skill = env["mcp.skill"].create(
        {
            "name": "release-notes",
            "description": "Write release notes from merged changes.",
            "uri": "skill://release-notes/SKILL.md",
            "server_id": shared.id,
            "manifest": json.dumps({"name": "release-notes", "files": []}),
        }
    )
    assistants["helper"].write({"mcp_skill_ids": [(4, skill.id)]})
    # kept as they are: turning DPoP on drops the grants, and this one is then given its key
    servers["personal"].with_context(ai_mcp_keep_state=True).write(
        {"sampling_enabled": False, "skills_enabled": False, "oauth_dpop": True}
    )
    grant = env["mcp.oauth.token"].sudo().search([("server_id", "=", servers["personal"].id)], limit=1)
    grant.write({"dpop_key": "-----BEGIN PRIVATE KEY-----\nupgrade-dpop-19\n-----END PRIVATE KEY-----\n"})
    conversation = env["ai.conversation"].search([("name", "=", "Clean-up")], limit=1)
    env["ai.mcp.task"].sudo().create(
        {
            "server_id": shared.id,
            "conversation_id": conversation.id,
            "task_id": "task-upgrade-20",
            "call_id": "call-upgrade-20",
            "tool_name": "export_ledger",
            "status": "working",
            "status_message": "40% exported",
        }
    )


def make_oauth(env, users, servers, assistants):
    """Two OAuth servers: one signed in once for everyone (a shared grant, with the client Odoo
    registered as), one where each user signs in (a grant per user), and a sign-in under way."""
    Server = env["mcp.server"]
    registration = {
        "client": {
            "kind": "dcr",
            "issuer": "https://auth.example.com",
            "client_id": "registered-client",
            "client_secret": "registered-secret-9",
            "auth_method": "client_secret_post",
            "redirect_uri": "http://localhost:8069/ai_mcp/oauth/callback",
        },
        "token_endpoint": "https://auth.example.com/token",
        "revocation_endpoint": "https://auth.example.com/revoke",
        "resource": "https://mcp.example.com/mcp",
    }
    shared = Server.create(
        {
            "name": "Shared OAuth",
            "url": "https://mcp.example.com/mcp",
            "auth_type": "oauth",
            "oauth_token_scope": "shared",
            "oauth_scopes": "orders:read orders:write",
            "oauth_client_id": "entered-client",
            "oauth_client_secret": "entered-secret-10",
            "oauth_registration": json.dumps(registration),
        }
    )
    personal = Server.create({"name": "Per-user OAuth", "url": "https://mcp.example.org/mcp", "auth_type": "oauth"})
    if has(env, "mcp.server", "oauth_private_key"):
        # a company client signing in with a key pair made in Odoo (versions with company sign-in)
        company_client = Server.create(
            {
                "name": "Company client OAuth",
                "url": "https://mcp.example.net/mcp",
                "auth_type": "oauth",
                "oauth_token_scope": "shared",
                "oauth_flow": "client_credentials",
                "oauth_client_auth": "private_key_jwt",
                "oauth_client_id": "company-client",
            }
        )
        company_client.action_oauth_generate_key()
    assistants["helper"].write({"mcp_server_ids": [(4, shared.id), (4, personal.id)]})
    owner, other = users["owner"], users["other"]
    Token = env["mcp.oauth.token"].sudo()
    Token.create(
        {
            "server_id": shared.id,
            "user_id": False,
            "signed_in_by_id": env.ref("base.user_admin").id,
            "signed_in_at": LATER - timedelta(days=3),
            "scope": "orders:read orders:write",
            "expires_at": LATER,
            "refreshed_at": LATER - timedelta(hours=1),
            "access_token": "at-shared-11",
            "refresh_token": "rt-shared-12",
        }
    )
    # the owner's access token is never refreshed (no refresh token); the other user's is
    for user, refresh in ((owner, None), (other, "rt-upgrade_other-14")):
        values = {
            "server_id": personal.id,
            "user_id": user.id,
            "signed_in_by_id": user.id,
            "signed_in_at": LATER - timedelta(days=1),
            "expires_at": LATER,
            "access_token": f"at-{user.login}-13",
        }
        Token.create({**values, "refresh_token": refresh} if refresh else values)
    conversation = env["ai.conversation"].search([("name", "=", "Clean-up")], limit=1)
    env["mcp.oauth.pending"].sudo().create(
        {
            "state_hash": "state-hash-upgrade",
            "session_hash": "session-hash-upgrade",
            "server_id": personal.id,
            "user_id": other.id,
            "owner_id": other.id,
            "conversation_id": conversation.id,
            "expires_at": LATER,
            "authorization": json.dumps({"state": "s" * 16, "code_verifier": "verifier-upgrade-18"}),
        }
    )
    servers.update(shared=shared, personal=personal)


def turn_settings(env):
    """What a turn of each assistant calls the model with, in the fields every version has."""
    assistants = env["ai.assistant"].sudo().with_context(active_test=False).search([], order="id")
    settings = {}
    for assistant in assistants:
        llm = assistant._assistant_settings().llm
        settings[assistant.id] = {
            "base_url": llm.base_url,
            "api_key": llm.api_key.get_secret_value(),
            "model": llm.model,
            "temperature": llm.temperature,
            "timeout": llm.timeout,
            "extra_query": dict(getattr(llm, "extra_query", ())),
        }
    return settings


def snapshot(env):
    """Every stored value of the module's records, every secret decrypted, and the module's settings, as JSON."""
    records, secrets = {}, {}
    for model in module_models(env):
        Model = env[model].sudo().with_context(active_test=False)
        names = sorted(
            n
            for n, f in Model._fields.items()
            if f.store and n not in VOLATILE and f.type not in ("one2many", "binary")
        )
        found = Model.search([], order="id")
        records[model] = found.read(names)
        fields = getattr(Model, "_secret_fields", ())
        if fields:
            secrets[model] = {record.id: {f: record._secret_value(f) for f in fields} for record in found}
    portal = env["res.users"].sudo().search([("login", "=", "upgrade_portal")])
    params = env["ir.config_parameter"].sudo().search([("key", "=like", "ai_mcp.%")])
    data = {
        "records": records,
        "secrets": secrets,
        "turn_settings": turn_settings(env),
        "settings": {param.key: param.value for param in params},
        "portal": {"portal": portal.has_group("base.group_portal"), "internal": portal.has_group("base.group_user")},
        "version": installed_version(env),
    }
    return json.dumps(data, default=str, sort_keys=True)
