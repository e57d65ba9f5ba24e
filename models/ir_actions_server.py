"""ir.actions.server: whether assistants may run the action (through This Odoo's
odoo_run_server_action, on the models an assistant is given, with the user's approval)."""

from odoo import fields, models


class IrActionsServer(models.Model):
    _inherit = "ir.actions.server"

    ai_assistant_allowed = fields.Boolean(
        string="Assistants May Run It",
        help="AI assistants given This Odoo may run this action on the records of its model, as the user "
        "chatting with them and after her approval.",
    )
