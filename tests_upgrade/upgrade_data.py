"""Run by `odoo-bin shell` (as `env`): what a database of the previous version holds, written
through the previous version's own code, and a snapshot of it read back after an update.

Only fields and methods that every version since 18.0.1.0.0 has are used here: this file runs
against old code.
"""

import json

from odoo.tools.parse_version import parse_version

SECRETS = {"ai.provider": ("api_key",), "mcp.server": ("api_key", "headers", "env_vars")}
MODELS = (
    "ai.provider",
    "ai.assistant",
    "mcp.server",
    "mcp.tool",
    "cloud.service",
    "ai.conversation",
    "ai.message",
    "ai.conversation.event",
    "ai.tool.call",
    "ai.tool.preset",
)
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


def populate(env):
    env = env(context=dict(env.context, tracking_disable=True, mail_notrack=True))
    Users = env["res.users"]
    groups = env.ref("base.group_user") | env.ref("ai_mcp.group_ai_user")
    owner = Users.create({"name": "Owner", "login": "upgrade_owner", "groups_id": [(6, 0, groups.ids)]})
    portal = Users.create(
        {"name": "Portal", "login": "upgrade_portal", "groups_id": [(6, 0, env.ref("base.group_portal").ids)]}
    )
    installed = env["ir.module.module"].search([("name", "=", "ai_mcp")]).latest_version
    if parse_version(installed) < parse_version("18.0.1.1.0"):
        # a portal user holding the AI role, which only 18.0.1.0.0 allowed (from 18.0.1.1.0 on, the
        # role makes an internal user and Odoo refuses a user with two user types)
        env.cr.execute(
            "INSERT INTO res_groups_users_rel (gid, uid) VALUES (%s, %s)",
            (env.ref("ai_mcp.group_ai_user").id, portal.id),
        )

    provider = env["ai.provider"].create(
        {"name": "Upgrade LLM", "base_url": "https://llm.example.com/v1", "api_key": "sk-upgrade-1"}
    )
    bearer = env["mcp.server"].create(
        {"name": "Bearer", "url": "http://127.0.0.1:9/mcp", "auth_type": "bearer", "api_key": "tok-upgrade-2"}
    )
    custom = env["mcp.server"].create(
        {
            "name": "Headers",
            "url": "http://127.0.0.1:9/mcp",
            "auth_type": "headers",
            "headers": '{"X-Org": "acme", "X-Key": "k-3"}',
        }
    )
    tool = env["mcp.tool"].create(
        {
            "name": "search",
            "server_id": bearer.id,
            "description": "Search",
            "content_hash": "h1",
            "approved_hash": "h1",
            "input_schema": '{"type": "object", "properties": {"q": {"type": "string"}}}',
        }
    )
    service = env["cloud.service"].with_user(owner).create({"name": "Shop"}).sudo()
    env["mcp.server"].with_user(owner).create(
        {
            "name": "Mine",
            "scope": "user",
            "cloud_service_id": service.id,
            "url": "https://93.184.216.34/mcp",
            "auth_type": "bearer",
            "api_key": "tok-owner-4",
        }
    )
    assistant = env["ai.assistant"].create(
        {
            "name": "Helper",
            "provider_id": provider.id,
            "system_prompt": "Be brief.",
            "mcp_server_ids": [(6, 0, [bearer.id, custom.id])],
        }
    )
    env["ai.tool.preset"].create(
        {"assistant_id": assistant.id, "tool_id": tool.id, "arguments": '{"q": "{{user.login}}"}'}
    )
    conversation = env["ai.conversation"].create(
        {"assistant_id": assistant.id, "user_id": owner.id, "name": "Orders", "cloud_service_id": service.id}
    )
    Message = env["ai.message"]
    Message.create({"conversation_id": conversation.id, "role": "user", "content": "Find order 42"})
    Message.create(
        {
            "conversation_id": conversation.id,
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "42"}}],
        }
    )
    Message.create(
        {
            "conversation_id": conversation.id,
            "role": "tool",
            "content": "order 42: shipped",
            "tool_call_id": "c1",
            "tool_name": "search",
            "server_name": "Bearer",
            "status": "done",
            "duration_ms": 12,
        }
    )
    Message.create(
        {"conversation_id": conversation.id, "role": "assistant", "content": "Order 42 has shipped.", "rounds": 1}
    )
    for seq, (kind, payload) in enumerate(
        [("start", {"conversation_id": conversation.id}), ("text", {"delta": "Order 42"}), ("done", {"rounds": 1})],
        start=1,
    ):
        env["ai.conversation.event"].create(
            {"conversation_id": conversation.id, "seq": seq, "type": kind, "payload": payload}
        )
    env["ai.tool.call"].create(
        {
            "user_id": owner.id,
            "assistant_id": assistant.id,
            "conversation_id": conversation.id,
            "server_id": bearer.id,
            "tool_id": tool.id,
            "server_name": "Bearer",
            "tool_name": "search",
            "call_id": "c1",
            "status": "ok",
            "duration_ms": 12,
        }
    )
    env.cr.commit()


def snapshot(env):
    """Every stored value of the module's records, and every secret decrypted, as JSON."""
    data = {}
    for model in MODELS:
        Model = env[model].sudo().with_context(active_test=False)
        names = sorted(
            n
            for n, f in Model._fields.items()
            if f.store and n not in VOLATILE and f.type not in ("one2many", "binary")
        )
        data[model] = Model.search([], order="id").read(names)
    data["secrets"] = {
        model: {
            record.id: {f: record._secret_value(f) for f in fields}
            for record in env[model].sudo().with_context(active_test=False).search([])
        }
        for model, fields in SECRETS.items()
    }
    portal = env["res.users"].sudo().search([("login", "=", "upgrade_portal")])
    data["portal"] = {"portal": portal.has_group("base.group_portal"), "internal": portal.has_group("base.group_user")}
    data["version"] = env["ir.module.module"].sudo().search([("name", "=", "ai_mcp")]).latest_version
    return json.dumps(data, default=str, sort_keys=True)
