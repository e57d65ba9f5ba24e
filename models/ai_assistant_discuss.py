import base64
import logging

from odoo import fields, models
from odoo.exceptions import AccessError
from odoo.tools import file_open

from ..odoo_compat import chat_with

_logger = logging.getLogger(__name__)

AVATAR = "ai_mcp/static/description/icon.png"


class AiAssistant(models.Model):
    """The assistant as a chat partner in Discuss."""

    _inherit = "ai.assistant"

    partner_id = fields.Many2one(
        "res.partner",
        string="Discuss Partner",
        readonly=True,
        copy=False,
        ondelete="set null",
        help="Who answers in Discuss chats with this assistant; created the first time someone opens one.",
    )

    def write(self, vals):
        result = super().write(vals)
        if "name" in vals:
            for assistant in self.sudo().filtered("partner_id"):
                assistant.partner_id.name = assistant.name
        return result

    def _discuss_partner(self):
        """The assistant's res.partner, created on first use."""
        self.ensure_one()
        assistant = self.sudo()
        if not assistant.partner_id:
            values = {"name": assistant.name, "comment": self.env._("AI assistant: answers in Discuss chats.")}
            avatar = _avatar()
            if avatar:
                values["image_1920"] = avatar
            assistant.partner_id = self.env["res.partner"].sudo().create(values)
        return assistant.partner_id

    def _discuss_chat(self):
        """The current user's Discuss chat with this assistant, created when needed."""
        self.ensure_one()
        if not self._user_may_use():
            raise AccessError(self.env._("You may not chat with %s.", self.sudo().name))
        partner = self._discuss_partner()
        return chat_with(self.env["discuss.channel"], [partner.id])

    def action_open_discuss_chat(self):
        """Opens Discuss on the current user's chat with this assistant."""
        channel = self._discuss_chat()
        return {
            "type": "ir.actions.client",
            "tag": "mail.action_discuss",
            "name": self.env._("Discuss"),
            "params": {"active_id": f"discuss.channel_{channel.id}"},
        }


def _avatar():
    try:
        with file_open(AVATAR, "rb") as fh:
            return base64.b64encode(fh.read())
    except OSError:
        return False
