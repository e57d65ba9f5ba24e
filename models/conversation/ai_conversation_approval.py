"""Approvals a user chose to remember in one of their conversations: "Allow for this conversation"
(every later call of that tool in the conversation, by the model or by its apps, runs without
asking) and "Allow for this app in this conversation" (the calls one app makes to that tool).

A remembered approval covers one conversation, one tool and the conversation's user only; it ends
with the conversation (deleted with it) or when the user revokes it in the chat. How each call was
allowed is kept in its audit row (ai.tool.call.approval).
"""

import logging

from psycopg2.errors import SerializationFailure

from odoo import api, fields, models
from odoo.tools import SQL

_logger = logging.getLogger(__name__)

SCOPES = [("conversation", "This conversation"), ("app", "This app in this conversation")]

# how a call came to run, as its audit row and its tool message keep it
APPROVALS = [
    ("once", "Allowed once"),
    ("conversation", "Allowed for the conversation"),
    ("app", "Allowed for the app"),
    ("not_required", "Not required"),
    ("read_only", "Read-only"),
    ("action", "Allowed by its server action"),
]


class AiConversationApproval(models.Model):
    _name = "ai.conversation.approval"
    _description = "Remembered Tool Approval"
    _order = "id"
    _rec_name = "tool_id"

    conversation_id = fields.Many2one(
        "ai.conversation", string="Conversation", required=True, readonly=True, ondelete="cascade", index=True
    )
    user_id = fields.Many2one("res.users", string="User", required=True, readonly=True, ondelete="cascade", index=True)
    tool_id = fields.Many2one("mcp.tool", string="Tool", required=True, readonly=True, ondelete="cascade")
    scope = fields.Selection(SCOPES, required=True, readonly=True)
    app_uri = fields.Char(string="App", readonly=True, help="The ui:// resource of the app the approval is for.")

    def init(self):
        # one row per conversation, tool, scope and app: concurrent "remember" requests of an app's
        # waiting calls insert it once (ON CONFLICT DO NOTHING in _remember)
        self.env.cr.execute(
            SQL(
                "CREATE UNIQUE INDEX IF NOT EXISTS ai_conversation_approval_unique"
                " ON ai_conversation_approval (conversation_id, tool_id, scope, COALESCE(app_uri, ''))"
            )
        )

    @api.model
    def _remembered(self, conversation):
        """{tool id: (for the whole conversation?, {app uris})} the current user remembered in
        `conversation` (theirs: the caller checked)."""
        rows = (
            self.sudo().search_fetch(
                [("conversation_id", "=", conversation.id), ("user_id", "=", self.env.uid)],
                ["tool_id", "scope", "app_uri"],
            )
            if conversation
            else self.sudo()
        )
        remembered = {}
        for row in rows:
            whole, apps = remembered.get(row.tool_id.id, (False, frozenset()))
            if row.scope == "conversation":
                whole = True
            else:
                apps = apps | {row.app_uri}
            remembered[row.tool_id.id] = (whole, apps)
        return remembered

    @api.model
    def _remember(self, conversation, tool, scope, app_uri=None):
        """Remember that the current user allowed `tool` in `conversation` (theirs: the caller
        checked) for `scope`; remembering it again changes nothing."""
        values = {
            "conversation_id": conversation.id,
            "user_id": self.env.uid,
            "tool_id": tool.id,
            "scope": scope,
            "app_uri": app_uri if scope == "app" else None,
            "create_uid": self.env.uid,
            "write_uid": self.env.uid,
        }
        insert = SQL(
            "INSERT INTO %s (%s, create_date, write_date) VALUES (%s, now() at time zone 'UTC', "
            "now() at time zone 'UTC') ON CONFLICT DO NOTHING",
            SQL.identifier(self._table),
            SQL(", ").join(map(SQL.identifier, values)),
            SQL(", ").join(values.values()),
        )
        try:
            with self.env.cr.savepoint(flush=False):
                self.env.cr.execute(insert, log_exceptions=False)
        except SerializationFailure:
            # An app's waiting calls are sent again together, each remembering the same decision: in
            # Odoo's REPEATABLE READ the row a concurrent request has just inserted is a conflict
            # this snapshot cannot see, which PostgreSQL refuses instead of doing nothing. That row
            # is the one this request would insert: nothing is lost, and the call goes on.
            _logger.debug("Tool approval already being remembered: conversation=%s tool=%s", conversation.id, tool.name)
            return
        _logger.info(
            "Tool approval remembered: conversation=%s tool=%s scope=%s app=%s",
            conversation.id,
            tool.name,
            scope,
            app_uri or "",
        )

    @api.model
    def _for_chat(self, conversation):
        """What the chat lists of `conversation`'s remembered approvals: [{id, tool, title, server,
        scope, app}]."""
        rows = self.search([("conversation_id", "=", conversation.id), ("user_id", "=", self.env.uid)])
        return [
            {
                "id": row.id,
                "tool": row.tool_id.sudo().name,
                "title": row.tool_id.sudo().title or row.tool_id.sudo().name,
                "server": row.tool_id.sudo().server_id.name,
                "scope": row.scope,
                "app": row.app_uri or None,
            }
            for row in rows
        ]


def approval_of(tool, remembered, audience, app_uri=None):
    """How a call of `tool` (an mcp.tool) by `audience` ("model" or "app", the app `app_uri`) runs
    without asking: "read_only", "not_required", "conversation", "app"; None when it asks.
    `remembered`: AiConversationApproval._remembered of the conversation."""
    if tool.marked_read_only:
        return "read_only"
    if not tool.requires_approval or (audience == "app" and tool.app_approval_free):
        return "not_required"
    whole, apps = remembered.get(tool.id, (False, frozenset()))
    if whole:
        return "conversation"
    if audience == "app" and app_uri and app_uri in apps:
        return "app"
    return None
