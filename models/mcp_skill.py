"""mcp.skill: one skill an MCP server (mcp.server) publishes (extension io.modelcontextprotocol/skills),
as its last sync listed it: its name and description, the URI of its SKILL.md and its manifest (the
front matter and every file's digest and size), against which each file is checked when the model
reads it. Nothing of the skill's files is stored: they are fetched when a model asks. Assistants
(ai.assistant) offer the skills chosen for them, of servers whose skills are on."""

import json

from odoo import api, fields, models

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
    last_refusal = fields.Text(
        readonly=True,
        help="The last time a file of the skill was refused in a conversation: which check failed (size, digest, "
        "front matter) for which file. Sync the server if it was updated since.",
    )
    last_refusal_date = fields.Datetime(readonly=True)

    def _compute_file_count(self):
        for skill in self:
            skill.file_count = len(skill._skill_entry().files) if skill.manifest else 0

    @api.model
    def _record_refusal(self, conversation_id, server_name, label, text):
        """A file of the skill `label` (as the model named it) of the server `server_name` was refused
        in conversation `conversation_id`, for the reason `text`."""
        # sudo: the refusal is the server's doing, recorded for the server's admin or owner from the
        # turn's writer (which runs for the conversation's user, maybe a member of the owner's service)
        conversation = self.env["ai.conversation"].sudo().browse(conversation_id).exists()
        service_servers = conversation.cloud_service_id.user_mcp_server_ids
        offered = conversation.assistant_id.mcp_skill_ids | self.sudo().search(
            [("server_id", "in", service_servers.ids)]
        )
        skills = offered.filtered(
            lambda s: (
                s.server_id.name == server_name and label in (s.name, s.uri.split("://", 1)[-1][: -len("/SKILL.md")])
            )
        )
        skills.write({"last_refusal": text, "last_refusal_date": fields.Datetime.now()})

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
