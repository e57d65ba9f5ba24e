"""Audit and usage of tool calls: one row per tool result a chat turn stored, and per call an app
made.

Rows are written by the chat runner (as superuser, in the transaction that stores the tool_result
event) and by the app host (conversation/app_call.py), and removed by the retention cron;
nobody edits them. They keep who, where, which tool, how long, how it ended and the size of the
arguments, never the arguments themselves (they may carry secrets the user typed or a preset
filled in).
"""

import json
import logging
from datetime import timedelta

from odoo import api, fields, models
from odoo.modules import module as odoo_module

from ..services.errors import ErrorCode
from ..turn.sql_rows import insert_row, update_row
from .conversation.ai_conversation_approval import APPROVALS

_logger = logging.getLogger(__name__)

RETENTION_PARAM = "ai_mcp.tool_call_retention_days"
DEFAULT_RETENTION_DAYS = 90
GC_BATCH = 1000

# running: written when the call starts, so that a call whose turn never ends (its process died)
# is still on record; interrupted: its turn stopped (the browser left, the server died) before
# its result came, so it may have done its work on the server
STATUSES = [
    ("ok", "OK"),
    ("error", "Error"),
    ("denied", "Denied"),
    ("running", "Running"),
    ("interrupted", "Interrupted"),
]


