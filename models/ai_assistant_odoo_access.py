"""ai.assistant.odoo.access: which models of this Odoo an assistant may use through the tools of
"This Odoo", and how (read, or read and write; the buttons it may press; the server actions it
may run). Nothing by default: an assistant given This Odoo sees no model until a line names one.
What a user reaches through them is never more than her own rights allow (odoo_tools/)."""

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..odoo_compat import Constraint


class AiAssistantOdooAccess(models.Model):
    _name = "ai.assistant.odoo.access"
    _description = "AI Assistant Access to an Odoo Model"
    _order = "assistant_id, model_id"

    assistant_id = fields.Many2one("ai.assistant", string="Assistant", required=True, ondelete="cascade", index=True)
    model_id = fields.Many2one(
        "ir.model", string="Model", required=True, ondelete="cascade", domain=[("transient", "=", False)]
    )
    model = fields.Char(related="model_id.model", string="Technical Name")
    access = fields.Selection(
        [("read", "Read"), ("write", "Read and write")],
        default="read",
        required=True,
        help="Read: the assistant searches, reads and aggregates. Read and write: it also creates, changes, "
        "archives and deletes records, each change approved by the user unless the tool says otherwise.",
    )
    button_names = fields.Char(
        string="Allowed Buttons",
        help="Methods of the form's buttons the assistant may press, separated by commas (e.g. action_confirm); "
        "a button is pressed only when the user's form shows it.",
    )
    server_action_ids = fields.Many2many(
        "ir.actions.server",
        "ai_assistant_odoo_access_server_action_rel",
        "access_id",
        "action_id",
        string="Allowed Server Actions",
        domain="[('ai_assistant_allowed', '=', True), ('model_id', '=', model_id)]",
    )

    _assistant_model_uniq = Constraint("unique(assistant_id, model_id)", "An assistant has one line per model.")

    @api.constrains("button_names")
    def _check_button_names(self):
        for access in self:
            names = [name.strip() for name in (access.button_names or "").split(",") if name.strip()]
            if any(name.startswith("_") or not name.isidentifier() for name in names):
                raise ValidationError(
                    self.env._("%s: a button is a public method name, e.g. action_confirm.", access.model_id.name)
                )
