"""The AI section of Odoo's Settings: the pace limits, instance-wide and stored as system parameters
(ir.config_parameter), and how long the current company keeps idle conversations (res.company).
Odoo lets only Settings administrators open and save this page; they are AI managers too
(security/ai_mcp_groups.xml)."""

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from .conversation.pace import PARAM_PER_HOUR, PARAM_PER_MINUTE


class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    ai_mcp_turns_per_minute = fields.Integer(
        string="Messages per User per Minute",
        config_parameter=PARAM_PER_MINUTE,
        help="How many messages one user may send to the assistants in a minute, in the chat and in Discuss "
        "together; a message past it is refused, saying when the next one can be sent. 0: no limit.",
    )
    ai_mcp_turns_per_hour = fields.Integer(
        string="Messages per User per Hour",
        config_parameter=PARAM_PER_HOUR,
        help="How many messages one user may send to the assistants in an hour, in the chat and in Discuss "
        "together. 0: no limit.",
    )
    ai_conversation_retention_days = fields.Integer(related="company_id.ai_conversation_retention_days", readonly=False)

    @api.constrains("ai_mcp_turns_per_minute", "ai_mcp_turns_per_hour")
    def _check_ai_mcp_pace(self):
        for settings in self:
            if settings.ai_mcp_turns_per_minute < 0 or settings.ai_mcp_turns_per_hour < 0:
                raise ValidationError(self.env._("A number of messages per minute or per hour cannot be negative."))
