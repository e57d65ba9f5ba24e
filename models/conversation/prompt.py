"""The prompts of a conversation's servers, for the composer's `/` menu (MCP prompts/list, prompts/get).

The text a prompt renders to is sent by the widget as the user's message, so history, replays and
retries need nothing of their own.
"""

from odoo import api, models

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...services.errors import AiMcpError, ErrorCode
from .servers import mcp_refusal


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_prompts(self, assistant_id, cloud_service_id=None, conversation_id=None):
        """{prompts: [{server_id, server, name, title, description, arguments}], warnings: [text]}"""
        answers, warnings = self._ask_servers(
            self._conversation_servers(assistant_id, cloud_service_id, conversation_id),
            process_hub().alist_prompts,
            self.env._("The prompts of %(server)s are not available: %(error)s"),
        )
        prompts = [
            {"server_id": server.id, "server": server.name, **prompt.model_dump(mode="json")}
            for server, listing in answers
            for prompt in listing
        ]
        return {"prompts": prompts, "warnings": warnings}

    @api.model
    def _chat_prompt_text(
        self, assistant_id, server_id, name, arguments=None, cloud_service_id=None, conversation_id=None
    ):
        """The text prompt `name` of server `server_id` renders to with `arguments`. Raises ChatRefused."""
        server = self._conversation_server(assistant_id, server_id, cloud_service_id, conversation_id)
        if arguments is not None and not isinstance(arguments, dict):
            raise ChatRefused.invalid(self.env._("Send the prompt's arguments as {name: text}."))
        try:
            spec, tokens = server._server_spec(), server._oauth_tokens_for(self.env.user)
            hub = process_hub()
            prompt = next((p for p in hub.run(hub.alist_prompts(spec, tokens)) if p.name == name), None)
            if prompt is None:
                raise ChatRefused(
                    ErrorCode.PROMPT_NOT_FOUND,
                    self.env._("%(server)s has no prompt %(name)s (any more).", server=server.name, name=name),
                )
            return hub.run(hub.aget_prompt(spec, prompt, arguments or {}, tokens))
        except AiMcpError as exc:
            raise mcp_refusal(exc, server) from None
