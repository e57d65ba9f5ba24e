"""mcp.server, signing in with the deployment's workload identity: the JWT a platform issues to the
Odoo deployment, presented in the JWT bearer grant (services/oauth/workload.py), for a shared
server. Only where Odoo reads that JWT is set here; the grant is kept and renewed as a company
client's (oauth.py)."""

from odoo import fields, models

from ...services.oauth import WorkloadClient, WorkloadTokens
from .mcp_oauth_token import OdooTokenStore

WORKLOAD_FLOW = "workload_identity"


class McpServer(models.Model):
    _inherit = "mcp.server"

    oauth_flow = fields.Selection(
        selection_add=[(WORKLOAD_FLOW, "This deployment (workload identity)")],
        ondelete={WORKLOAD_FLOW: "set default"},
    )
    # system administrators only: what the file or variable holds is sent to the server's
    # authorization server, so naming it is the operator's, as a stdio server's command is
    oauth_workload_token = fields.Char(
        string="Workload Token",
        groups="base.group_system",
        copy=False,
        help="Where the platform puts the JWT it issues to this Odoo deployment for this server's authorization "
        "server: a file (e.g. a Kubernetes projected service account token) or an environment variable written "
        "$NAME. Read again each time a token is fetched. Only system administrators set it.",
    )

    def _oauth_workload(self):
        self.ensure_one()
        return self.auth_type == "oauth" and self.oauth_flow == WORKLOAD_FLOW

    def _oauth_machine(self):
        # a workload signs in by itself as a company client does: shared, no person, no browser
        return super()._oauth_machine() or self._oauth_workload()

    def _oauth_machine_grant(self):
        if not self._oauth_workload():
            return super()._oauth_machine_grant()
        # sudo: where the JWT is read is a system administrator's setting, read for any user of the server
        source = self.sudo().oauth_workload_token or ""
        client = WorkloadClient(
            server_name=self.name,
            token_source=source,
            client_id=(self.oauth_client_id or "").strip() or None,
            scope=self.oauth_scopes or None,
            dpop=self.oauth_dpop,
        )
        return WorkloadTokens(
            OdooTokenStore(self.env.registry, self.id, False),
            client,
            self.url,
            self._oauth_http(),
            sse=self.transport == "sse",
        )

    def _oauth_signed_in_as(self, grant):
        if self.oauth_flow == WORKLOAD_FLOW:
            return self.env._("Workload identity")
        return super()._oauth_signed_in_as(grant)
