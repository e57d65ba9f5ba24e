from odoo import api, fields, models

from ...odoo_compat import Constraint


class AiConversationEvent(models.Model):
    """One event of a turn, exactly as it was streamed (the event types: docs/events.md).

    `seq` is the SSE id it was sent with: it starts at 1 and grows by one per conversation, across
    turns. The conversation's history is rebuilt from these rows alone, so a paused turn can be
    resumed by any process and a client can re-read what a broken stream showed."""

    _name = "ai.conversation.event"
    _description = "AI Conversation Event"
    _order = "conversation_id, seq"

    conversation_id = fields.Many2one("ai.conversation", required=True, ondelete="cascade", index=True)
    seq = fields.Integer(required=True, readonly=True)
    type = fields.Char(required=True, readonly=True)
    payload = fields.Json(required=True, readonly=True, help="The event's data() as it was streamed.")

    _conversation_seq_uniq = Constraint(
        "unique(conversation_id, seq)", "An event's sequence number is unique in its conversation."
    )

    @api.depends("type", "seq")
    def _compute_display_name(self):
        for event in self:
            event.display_name = f"#{event.seq} {event.type}"

    def _wire(self):
        """[{...payload, seq}]: what chat_state.js `fromHistory` takes."""
        return [{**(event.payload or {}), "type": event.type, "seq": event.seq} for event in self]
