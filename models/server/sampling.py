"""mcp.server, whether its server may ask the assistant's model for a completion (sampling). On by
default, as the other capabilities a server may use: nothing reaches the model before the user whose
call it came with has read, possibly edited, and approved the request, and the call is billed to her
answer; an administrator turns it off for a server whose requests nobody should be asked about."""

from odoo import fields, models


class McpServer(models.Model):
    _inherit = "mcp.server"

    sampling_enabled = fields.Boolean(
        string="Sampling",
        default=True,
        # only an administrator decides that a server may use the company's model
        groups="base.group_system",
        # a copy keeps it (copy below): whoever copies may not read it
        copy=False,
        help="Let this server ask the assistant's model for a completion while one of its tools runs. Each request "
        "is shown to the user, who may edit it, approve or decline it; an approved one is a model call of the "
        "answer (usage, cost, budgets). Off: the server is not told that the chat offers sampling.",
    )

    def copy(self, default=None):
        copies = super().copy(default)
        for server, copied in zip(self, copies, strict=True):
            # sudo: the switch is an administrator's, carried over for a user who may not read it,
            # so that copying a server never turns its sampling back on
            copied.sudo().sampling_enabled = server.sudo().sampling_enabled
        return copies
