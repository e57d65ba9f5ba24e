"""ai.assistant, the skills it offers: those chosen for it among the skills its servers publish,
each offered to the model by name and description, its files read only when the model asks
(services/loop/skill_tools.py)."""

import logging

from odoo import fields, models

from ..services.errors import AiMcpError
from ..services.loop import SkillBinding

_logger = logging.getLogger(__name__)


class AiAssistant(models.Model):
    _inherit = "ai.assistant"

    mcp_skill_ids = fields.Many2many(
        "mcp.skill",
        "ai_assistant_mcp_skill_rel",
        "assistant_id",
        "skill_id",
        string="Skills",
        check_company=True,
        domain="[('server_id', 'in', mcp_server_ids)]",
        help="Skills of the assistant's servers the model may load: it is told their names and descriptions, and "
        "reads a skill's instructions and files only when it asks for them.",
    )

    def _skill_bindings(self, cloud_service=None):
        """The skills a turn may offer: those chosen for the assistant, still published by one of its
        connected servers whose skills are on, and every skill the user servers of `cloud_service`
        publish when the user may use it (as all their tools are offered). A server whose
        configuration cannot be used now is left out (its tools are too, with the warning
        _tool_bindings gives)."""
        self.ensure_one()
        servers = self._usable_servers(cloud_service).filtered("skills_enabled")
        bindings, specs = [], {}
        for skill in self._offered_skills(servers):
            server = skill.server_id
            if server.id not in specs:
                try:
                    specs[server.id] = server._server_spec()
                except AiMcpError as exc:
                    specs[server.id] = None
                    _logger.info("MCP server's skills left out of a turn: server=%s error=%s", server.name, exc)
            if specs[server.id] is not None:
                bindings.append(SkillBinding(server=specs[server.id], skill=skill._skill_entry()))
        return bindings

    def _offered_skills(self, servers):
        """The skills of `servers` (_usable_servers, the user's company allowed) a turn offers: the
        assistant's chosen ones of its system servers, all of a cloud service's user servers."""
        # sudo: the user chats with skills an AI manager chose; what they may reach is the assistant's
        chosen = self.sudo().mcp_skill_ids.filtered(lambda s: s.server_id in servers)
        # sudo: a member of the service may not read its owner's server's skills, yet chats with
        # them as with its tools; _usable_servers checked that she may use the service
        user_servers = servers.filtered(lambda s: s.scope == "user")
        published = self.env["mcp.skill"].sudo().search([("server_id", "in", user_servers.ids)])
        return chosen | published
