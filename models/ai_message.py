from odoo import api, fields, models
from odoo.tools import SQL

from ..turn.states import MessageStatus
from .conversation.ai_conversation_approval import APPROVALS

MESSAGE_STATUSES = [
    (MessageStatus.RUNNING, "Running"),
    (MessageStatus.PENDING, "Waiting for Approval"),
    (MessageStatus.DONE, "Done"),
    (MessageStatus.ERROR, "Error"),
    (MessageStatus.DENIED, "Denied"),
    (MessageStatus.CANCELLING, "Cancelling"),
    (MessageStatus.CANCELLED, "Cancelled"),
]


class AiMessage(models.Model):
    """A readable log of a conversation: the user's messages, the assistant's replies (one per
    model call) and one row per tool call with its outcome. Written by the chat runner as the
    events happen; the events themselves stay the source of truth for the history."""

    _name = "ai.message"
    _description = "AI Message"
    _order = "conversation_id, seq, id"

    conversation_id = fields.Many2one("ai.conversation", required=True, ondelete="cascade", index=True)
    role = fields.Selection([("user", "User"), ("assistant", "Assistant"), ("tool", "Tool")], required=True)
    content = fields.Text(help="The user's text, the assistant's text, or the tool result the model was given.")
    seq = fields.Integer(
        index=True,
        help="The event sequence number this message was written at; a user message carries the number of the "
        "last event before it.",
    )
    # -- user messages ---------------------------------------------------------------------------
    # The browser names each message it sends; a start it sends again after an answer that proved
    # nothing was stored (a full pool, a proxy that lost the node) carries the same name, and is
    # recognised when it was stored after all instead of being answered twice.
    request_key = fields.Char(index="btree_not_null", copy=False, help="The browser's name for this user message.")
    # a message the interactive app of a call sent in the user's name
    app_call_id = fields.Char(string="App Call", help="The call whose app sent this message in the user's name.")
    app_title = fields.Char(string="App", help="The title of the app that sent this message.")

    # -- assistant replies -----------------------------------------------------------------------
    tool_calls = fields.Json(help="The calls the model asked for: [{id, name, arguments}].")
    interrupted = fields.Boolean(
        readonly=True,
        help="The reply stopped before the model finished it: it holds what the user was shown, "
        "and the model is told it was cut off.",
    )
    thinking = fields.Text(help="The reasoning the model showed while writing this reply, where its provider shows it.")
    usage = fields.Json(help="Token usage of the answer (final reply only).")
    rounds = fields.Integer(help="Tool rounds the answer took (final reply only).")

    # -- tool calls ------------------------------------------------------------------------------
    tool_call_id = fields.Char(string="Tool Call ID")
    tool_name = fields.Char()
    server_name = fields.Char()
    arguments = fields.Json()
    status = fields.Selection(MESSAGE_STATUSES)
    duration_ms = fields.Integer(string="Duration (ms)")
    error_code = fields.Char()
    approval = fields.Selection(
        APPROVALS, help="How the call came to run: allowed by the user (once, or remembered), or without asking."
    )
    note = fields.Char(help="What happened to the call besides its result, e.g. its server's question left unanswered.")
    # the user's answer to the question the call's server asked ({elicitation, action, content}),
    # written by whichever worker received it and taken by the worker running the turn
    elicitation_answer = fields.Json(copy=False, groups="base.group_system")
    # kept on the call's row, not the conversation's: a running turn updates that row all along
    app_context = fields.Json(
        copy=False, help="What the call's interactive app last told the model: {title, text, at}."
    )

    def init(self):
        # the user messages of a conversation by time: what the pace limits count (conversation/pace.py)
        self.env.cr.execute(
            SQL(
                "CREATE INDEX IF NOT EXISTS ai_message_user_turns"
                " ON ai_message (conversation_id, create_date) WHERE role = 'user'"
            )
        )

    @api.depends("role", "tool_name", "seq")
    def _compute_display_name(self):
        labels = dict(self._fields["role"]._description_selection(self.env))
        for message in self:
            label = labels.get(message.role, message.role or "")
            message.display_name = f"{label} {message.tool_name}" if message.tool_name else label
