"""One entry of a pasted `mcpServers` config, as the import wizard previews it. Secrets are not
kept here: the line says which ones the entry carries, and "Create" reads them again from the
pasted text."""

from odoo import fields, models

from ..selections import TRANSPORTS


class McpServerImportLine(models.TransientModel):
    _name = "mcp.server.import.line"
    _description = "MCP server to import"
    _order = "sequence, id"

    wizard_id = fields.Many2one("mcp.server.import.wizard", required=True, ondelete="cascade")
    sequence = fields.Integer()
    selected = fields.Boolean("Import", default=True, help="Create a server for this entry when you click Create.")
    name = fields.Char(required=True, readonly=True)
    transport = fields.Selection(
        TRANSPORTS,
        readonly=True,
    )
    target = fields.Char(readonly=True, help="The server's URL, or the command line that starts it.")
    secrets = fields.Char(readonly=True, help="The secrets this entry carries (names only); they are stored encrypted.")
    disabled = fields.Boolean(readonly=True, help="Disabled in the source file: the server is created archived.")
    always_allow = fields.Char(
        "Always allowed tools",
        readonly=True,
        help="Tools the source client ran without asking. Review each tool's approval setting after syncing.",
    )
    ignored_keys = fields.Char(readonly=True, help="Keys of the entry this import does not use.")
    note = fields.Char(readonly=True)
    status = fields.Selection(
        [("ready", "Ready"), ("invalid", "Cannot be imported"), ("created", "Created"), ("failed", "Failed")],
        default="ready",
        readonly=True,
    )
    error = fields.Text(readonly=True)
    server_id = fields.Many2one("mcp.server", string="Server", readonly=True, ondelete="set null")
