"""ai.assistant, the skills it offers: those chosen for it among the skills its servers publish,
each offered to the model by name and description, its files read only when the model asks
(services/loop/skill_tools.py)."""

import logging

from odoo import fields, models

from ..companies import company_allows
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

    def _skill_bindings(self):
        """The skills a turn may offer: those chosen for the assistant, still published by one of its
        connected servers whose skills are on. A server whose configuration cannot be used now is
        left out (its tools are too, with the warning _tool_bindings gives)."""
        self.ensure_one()
        servers = self._usable_servers().filtered("skills_enabled")
        bindings, specs = [], {}
        # sudo: the user chats with skills an AI manager chose; what they may reach is the assistant's
        for skill in self.sudo().mcp_skill_ids:
            server = skill.server_id
            if server not in servers or not company_allows(server, self.env.user):
                continue
            if server.id not in specs:
                try:
                    specs[server.id] = server._server_spec()
                except AiMcpError as exc:
                    specs[server.id] = None
                    _logger.info("MCP server's skills left out of a turn: server=%s error=%s", server.name, exc)
            if specs[server.id] is not None:
                bindings.append(SkillBinding(server=specs[server.id], skill=skill._skill_entry()))
        return bindings
