"""mcp.skill: one skill an MCP server (mcp.server) publishes (extension io.modelcontextprotocol/skills),
as its last sync listed it: its name and description, the URI of its SKILL.md and its manifest (the
front matter and every file's digest and size), against which each file is checked when the model
reads it. Nothing of the skill's files is stored: they are fetched when a model asks. Assistants
(ai.assistant) offer the skills chosen for them, of servers whose skills are on."""

import json

from odoo import fields, models

from ..services.mcp import SkillEntry


class McpSkill(models.Model):
    _name = "mcp.skill"
    _description = "MCP Skill"
    _order = "server_id, name, id"

    name = fields.Char(required=True, readonly=True, help="The skill's name, from its front matter.")
    description = fields.Text(readonly=True, help="What the model is told of the skill before it loads it.")
    uri = fields.Char(string="URI", required=True, readonly=True, help="Where its SKILL.md is read from.")
    server_id = fields.Many2one("mcp.server", string="Server", required=True, ondelete="cascade", index=True)
    active = fields.Boolean(default=True, help="Cleared when the server no longer lists the skill.")
    scope = fields.Selection(related="server_id.scope", store=True, index=True)
    owner_id = fields.Many2one(related="server_id.owner_id", store=True, index=True)
    company_id = fields.Many2one(related="server_id.company_id", store=True, index=True)
    manifest = fields.Text(
        readonly=True, help="The skill as its server lists it (JSON): its front matter, each file's digest and size."
    )
    file_count = fields.Integer(string="Files", compute="_compute_file_count")

    def _compute_file_count(self):
        for skill in self:
            skill.file_count = len(skill._skill_entry().files) if skill.manifest else 0

    def _skill_entry(self):
        """The SkillEntry the sync stored, which the files are checked against."""
        self.ensure_one()
        return SkillEntry.model_validate_json(self.manifest)

    @staticmethod
    def _values_from_entry(entry):
        return {
            "name": entry.name,
            "description": entry.description,
            "manifest": json.dumps(entry.model_dump(mode="json"), sort_keys=True),
            "active": True,
        }
