from odoo import api, fields, models

from ..companies import company_allows, company_to_switch_to


class CloudService(models.Model):
    _name = "cloud.service"
    _description = "Cloud Service"
    _inherit = ["mail.thread"]
    _order = "name, id"
    _check_company_auto = True

    name = fields.Char(required=True, tracking=True)
    active = fields.Boolean(default=True)
    company_id = fields.Many2one(
        "res.company",
        default=lambda self: self.env.company,
        index=True,
        tracking=True,
        help="Only users working in this company chat with the service's tools; its MCP servers belong to it too. "
        "Empty: shared by every company.",
    )
    owner_id = fields.Many2one(
        "res.users",
        string="Owner",
        required=True,
        default=lambda self: self.env.user,
        index=True,
        tracking=True,
        ondelete="cascade",
    )
    member_ids = fields.Many2many(
        "res.users",
        "cloud_service_member_rel",
        "service_id",
        "user_id",
        string="Members",
        help="Members chat about this service with its servers' tools; only the owner changes the service.",
    )
    user_mcp_server_ids = fields.One2many(
        "mcp.server",
        "cloud_service_id",
        string="MCP Servers",
        domain=[("scope", "=", "user")],
        context={"default_scope": "user"},
    )
    user_mcp_server_count = fields.Integer(string="MCP Server Count", compute="_compute_user_mcp_server_count")

    @api.depends("user_mcp_server_ids")
    def _compute_user_mcp_server_count(self):
        for service in self:
            service.user_mcp_server_count = len(service.user_mcp_server_ids)

    def write(self, vals):
        result = super().write(vals)
        if "company_id" in vals:
            # a service's servers serve only its conversations: they move with it
            self.sudo().with_context(active_test=False).user_mcp_server_ids.write({"company_id": vals["company_id"]})
        if not self.env.su:
            # record rules are checked before a write; check again so an owner cannot hand a service
            # (and the servers attached to it) to someone else
            self.check_access("write")
        return result

    def _user_may_use(self, user=None):
        """Whether `user` (default: the current user) may chat with this service's tools."""
        self.ensure_one()
        user = user or self.env.user
        service = self.sudo()
        return (
            service.active
            and (user == service.owner_id or user in service.member_ids)
            and company_allows(service, user)
        )

    def _other_company_refusal(self, user):
        """Why `user` may not chat with this service's tools now when it belongs to another of their
        companies than those they are working in, and is theirs there; None otherwise."""
        company = company_to_switch_to(self, user, lambda there: there._user_may_use(user))
        if company is None:
            return None
        return self.env._(
            "%(service)s belongs to %(company)s: switch to %(company)s to chat with its tools.",
            service=self.sudo().name,
            company=company.name,
        )
