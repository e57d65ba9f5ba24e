from odoo import api, models

from ..odoo_compat import file_groups_under


class ResGroups(models.Model):
    _inherit = "res.groups"

    @api.model
    def _ai_mcp_file_groups(self, group_ids, category_id):
        """Lists the addon's groups under its category on the user form (security/ai_mcp_groups.xml),
        the way the running series lists groups."""
        file_groups_under(self.browse(group_ids), self.env["ir.module.category"].browse(category_id))
