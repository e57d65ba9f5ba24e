"""The MCP servers a conversation may use beyond the turn's tools (prompts, resources), and asking
them on the user's behalf.

Which servers: ai.assistant._usable_servers, the servers whose tools the turn may use, in the
conversation's company, so nothing of another cloud service's server, or of another company's, is
ever listed or read.
"""

import logging

from odoo import api, models

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...notify import error_text
from ...services.errors import AiMcpError, ErrorCode

_logger = logging.getLogger(__name__)


def mcp_refusal(error, server):
    """A failure of a server asked on the user's behalf, as the 400 the widget shows."""
    # the advice for invalid parameters is about tools; the message already names the fix
    if error.code is ErrorCode.MCP_INVALID_PARAMS:
        return ChatRefused(error.code, f"{error.code.value}: {error.message}")
    return ChatRefused(error.code, error_text(error, server))


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _conversation_servers(self, assistant_id, cloud_service_id=None, conversation_id=None):
        assistant = self._usable_assistant(assistant_id)
        if conversation_id:
            conversation = self._chat_own(conversation_id)
            if conversation.assistant_id != assistant:
                raise ChatRefused.not_found(self.env)
            service = conversation.cloud_service_id
            env = conversation.env(su=self.env.su)
        else:
            service = self._usable_cloud_service(cloud_service_id)
            # the company a conversation started now belongs to (ai_conversation.py `_chat_send`)
            company = assistant.company_id or service.company_id or self.env.company
            env = self.with_context(allowed_company_ids=company.ids).env
        return assistant.with_env(env)._usable_servers(service)

    @api.model
    def _conversation_server(self, assistant_id, server_id, cloud_service_id=None, conversation_id=None):
        """Server `server_id`, when the conversation may use it; else the 404 of a missing record."""
        servers = self._conversation_servers(assistant_id, cloud_service_id, conversation_id)
        wanted = self._sent_id(server_id)
        server = servers.filtered(lambda s: s.id == wanted)
        if not server:
            raise ChatRefused.not_found(self.env)
        return server

    @api.model
    def _ask_servers(self, servers, ask, unavailable):
        """([(server, answer)], warnings): what the coroutine `ask(spec, tokens)` answers for each
        server, with the current user's OAuth grant where it signs in; a server that fails is named
        in the warnings with `unavailable`, a translated text with %(server)s and %(error)s; the
        others still answer."""
        hub = process_hub()
        answers, warnings = [], []
        for server in servers:
            try:
                answers.append((server, hub.run(ask(server._server_spec(), server._oauth_tokens_for(self.env.user)))))
            except AiMcpError as exc:
                _logger.info("MCP server not answering the chat: server=%s error=%s", server.name, exc)
                warnings.append(unavailable % {"server": server.name, "error": error_text(exc, server)})
        return answers, warnings
