"""mcp.server, the skills it publishes (extension io.modelcontextprotocol/skills): whether they are
offered at all, and its mcp.skill records brought in line with what a sync lists. Only the listing
is stored; a skill's files are read when a model asks (services/loop/skill_tools.py)."""

from odoo import _, api, fields, models

from .sync import write_changed


class McpServer(models.Model):
    _inherit = "mcp.server"

    skills_enabled = fields.Boolean(
        string="Skills",
        default=True,
        help="Offer the skills this server publishes to the assistants they are chosen for. Off: no assistant "
        "is offered them, and none of their files is read.",
    )
    skill_ids = fields.One2many("mcp.skill", "server_id", string="Published Skills")
    skill_count = fields.Integer(compute="_compute_skill_count")

    @api.depends("skill_ids")
    def _compute_skill_count(self):
        for server in self:
            server.skill_count = len(server.skill_ids)

    def _apply_skills(self, entries):
        """Create, update and deactivate this server's mcp.skill records from a listing (by the URI
        of their SKILL.md, which identifies a skill on its server). Returns a sentence for the
        sync's summary, empty when the server publishes none and had none."""
        self.ensure_one()
        Skill = self.env["mcp.skill"].with_context(active_test=False)
        existing = {skill.uri: skill for skill in Skill.search([("server_id", "=", self.id)])}
        to_create = []
        for entry in entries:
            values = Skill._values_from_entry(entry)
            skill = existing.pop(entry.uri, None)
            if skill is None:
                to_create.append({**values, "uri": entry.uri, "server_id": self.id})
            else:
                write_changed(skill, values)
        if to_create:
            Skill.create(to_create)
        gone = Skill.browse([s.id for s in existing.values() if s.active])
        gone.write({"active": False})
        if not entries and not gone:
            return ""
        # _() and not self.env._: the daily cron syncs in an environment without a language (sync.py)
        return _("%(count)s skills published, %(gone)s no longer.", count=len(entries), gone=len(gone))
