"""A catalog of well-known MCP servers, from which an admin creates a configured server in one click.

The catalog ships as noupdate data (data/mcp_server_preset_data.xml): administrators may correct
or extend it and a module update keeps their changes. Creating a server copies the connection
settings into a new system mcp.server and opens it, so the admin adds the token and tests it.
"""

from odoo import api, fields, models
from odoo.exceptions import UserError

from ...selections import PRESET_AUTH_TYPES, TRANSPORTS
from ...window_actions import related_list
from .mcp_server import ALLOW_STDIO_PARAM


class McpServerPreset(models.Model):
    _name = "mcp.server.preset"
    _description = "MCP Server Preset"
    _order = "sequence, name, id"

    name = fields.Char(required=True)
    sequence = fields.Integer(default=10)
    active = fields.Boolean(default=True)
    description = fields.Text(help="What the server offers.")
    setup_notes = fields.Text(help="What to do after creating the server: the token to get, the path to set, ...")
    docs_url = fields.Char(string="Documentation", help="Where the server's provider documents it.")
    provider = fields.Char(help="Who runs or publishes the server.")

    # -- connection, copied into the server ------------------------------------------------------
    transport = fields.Selection(TRANSPORTS, default="streamable_http", required=True)
    url = fields.Char(string="URL")
    auth_type = fields.Selection(PRESET_AUTH_TYPES, string="Authentication", default="none", required=True)
    api_key_header = fields.Char(string="API Key Header")
    command = fields.Char()
    args = fields.Text(string="Arguments", help="One argument per line, as on the server.")
    needs_oauth = fields.Boolean(
        string="Signs In with OAuth",
        help="The provider signs users in with OAuth: a server created from this entry signs in each user with "
        "their own account (Sign in, on the server's form, or when a conversation first needs it).",
    )

    # -- what the current user can do with it -----------------------------------------------------
    stdio_blocked = fields.Char(
        compute="_compute_stdio_blocked", help="Why this stdio preset cannot be used now; empty when it can."
    )
    server_ids = fields.One2many("mcp.server", "preset_id", string="Servers")
    server_count = fields.Integer(string="Servers Created", compute="_compute_server_count")

    @api.depends("transport")
    @api.depends_context("uid")
    def _compute_stdio_blocked(self):
        reason = self._stdio_refusal()
        for preset in self:
            preset.stdio_blocked = reason if preset.transport == "stdio" else False

    @api.depends("server_ids")
    def _compute_server_count(self):
        Server = self.env["mcp.server"].with_context(active_test=False)
        groups = Server._read_group([("preset_id", "in", self.ids)], ["preset_id"], ["__count"])
        counts = {preset.id: count for preset, count in groups}
        for preset in self:
            preset.server_count = counts.get(preset.id, 0)

    @api.model
    def _stdio_refusal(self):
        """Why the current user may not create stdio servers, or False (the rules of mcp.server)."""
        if not self.env["mcp.server"]._stdio_enabled():
            return self.env._(
                "stdio MCP servers are turned off. A system administrator can allow them with the system parameter %s.",
                ALLOW_STDIO_PARAM,
            )
        if not self.env.user.has_group("base.group_system"):
            return self.env._(
                "Only system administrators may add stdio MCP servers: they run programs on the Odoo server."
            )
        return False

    # -- actions ---------------------------------------------------------------------------------

    def action_create_server(self):
        """Create a system MCP server with this preset's settings and open it."""
        self.ensure_one()
        if self.transport == "stdio" and self._stdio_refusal():
            raise UserError(self._stdio_refusal())
        server = self.env["mcp.server"].create(self._server_values())
        return {
            "type": "ir.actions.act_window",
            "name": server.name,
            "res_model": "mcp.server",
            "res_id": server.id,
            "view_mode": "form",
            "views": [(False, "form")],
            "target": "current",
        }

    def _server_values(self):
        self.ensure_one()
        stdio = self.transport == "stdio"
        description = "\n\n".join(
            filter(
                None,
                [
                    self.description,
                    self.setup_notes,
                    self.env._("Documentation: %s", self.docs_url) if self.docs_url else None,
                ],
            )
        )
        values = {
            "name": self.name,
            "scope": "system",
            "transport": self.transport,
            "description": description or False,
            "preset_id": self.id,
        }
        if stdio:
            values.update(command=self.command, args=self.args or False)
        else:
            values.update(url=self.url, auth_type="oauth" if self.needs_oauth else self.auth_type)
            if self.api_key_header:
                values["api_key_header"] = self.api_key_header
        return values

    def action_open_servers(self):
        return related_list(
            self,
            self.env._("Servers created from %s", self.name),
            "mcp.server",
            "preset_id",
            context={"active_test": False},
        )


class McpServer(models.Model):
    _inherit = "mcp.server"

    preset_id = fields.Many2one(
        "mcp.server.preset",
        string="Created From",
        readonly=True,
        copy=False,
        ondelete="set null",
        index="btree_not_null",
        help="The catalog entry this server was created from.",
    )
