"""The company's AI settings: how long its users' conversations are kept."""

from odoo import api, fields, models
from odoo.exceptions import ValidationError


class ResCompany(models.Model):
    _inherit = "res.company"

    ai_conversation_retention_days = fields.Integer(
        string="Keep AI conversations (days)",
        default=0,
        help="Conversations of this company's users with no activity for this many days are removed with their "
        "messages, keeping what they cost in the usage reports. 0 keeps them forever.",
    )

    @api.constrains("ai_conversation_retention_days")
    def _check_ai_conversation_retention_days(self):
        for company in self:
            if company.ai_conversation_retention_days < 0:
                raise ValidationError(
                    self.env._("AI conversations cannot be kept a negative number of days; 0 keeps them forever.")
                )
