"""The resources of a conversation's servers (MCP resources/list, templates, resources/read): opened
from a tool result's resource link, or attached in the composer as context of the next message.

Which servers: servers.py, as for prompts. A link is read from the server of the
call that returned it. Contents go back to the browser as they are read (binaries
base64, within the display caps) and are never stored: an attached text becomes part of the user's
message, which is what history and replays show.
"""

from odoo import api, models

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...services.errors import AiMcpError, ErrorCode
from ...services.mcp import expand
from .servers import mcp_refusal


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_resources(self, assistant_id, cloud_service_id=None, conversation_id=None):
        """{servers: [{server_id, server, resources, templates}], warnings: [text]}"""
        answers, warnings = self._ask_servers(
            self._conversation_servers(assistant_id, cloud_service_id, conversation_id),
            process_hub().alist_resources,
            self.env._("The resources of %(server)s are not available: %(error)s"),
        )
        servers = [
            {"server_id": server.id, "server": server.name, **listing.model_dump(mode="json")}
            for server, listing in answers
            if listing.resources or listing.templates
        ]
        return {"servers": servers, "warnings": warnings}

    @api.model
    def _chat_read_resource(
        self,
        assistant_id,
        server_id,
        uri=None,
        template=None,
        arguments=None,
        cloud_service_id=None,
        conversation_id=None,
    ):
        """{uri, contents: [{uri, mime_type, text | blob}]} of a server the conversation may use:
        `uri`, or `template` expanded with `arguments`. Raises ChatRefused."""
        server = self._conversation_server(assistant_id, server_id, cloud_service_id, conversation_id)
        if template is not None and not isinstance(arguments or {}, dict):
            raise ChatRefused.invalid(self.env._("Send the template's values as {name: text}."))
        return self._read_resource(server, uri, template, arguments)

    def _chat_open_link(self, call_id, uri):
        """{uri, contents} of a resource link that call `call_id` of this conversation returned,
        read from the server of that call. Raises ChatRefused."""
        self.ensure_one()
        call = self.sudo().message_ids.filtered(lambda m: m.role == "tool" and m.tool_call_id == call_id)[:1]
        if not call:
            raise ChatRefused.not_found(self.env)
        server = (
            self.assistant_id.with_env(self.env)
            ._usable_servers(self.cloud_service_id)
            .filtered(lambda s: s.name == call.server_name)[:1]
        )
        if not server:
            raise ChatRefused(
                ErrorCode.SERVER_GONE, self.env._("The server that returned this link is no longer available to you.")
            )
        return self._read_resource(server, uri, None, None)

    @api.model
    def _read_resource(self, server, uri, template, arguments):
        try:
            if template is not None:
                uri = expand(str(template), arguments or {})
            if not isinstance(uri, str) or not uri.strip():
                raise ChatRefused.invalid(self.env._("Name the resource to read (its URI)."))
            hub = process_hub()
            parts = hub.run(hub.aread_resource(server._server_spec(), uri, server._oauth_tokens_for(self.env.user)))
        except AiMcpError as exc:
            raise mcp_refusal(exc, server) from None
        return {
            "uri": uri,
            "server": server.name,
            "contents": [part.model_dump(mode="json", exclude={"type"}) for part in parts],
        }
