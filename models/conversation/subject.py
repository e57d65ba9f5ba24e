"""The record a conversation is about: the form it was opened from ("Ask AI") or the record a
server action ran the assistant for. The conversation keeps the link; the turn reads the record
with the user's own rights."""

from odoo import fields, models


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    res_model = fields.Char("Related Document Model", index=True, readonly=True)
    res_id = fields.Many2oneReference("Related Document ID", model_field="res_model", readonly=True)