class AiToolCall(models.Model):
    _name = "ai.tool.call"
    _description = "AI Tool Call"
    _order = "date desc, id desc"
    _rec_name = "tool_name"

    date = fields.Datetime(
        string="Time",
        required=True,
        readonly=True,
        index=True,
        default=fields.Datetime.now,
        help="When the result came back (while the call runs: when it started).",
    )
    user_id = fields.Many2one("res.users", string="User", readonly=True, index=True, ondelete="set null")
    assistant_id = fields.Many2one("ai.assistant", string="Assistant", readonly=True, index=True, ondelete="set null")
    cloud_service_id = fields.Many2one(
        "cloud.service", string="Cloud Service", readonly=True, index="btree_not_null", ondelete="set null"
    )
    conversation_id = fields.Many2one(
        "ai.conversation", string="Conversation", readonly=True, index="btree_not_null", ondelete="set null"
    )

    # -- the tool: names are kept as they were, the records may be renamed or deleted later ----------
    server_id = fields.Many2one("mcp.server", string="Server", readonly=True, index=True, ondelete="set null")
    tool_id = fields.Many2one("mcp.tool", string="Tool", readonly=True, index=True, ondelete="set null")
    server_name = fields.Char(readonly=True)
    tool_name = fields.Char(string="Tool Name", readonly=True, index=True)
    call_id = fields.Char(
        string="Call ID",
        readonly=True,
        help="The id the model gave the call; for a call an app made, the id of the call that shows the app.",
    )
    origin = fields.Selection(
        [("model", "Model"), ("app", "App")],
        default="model",
        required=True,
        readonly=True,
        index=True,
        help="Who asked for the call: the model, or the interactive app of an earlier call (as the user used it).",
    )

    # -- who allowed it, and how --------------------------------------------------------------------
    approval = fields.Selection(
        APPROVALS,
        readonly=True,
        index="btree_not_null",
        help="How the call came to run: allowed by the user for this call only, remembered for the conversation "
        "or for the app, or run without asking (approval not required, or the tool checked read-only).",
    )
    approved_by_id = fields.Many2one(
        "res.users",
        string="Allowed By",
        readonly=True,
        ondelete="set null",
        help="The user who allowed the call (or the tool, for the conversation or the app); empty when none was asked.",
    )

    # -- the outcome -------------------------------------------------------------------------------
    status = fields.Selection(STATUSES, required=True, readonly=True, index=True)
    error_code = fields.Char(readonly=True, index="btree_not_null")
    duration_ms = fields.Integer(string="Duration (ms)", readonly=True, aggregator="avg")
    max_duration_ms = fields.Integer(
        string="Max Duration (ms)",
        compute="_compute_measures",
        store=True,
        aggregator="max",
        help="The duration again, summed up as a maximum in reports.",
    )
    argument_bytes = fields.Integer(
        string="Argument Size (bytes)",
        readonly=True,
        aggregator="avg",
        help="Size of the JSON arguments the model sent (UTF-8); the arguments themselves are not kept.",
    )
    error_count = fields.Integer(
        string="Errors",
        compute="_compute_measures",
        store=True,
        aggregator="sum",
        help="1 when the call failed: errors per server and day add up in reports.",
    )

    @api.depends("duration_ms", "status")
    def _compute_measures(self):
        for call in self:
            call.update(measures(call.duration_ms, call.status))

    @api.depends("tool_name", "server_name")
    def _compute_display_name(self):
        for call in self:
            call.display_name = " / ".join(filter(None, [call.server_name, call.tool_name])) or self.env._("Tool call")

    # -- written by the chat runner ------------------------------------------------------------------

    @api.model
    def _record_tool_start(self, conversation_id, call_id, call, known=None):
        """Log the call `call_id` (server name, tool name, arguments, approval) of conversation
        `conversation_id` as running, when it starts: its result or its turn's end settles the
        row. Returns the row (empty when it could not be written: logged, the turn goes on)."""
        try:
            with self.env.cr.savepoint(flush=False):
                values = self._call_values(conversation_id, call, known)
                values.update(call_id=call_id, status="running", error_code=False, duration_ms=0)
                return self.browse(insert_row(self, {**values, **measures(0, "running")}))
        except Exception:  # noqa: BLE001 - the audit must not break the user's answer
            _logger.exception("AI tool call start not audited: conversation=%s call=%s", conversation_id, call_id)
            return self.browse()

    @api.model
    def _record_interrupted(self, conversation_id, code, durations=None):
        """The calls of conversation `conversation_id` still running when its turn stopped with
        error `code`: interrupted, having run until now (`durations`: {row id: ms} where the turn
        measured it; otherwise from the row's start, to the second)."""
        self.flush_model()
        now = fields.Datetime.now()  # the clock the rows' start was read from
        self.env.cr.execute(
            """UPDATE ai_tool_call
                  SET status = 'interrupted', error_code = %(code)s, date = %(now)s, write_date = %(now)s,
                      duration_ms = GREATEST(0, (EXTRACT(EPOCH FROM %(now)s - date) * 1000)::int), error_count = 1
                WHERE conversation_id = %(conversation)s AND status = 'running'
            RETURNING id""",
            {"code": code, "now": now, "conversation": conversation_id},
        )
        ids = [row[0] for row in self.env.cr.fetchall()]
        for row_id, duration_ms in (durations or {}).items():
            if row_id in ids:
                self.env.cr.execute("UPDATE ai_tool_call SET duration_ms = %s WHERE id = %s", (duration_ms, row_id))
        if ids:
            self.env.cr.execute("UPDATE ai_tool_call SET max_duration_ms = duration_ms WHERE id = ANY(%s)", (ids,))
            self.browse(ids).invalidate_recordset()
        return len(ids)

    @api.model
    def _record_tool_result(self, conversation_id, message, event, call=None, known=None, started=None):
        """Log the ToolResultEvent `event` of conversation `conversation_id`; `message` is the tool
        ai.message of its call (empty when the call was not stored). Called by the chat runner in
        the transaction that stores the event. A failure here is logged and never ends the turn.

        `call` (server name, tool name, arguments, approval), when the caller still holds them from the
        tool_call event, spares reading them back from `message`. `known` is a dict the caller
        keeps for the turn: the conversation, its servers and each tool are looked up once per
        turn, not once per result (a running turn's conversation and assistant do not move).
        `started`: the row _record_tool_start wrote for the call, brought up to date."""
        try:
            with self.env.cr.savepoint(flush=False):
                values = self._values_from_result(conversation_id, message, event, call, known)
                values.update(measures(values["duration_ms"], values["status"]))
                if started:
                    update_row(self, started.id, values)
                    return started
                return self.browse(insert_row(self, values))
        except Exception:  # noqa: BLE001 - the audit must not break the user's answer
            _logger.exception("AI tool call not audited: conversation=%s call=%s", conversation_id, event.id)
            return self.browse()

    @api.model
    def _values_from_result(self, conversation_id, message, event, call=None, known=None):
        if call is None:
            call = (
                ((message.server_name or ""), (message.tool_name or ""), message.arguments, message.approval)
                if message
                else ("", "", None, None)
            )
        if event.ok:
            status = "ok"
        elif event.error_code == ErrorCode.TOOL_DENIED.value:
            status = "denied"
        else:
            status = "error"
        values = self._call_values(conversation_id, call, known)
        if status == "denied":
            values.update(approval_values(None, values["user_id"]))
        return {
            **values,
            "call_id": event.id,
            "status": status,
            "error_code": event.error_code or False,
            "duration_ms": max(0, int(event.duration_ms or 0)),
        }

    @api.model
    def _call_values(self, conversation_id, call, known):
        """The values of a row that do not depend on how the call ended."""
        server_name, tool_name, arguments, approval = call
        target = self._audit_target(conversation_id, server_name, tool_name, {} if known is None else known)
        return {
            **target,
            **approval_values(approval, target["user_id"]),
            "date": fields.Datetime.now(),
            "origin": "model",
            "argument_bytes": argument_bytes(arguments),
        }

    @api.model
    def _audit_known(self, conversation):
        """The `known` of _audit_target for every tool `conversation` could call, found at once
        where the turn is prepared: the rows are then written without a lookup each."""
        known = {}
        self._audit_conversation(conversation, known)
        servers = {server_id: name for name, ids in known["servers"].items() for server_id in ids}
        Tool = self.env["mcp.tool"].sudo().with_context(active_test=False)
        for tool in Tool.search_fetch([("server_id", "in", list(servers))], ["server_id", "name"]):
            # the first of the model's order, as the lookup of one tool takes it
            known.setdefault(
                ("tool", servers[tool.server_id.id], tool.name), {"server_id": tool.server_id.id, "tool_id": tool.id}
            )
        return known

    @api.model
    def _audit_conversation(self, conversation, known):
        known["conversation"] = {
            "user_id": conversation.user_id.id or self.env.uid,
            "assistant_id": conversation.assistant_id.id or False,
            "cloud_service_id": conversation.cloud_service_id.id or False,
            "conversation_id": conversation.id or False,
        }
        known["servers"] = self._servers_by_name(conversation)

    @api.model
    def _audit_target(self, conversation_id, server_name, tool_name, known):
        """Who called which tool of which server, where: the values of a row that are not the
        result's. The call went to the tool of that name on a server of that name among those the
        conversation could bind (the assistant's, then the cloud service's)."""
        if "conversation" not in known:
            self._audit_conversation(self.env["ai.conversation"].sudo().browse(conversation_id).exists(), known)
        key = ("tool", server_name, tool_name)
        if key not in known:
            server_ids = known["servers"].get(server_name, []) if server_name else []
            Tool = self.env["mcp.tool"].sudo().with_context(active_test=False)
            tool = (
                Tool.search_fetch([("server_id", "in", server_ids), ("name", "=", tool_name)], ["server_id"], limit=1)
                if tool_name and server_ids
                else Tool
            )
            known[key] = {
                "server_id": tool.server_id.id or (server_ids[0] if server_ids else False),
                "tool_id": tool.id or False,
            }
        return {
            **known["conversation"],
            **known[key],
            "server_name": server_name or False,
            "tool_name": tool_name or False,
        }

    @api.model
    def _servers_by_name(self, conversation):
        """{name: [server ids]} of the servers `conversation` could bind, in the order they are tried."""
        if not conversation:
            return {}
        Server = self.env["mcp.server"].sudo().with_context(active_test=False)
        candidates = conversation.assistant_id.sudo().with_context(active_test=False).mcp_server_ids
        if conversation.cloud_service_id:
            candidates |= Server.search([("cloud_service_id", "=", conversation.cloud_service_id.id)])
        servers = {}
        for server in candidates:
            servers.setdefault(server.name, []).append(server.id)
        return servers

    @api.model
    def _record_app_call(
        self, conversation, server, tool_name, call_id, arguments, status, error_code, duration_ms, approval=None
    ):
        """Log a call the app of call `call_id` of `conversation` made to `tool_name` of `server`,
        which ran as `approval` says (None: it did not run)."""
        tool = server.tool_ids.filtered(lambda t: t.name == tool_name)[:1]
        values = {
            "user_id": self.env.uid,
            "assistant_id": conversation.assistant_id.id,
            "cloud_service_id": conversation.cloud_service_id.id or False,
            "conversation_id": conversation.id,
            "server_id": server.id,
            "tool_id": tool.id or False,
            "server_name": server.name,
            "tool_name": tool_name,
            "call_id": call_id,
            "origin": "app",
            "status": status,
            "error_code": error_code or False,
            "duration_ms": max(0, int(duration_ms)),
            "argument_bytes": argument_bytes(arguments),
            **approval_values(approval, self.env.uid),
        }
        return self.sudo().create(values)

    # -- retention -------------------------------------------------------------------------------

    @api.model
    def _counts_by(self, field, ids):
        """{record id: calls the current user may read} of the records `ids` of `field` (server_id,
        assistant_id): the record rule applies, as in the list."""
        ids = [i for i in ids if isinstance(i, int)]
        if not ids or not self.has_access("read"):
            return {}
        groups = self._read_group([(field, "in", ids)], [field], ["__count"])
        return {record.id: count for record, count in groups}

    @api.model
    def _action_for(self, name, domain):
        """The tool calls list, named `name`, showing the rows of `domain`."""
        action = self.env["ir.actions.act_window"]._for_xml_id("ai_mcp.action_ai_tool_call")
        action.update(name=name, domain=domain)
        return action

    def _retention_days(self):
        value = self.env["ir.config_parameter"].sudo().get_param(RETENTION_PARAM)
        try:
            return int(value) if value not in (None, False, "") else DEFAULT_RETENTION_DAYS
        except ValueError:
            _logger.warning(
                "System parameter %s is not a number of days: %r; keeping %s days",
                RETENTION_PARAM,
                value,
                DEFAULT_RETENTION_DAYS,
            )
            return DEFAULT_RETENTION_DAYS

    @api.model
    def _gc_tool_calls(self, batch=GC_BATCH):
        """Remove the calls older than the retention (system parameter ai_mcp.tool_call_retention_days,
        90 by default; 0 or less keeps everything), `batch` rows per transaction."""
        days = self._retention_days()
        if days <= 0:
            return 0
        limit = fields.Datetime.now() - timedelta(days=days)
        Calls = self.sudo()
        removed = 0
        while True:
            old = Calls.search([("date", "<", limit)], limit=batch, order="id")
            if not old:
                break
            removed += len(old)
            old.unlink()
            if not odoo_module.current_test:
                self.env.cr.commit()  # a long purge makes progress and holds no lock for long
            if len(old) < batch:
                break
        if removed:
            _logger.info("AI tool calls older than %s days removed: %s", days, removed)
        return removed


def measures(duration_ms, status):
    """The stored computes of a row: its duration again (summed up as a maximum) and 1 per failure."""
    return {"max_duration_ms": duration_ms, "error_count": 1 if status in ("error", "interrupted") else 0}


def argument_bytes(arguments):
    """Bytes of the JSON arguments as compact UTF-8, e.g. {"a":1} is 7."""
    if arguments is None:
        return 0
    try:
        return len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        return 0


def approval_values(approval, user_id):
    """The audit's approval columns of a call that ran as `approval` says, for the user `user_id`:
    who allowed it is that user whenever they were asked (now, or when they remembered it)."""
    asked = approval in ("once", "conversation", "app")
    return {"approval": approval or False, "approved_by_id": user_id if asked else False}
