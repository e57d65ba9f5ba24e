"""Suggestions as the user types a prompt's argument or a resource template's value in the composer
(MCP completion/complete), asked of a server the conversation may use, as the user (servers.py).

A suggestion never refuses: a server that fails, is slow or does not complete answers none
(services/mcp/completion.py); only a server the user may not use, or a malformed request, is refused.
"""

from pydantic import ValidationError

from odoo import api, models

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...services.mcp import CompletionRequest


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_complete(
        self,
        assistant_id,
        server_id,
        argument,
        value="",
        prompt=None,
        template=None,
        arguments=None,
        cloud_service_id=None,
        conversation_id=None,
    ):
        """{values, has_more}: what server `server_id` suggests for `argument` of prompt `prompt`
        (or of the resource template `template`) from `value`, the other arguments already filled in
        being `arguments`. Raises ChatRefused."""
        server = self._conversation_server(assistant_id, server_id, cloud_service_id, conversation_id)
        request = self._completion_request(argument, value, prompt, template, arguments)
        hub = process_hub()
        answer = hub.run(hub.acomplete(server._server_spec(), request, server._oauth_tokens_for(self.env.user)))
        return answer.model_dump(mode="json")

    @api.model
    def _completion_request(self, argument, value, prompt, template, arguments):
        if (prompt is None) == (template is None):
            raise ChatRefused.invalid(self.env._("Name the prompt or the resource template to complete."))
        try:
            return CompletionRequest(
                kind="prompt" if prompt is not None else "template",
                name=prompt if prompt is not None else template,
                argument=argument,
                value=value or "",
                context=arguments or {},
            )
        except ValidationError:
            raise ChatRefused.invalid(
                self.env._("Send the argument to complete as text and the values filled in as {name: text}.")
            ) from None
