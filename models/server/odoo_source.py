"""mcp.server of transport "This Odoo": the Odoo the addon runs in, as a tool source. One per
database (data record, shared by every company); its tools are the fixed catalogue of
services/odoo_catalogue.py, synced as any server's, and their calls run in-process as the
conversation's user (odoo_tools/), never over MCP: no URL, no key."""

from odoo import api, models
from odoo.exceptions import ValidationError

from ...services.mcp import ConnectionReport, ServerInfo
from ...services.odoo_catalogue import catalogue_infos

ODOO_SOURCE_VERSION = "1.0"


class McpServer(models.Model):
    _inherit = "mcp.server"

    def _connect(self):
        """This Odoo needs no connection: its report lists the catalogue."""
        if self.transport == "odoo":
            return _odoo_report()
        return super()._connect()

    def _connect_all(self):
        local = self.filtered(lambda s: s.transport == "odoo")
        outcomes = super(McpServer, self - local)._connect_all() if self - local else {}
        outcomes.update({server.id: _odoo_report() for server in local})
        return outcomes

    @api.constrains("transport", "scope", "cloud_service_id")
    def _check_odoo_source(self):
        local = self.filtered(lambda s: s.transport == "odoo")
        if not local:
            return
        if any(server.scope != "system" for server in local):
            raise ValidationError(self.env._("This Odoo is a system server: assistants are given it."))
        if self.with_context(active_test=False).search_count([("transport", "=", "odoo")]) > 1:
            raise ValidationError(self.env._("This Odoo is a tool source already: there is one per database."))

    @api.model
    def _sync_odoo_source(self):
        """Bring This Odoo's tools in line with the catalogue (at install and each update)."""
        for server in self.with_context(active_test=False).search([("transport", "=", "odoo")]):
            server._sync_tools()
            # the catalogue is this module's own code, reviewed with it: a changed tool is not set aside
            for tool in server.tool_ids.filtered(lambda t: t.approved_hash != t.content_hash):
                tool.approved_hash = tool.content_hash


def _odoo_report():
    tools = catalogue_infos()
    return ConnectionReport(
        server=ServerInfo(name="This Odoo", version=ODOO_SOURCE_VERSION, protocol_version="odoo", capabilities={}),
        tools=tools,
        total_tools=len(tools),
        warnings=[],
        latency_ms=0,
        stderr_tail=[],
    )
