"""Rendering the instruction of a server action "Run an AI assistant" with Odoo's mail rendering
(`{{ object.name }}` placeholders, as in mail templates)."""

from odoo import models


class AiInstructionRender(models.AbstractModel):
    """Renders an action's instruction as the user a run runs as: the record's fields are read with
    that user's rights. Its placeholders are not that user's: whoever may write server actions wrote
    them (as mail.template trusts its editors, its rendering is unrestricted)."""

    _name = "ai.instruction.render"
    _inherit = "mail.render.mixin"
    _description = "AI Instruction Rendering"
    _unrestricted_rendering = True
