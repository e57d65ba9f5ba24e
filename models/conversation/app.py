"""The interactive apps (MCP Apps) of a conversation's tool calls: what the chat needs to show the
app of a call (its HTML, the policy it runs under, the call's arguments and result), and the
resources it reads from its server.

An app belongs to a call of the conversation: the stored tool_call event names its ui:// resource,
its tool and its server. The server must still be one the conversation may use, with its apps on,
and the tool must still show that app; otherwise the app is refused, and the call's result stays
in the chat as text. What an app calls and tells the model: app_call.py and
app_context.py.
"""

import functools
import json
import logging
from typing import NamedTuple
from urllib.parse import urlencode

from markupsafe import Markup

from odoo import models
from odoo.tools import file_open

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...services.apps import AppCache, call_tool_result, log_dropped, resource_contents, sandbox_policy
from ...services.errors import AiMcpError, ErrorCode
from ...services.events import FAILED_CALL_STATUS, parse_event
from ...turn.states import ConversationState
from .servers import mcp_refusal

_logger = logging.getLogger(__name__)

SANDBOX_PATH = "/ai_mcp/app/sandbox"
# the apps this process read lately (services/apps/sandbox.py)
APP_CACHE = AppCache()


class AppCall(NamedTuple):
    """A call of the conversation that shows an app: its tool_call event's payload, its server
    (sudo, one the conversation may use) and its tool."""

    payload: dict
    server: models.Model
    tool: models.Model

    @property
    def uri(self):
        return self.payload["app"]

    @property
    def title(self):
        """What the chat calls the app (its dialogs, "via <app>", its full-screen header): its
        tool's title, else its server's name, never a tool's raw name."""
        return self.tool.title or self.server.name


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    # -- what the chat asks ----------------------------------------------------------------------

    def _app_open(self, call_id, own_origins=(), writing=None):
        """What the chat shows the app of call `call_id` with: {uri, title, server, server_id, tool, html,
        csp (the domains granted), permissions (granted), allow, prefers_border, sandbox_url,
        arguments, result (the call's CallToolResult once it finished, else None), cancelled}.
        `own_origins`: the URLs Odoo is reached at besides web.base.url. `writing`: the
        {server, tool, app} of a call the model is still writing (see _app_call_payload).
        Raises ChatRefused."""
        self.ensure_one()
        call = self._app_call(call_id, writing)
        app, policy = self._app_policy(call, own_origins)
        tool = call.tool
        result, cancelled = self._app_call_result(call_id)
        return {
            "uri": app.uri,
            "title": call.title,
            "server": call.server.name,
            "server_id": call.server.id,
            "tool": {
                "name": tool.name,
                "title": tool.title or "",
                "description": tool.description or "",
                "inputSchema": json.loads(tool.input_schema) if tool.input_schema else {"type": "object"},
            },
            "html": app.html,
            "csp": _csp_json(policy.csp),
            "permissions": {name: {} for name in policy.permissions},
            "allow": policy.allow(),
            "prefers_border": app.prefers_border,
            "sandbox_url": f"{SANDBOX_PATH}?{urlencode(_sandbox_query(self.id, call_id, writing))}",
            "arguments": call.payload.get("arguments") or {},
            "result": result,
            "cancelled": cancelled,
        }

    def _app_sandbox_page(self, call_id, own_origins=(), writing=None):
        """(HTML, CSP) of the page call `call_id`'s app is shown in: the sandbox proxy, told the
        app's CSP and permissions. Raises ChatRefused."""
        self.ensure_one()
        _app, policy = self._app_policy(self._app_call(call_id, writing), own_origins)
        csp = policy.content_security_policy()
        page = self.env["ir.qweb"]._render(
            "ai_mcp.app_sandbox_page", {"csp": csp, "allow": policy.allow(), "script": _proxy_script()}
        )
        return f"<!DOCTYPE html>\n{page}", csp

    def _app_read_resource(self, call_id, uri):
        """{contents: [{uri, mimeType, text | blob}]}: a resource of the server of call `call_id`'s
        app, read for that app. Raises ChatRefused."""
        self.ensure_one()
        call = self._app_call(call_id)
        if not isinstance(uri, str) or not uri.strip():
            raise ChatRefused.invalid(self.env._("Name the resource to read (its URI)."))
        server = call.server
        try:
            hub = process_hub()
            parts = hub.run(hub.aread_resource(server._server_spec(), uri, server._oauth_tokens_for(self.env.user)))
        except AiMcpError as exc:
            raise mcp_refusal(exc, server) from None
        return {"contents": [resource_contents(part) for part in parts]}

    # -- the call and its app --------------------------------------------------------------------

    def _app_call(self, call_id, writing=None):
        """The AppCall of call `call_id`. Raises ChatRefused: NOT_FOUND for a call the conversation
        does not have, APP_UNAVAILABLE when it shows no app (any more), SERVER_GONE when its server
        is no longer one the conversation may use."""
        payload = self._app_call_payload(call_id, writing)
        if payload is None:
            raise ChatRefused.not_found(self.env)
        if not payload.get("app"):
            raise ChatRefused(ErrorCode.APP_UNAVAILABLE, self.env._("This tool call has no app."))
        server = (
            self.assistant_id.with_env(self.env)
            ._usable_servers(self.cloud_service_id)
            .filtered(lambda s: s.name == payload.get("server"))[:1]
        )
        if not server:
            raise ChatRefused(
                ErrorCode.SERVER_GONE, self.env._("The server of this app is no longer available to you.")
            )
        if not server.apps_enabled:
            raise ChatRefused(
                ErrorCode.APP_UNAVAILABLE,
                self.env._("The apps of %s are turned off; its results show as text.", server.name),
            )
        tool = server.tool_ids.filtered(lambda t: t.name == payload.get("tool"))[:1]
        if not tool or tool.app_uri != payload["app"]:
            raise ChatRefused(
                ErrorCode.APP_UNAVAILABLE,
                self.env._(
                    "%(tool)s of %(server)s no longer shows this app.", tool=payload.get("tool"), server=server.name
                ),
            )
        return AppCall(payload, server, tool)

    def _app_call_payload(self, call_id, writing=None):
        """The payload of the tool_call event of call `call_id` in this conversation, or None.

        A call the model is still writing is not stored yet (its tool_call comes with the whole
        arguments), yet its app is shown while the arguments grow: while the conversation runs,
        `writing` ({server, tool, app} of its tool_input events) stands for it, checked like a
        stored call (a server the conversation may use, a tool that has that app). It opens no
        more than the user could open by asking for that tool."""
        if not isinstance(call_id, str) or not call_id:
            return None
        stored = self._app_call_event(call_id, "tool_call")
        if stored is not None or self.state != ConversationState.RUNNING or not isinstance(writing, dict):
            return stored
        named = {key: writing.get(key) for key in ("server", "tool", "app")}
        if not all(isinstance(value, str) and value for value in named.values()):
            return None
        return {"id": call_id, "arguments": {}, **named}

    def _app_call_event(self, call_id, event_type):
        """The payload of the latest `event_type` event of call `call_id` in this conversation, or None."""
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT payload FROM ai_conversation_event WHERE conversation_id = %s AND type = %s"
            " AND payload->>'id' = %s ORDER BY seq DESC LIMIT 1",
            (self.id, event_type, call_id),
        )
        row = self.env.cr.fetchone()
        return row[0] if row else None

    def _app_call_result(self, call_id):
        """(CallToolResult JSON of the stored result of call `call_id`, or None while it runs;
        whether the call was cancelled or denied rather than run)."""
        payload = self._app_call_event(call_id, "tool_result")
        if payload is None:
            return None, False
        event = parse_event(payload)
        return call_tool_result(event.content, not event.ok), event.error_code in FAILED_CALL_STATUS

    def _app_policy(self, call, own_origins):
        """(AppResource, SandboxPolicy) of `call`'s app, read (or taken from the cache) with the
        current user's grant. Raises ChatRefused."""
        server = call.server
        try:
            spec = server._server_spec()
            key = APP_CACHE.key(spec, call.uri)
            app = APP_CACHE.get(key)
            fresh = app is None
            if fresh:
                hub = process_hub()
                app = hub.run(hub.aread_app(spec, call.uri, server._oauth_tokens_for(self.env.user)))
                APP_CACHE.put(key, app)
        except AiMcpError as exc:
            _logger.info("MCP App not shown: server=%s app=%s error=%s", server.name, call.uri, exc)
            raise mcp_refusal(exc, server) from None
        origins = [self.env["ir.config_parameter"].sudo().get_param("web.base.url") or "", *own_origins]
        policy = sandbox_policy(app, server._app_permissions_granted(app.permissions), origins)
        if fresh:  # once per read, not each time the app is shown
            log_dropped(policy, app, server.name)
        return app, policy


@functools.cache
def _proxy_script():
    with file_open("ai_mcp/static/src/app_sandbox/sandbox_proxy.js") as script:
        return Markup(script.read())  # noqa: S704 - the addon's own script, not user input


def _csp_json(csp):
    """The granted domains as `_meta.ui.csp` names them."""
    return {
        "connectDomains": list(csp.connect_domains),
        "resourceDomains": list(csp.resource_domains),
        "frameDomains": list(csp.frame_domains),
        "baseUriDomains": list(csp.base_uri_domains),
    }


def _sandbox_query(conversation_id, call_id, writing):
    query = {"conversation_id": conversation_id, "call_id": call_id}
    if isinstance(writing, dict):
        query.update({f"writing_{key}": writing.get(key) or "" for key in ("server", "tool", "app")})
    return query
