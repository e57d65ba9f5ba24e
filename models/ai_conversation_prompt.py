"""The prompts of a conversation's servers, for the composer's `/` menu (MCP prompts/list, prompts/get).

Which servers: ai.assistant._usable_servers, the servers whose tools the turn may use, so a prompt of
another cloud service's server is never listed nor got. The text a prompt renders to is sent by the
widget as the user's message, so history, replays and retries need nothing of their own.
"""
import logging

from odoo import _, api, models

from ..services.errors import AiMcpError, ErrorCode
from ..services.hub import get_hub
from .chat_turn import ChatRefused, not_found
from .notify import error_text

_logger = logging.getLogger(__name__)


def mcp_refusal(error, server):
    """A failure of a server asked on the user's behalf, as the 400 the widget shows."""
    # the advice for invalid parameters is about tools; the message already names the fix
    if error.code is ErrorCode.MCP_INVALID_PARAMS:
        return ChatRefused(400, error.code.value, f"{error.code.value}: {error.message}")
    return ChatRefused(400, error.code.value, error_text(error, server))


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_prompts(self, assistant_id, cloud_service_id=None, conversation_id=None):
        """{prompts: [{server_id, server, name, title, description, arguments}], warnings: [text]}"""
        prompts, warnings = [], []
        for server in self._conversation_servers(assistant_id, cloud_service_id, conversation_id):
            try:
                listing = get_hub().list_prompts(server._server_spec())
            except AiMcpError as exc:
                _logger.info("MCP prompts/list failed: server=%s error=%s", server.name, exc)
                warnings.append(_("The prompts of %(server)s are not available: %(error)s", server=server.name, error=error_text(exc, server)))
                continue
            prompts.extend(
                {"server_id": server.id, "server": server.name, **prompt.model_dump(mode="json")} for prompt in listing
            )
        return {"prompts": prompts, "warnings": warnings}

    @api.model
    def _chat_prompt_text(self, assistant_id, server_id, name, arguments=None, cloud_service_id=None, conversation_id=None):
        """The text prompt `name` of server `server_id` renders to with `arguments`. Raises ChatRefused."""
        servers = self._conversation_servers(assistant_id, cloud_service_id, conversation_id)
        try:
            server = servers.filtered(lambda s: s.id == int(server_id))
        except (TypeError, ValueError):
            raise not_found() from None
        if not server:
            raise not_found()
        if arguments is not None and not isinstance(arguments, dict):
            raise ChatRefused(400, "INVALID_REQUEST", _("Send the prompt's arguments as {name: text}."))
        try:
            spec = server._server_spec()
            prompt = next((p for p in get_hub().list_prompts(spec) if p.name == name), None)
            if prompt is None:
                raise ChatRefused(404, "PROMPT_NOT_FOUND", _("%(server)s has no prompt %(name)s (any more).", server=server.name, name=name))
            return get_hub().get_prompt(spec, prompt, arguments or {})
        except AiMcpError as exc:
            raise mcp_refusal(exc, server) from None

    @api.model
    def _conversation_servers(self, assistant_id, cloud_service_id=None, conversation_id=None):
        assistant = self._chat_assistant(assistant_id)
        if conversation_id:
            conversation = self._chat_own(conversation_id)
            if conversation.assistant_id != assistant:
                raise not_found()
            service = conversation.cloud_service_id
        else:
            service = self._chat_cloud_service(cloud_service_id)
        return assistant.with_env(self.env)._usable_servers(service)
