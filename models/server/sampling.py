"""mcp.server, whether its server may ask the assistant's model for a completion (sampling). Off
by default: a server spends the company's model, on its own prompts, only where an administrator
said so; each request still waits for the approval of the user whose call it came with."""

from odoo import fields, models


class McpServer(models.Model):
    _inherit = "mcp.server"

    sampling_enabled = fields.Boolean(
        string="Sampling",
        default=False,
        # only an administrator decides that a server may use the company's model
        groups="base.group_system",
        help="Let this server ask the assistant's model for a completion while one of its tools runs. Each request "
        "is shown to the user, who may edit it, approve or decline it; an approved one is a model call of the "
        "answer (usage, cost, budgets). Off: the server is not told that the chat offers sampling.",
    )
