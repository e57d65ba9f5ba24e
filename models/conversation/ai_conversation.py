"""The AI conversation: its fields, what its model calls cost, and who may change it. What the
chat asks of it is in chat_api.py (starting and resuming a turn included), which records a request
may name in access.py, the approvals of a paused turn in approvals.py; the turn's input (history,
tools, the ChatTurn) is in turn.py, claims in claim.py, the requests about a running call in
call.py."""

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError

from ...turn.states import ConversationState

# Fields only the chat runner changes (in its own transactions, as superuser).
RUNNER_FIELDS = {
    "state",
    "last_seq",
    "rounds_used",
    "turn_heartbeat",
    "user_id",
    "assistant_id",
    "cloud_service_id",
    "channel_id",
    "found_tools",
    "company_id",
}


class AiConversation(models.Model):
    _name = "ai.conversation"
    _description = "AI Conversation"
    _order = "write_date desc, id desc"
    _check_company_auto = True

    name = fields.Char(string="Title", required=True, default=lambda self: self.env._("New conversation"))
    active = fields.Boolean(default=True)
    company_id = fields.Many2one(
        "res.company",
        default=lambda self: self.env.company,
        readonly=True,
        index="btree_not_null",
        help="The company the conversation was started in; empty: started before conversations had one.",
    )
    assistant_id = fields.Many2one(
        "ai.assistant", string="Assistant", required=True, ondelete="cascade", index=True, check_company=True
    )
    user_id = fields.Many2one(
        "res.users", string="User", required=True, default=lambda self: self.env.user, ondelete="cascade", index=True
    )
    cloud_service_id = fields.Many2one(
        "cloud.service",
        string="Cloud Service",
        ondelete="set null",
        index="btree_not_null",
        check_company=True,
        help="The tools of this service's MCP servers are offered in the conversation.",
    )
    channel_id = fields.Many2one(
        "discuss.channel",
        string="Discuss Chat",
        ondelete="cascade",
        index="btree_not_null",
        help="Set when the conversation happens in a Discuss chat with the assistant.",
    )

    # -- the turn --------------------------------------------------------------------------------
    state = fields.Selection(
        [
            (ConversationState.IDLE, "Idle"),
            (ConversationState.RUNNING, "Answering"),
            (ConversationState.AWAITING_APPROVAL, "Waiting for Approval"),
            (ConversationState.AWAITING_CONFIRMATION, "Waiting for Confirmation"),
            (ConversationState.AWAITING_AUTH, "Waiting for Sign-in"),
        ],
        default=ConversationState.IDLE,
        required=True,
        readonly=True,
    )
    rounds_used = fields.Integer(default=0, readonly=True, help="Tool rounds of the last answer.")
    last_seq = fields.Integer(
        string="Last Event", default=0, readonly=True, help="Sequence number of the last stored event."
    )
    found_tools = fields.Json(
        readonly=True,
        copy=False,
        help="The tools the model's searches found, still offered in this conversation: [{server, tool}], the "
        "least recently used first.",
    )
    turn_heartbeat = fields.Datetime(
        readonly=True, help="Renewed while an answer runs; an answer silent for long died with its server process."
    )

    # -- what its model calls cost (ai.usage rows, summed when read: the writer keeps no counter) --
    usage_tokens = fields.Integer(string="Tokens", compute="_compute_usage", help="Tokens of every model call.")
    usage_cost = fields.Float(
        string="Cost",
        digits=(16, 6),
        compute="_compute_usage",
        help="What its model calls cost, at the models' prices when they were made, in the company's currency.",
    )

    message_ids = fields.One2many("ai.message", "conversation_id", string="Messages")
    event_ids = fields.One2many("ai.conversation.event", "conversation_id", string="Events")

    def _compute_usage(self):
        groups = (
            self.env["ai.usage"]
            .sudo()
            ._read_group(
                [("conversation_id", "in", self._origin.ids)], ["conversation_id"], ["total_tokens:sum", "cost:sum"]
            )
        )
        totals = {conversation.id: (tokens, cost) for conversation, tokens, cost in groups}
        for conversation in self:
            conversation.usage_tokens, conversation.usage_cost = totals.get(conversation._origin.id, (0, 0.0))

    def write(self, vals):
        if not self.env.su and RUNNER_FIELDS & set(vals):
            raise AccessError(self.env._("The state of a conversation changes only by chatting in it."))
        return super().write(vals)

    @api.ondelete(at_uninstall=False)
    def _unlink_except_answering(self):
        if any(conversation._turn_is_live() for conversation in self):
            raise UserError(
                self.env._("A conversation cannot be deleted while it is answering; stop it or wait for the answer.")
            )
