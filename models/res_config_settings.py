"""Settings > AI: what an administrator sets for the current company."""

from odoo import fields, models


class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    ai_conversation_retention_days = fields.Integer(related="company_id.ai_conversation_retention_days", readonly=False)
