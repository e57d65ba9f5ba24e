"""The HTTP surface of MCP Apps in the chat: what the widget asks for an app of a tool call (open
it, call its server's tools, read its resources, keep what it tells the model), and the sandbox page
the app is shown in.

The sandbox page is served from Odoo's URL but in a sandbox without same-origin rights (the CSP
`sandbox` directive): its origin is opaque, so nothing in it can read Odoo's cookies, DOM or
session, and its CSP lets it reach only what the app declared. Access checks and the app's policy
live in the models (conversation/app*.py).
"""

import logging

from odoo import http
from odoo.http import Response, request

from ..exceptions import ChatRefused
from ..odoo_compat import JSON_ROUTE
from .refusals import answer

_logger = logging.getLogger(__name__)

# no allow-same-origin: the page's origin is opaque, whatever URL it is served from; no
# allow-popups: a link leaves an app only through ui/open-link, which the chat confirms first
SANDBOX = "sandbox allow-scripts allow-forms allow-modals"
PAGE_HEADERS = [
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
]


class AppController(http.Controller):
    @http.route("/ai_mcp/app/open", type=JSON_ROUTE, auth="user")
    def app_open(self, conversation_id, call_id, writing=None):
        """What the chat shows the app of call `call_id` with (ai.conversation._app_open; `writing`:
        the {server, tool, app} of a call the model is still writing); or {error}."""
        return _answer(conversation_id, lambda c: c._app_open(call_id, own_origins=_own_origins(), writing=writing))

    @http.route("/ai_mcp/app/call_tool", type=JSON_ROUTE, auth="user")
    def app_call_tool(self, conversation_id, call_id, name, arguments=None, approved=False):
        """The CallToolResult of a tool the app of call `call_id` calls; or {error} (APPROVAL_REQUIRED:
        send it again with approved: true once the user allowed it)."""
        return _answer(conversation_id, lambda c: c._app_call_tool(call_id, name, arguments, approved))

    @http.route("/ai_mcp/app/read_resource", type=JSON_ROUTE, auth="user")
    def app_read_resource(self, conversation_id, call_id, uri):
        """{contents: [{uri, mimeType, text | blob}]} of a resource of the app's server; or {error}."""
        return _answer(conversation_id, lambda c: c._app_read_resource(call_id, uri))

    @http.route("/ai_mcp/app/model_context", type=JSON_ROUTE, auth="user")
    def app_model_context(self, conversation_id, call_id, content=None, structuredContent=None):  # noqa: N803
        """Keep what the app tells the model (its next turns read it): {}; or {error}."""

        def keep(conversation):
            conversation._app_model_context(call_id, content, structuredContent)
            return {}

        return _answer(conversation_id, keep)

    @http.route("/ai_mcp/app/sandbox", type="http", auth="user", methods=["GET"])
    def app_sandbox(self, conversation_id=None, call_id=None, **query):
        """The page the app of call `call_id` is shown in, under its CSP."""
        writing = {key: query.get(f"writing_{key}") for key in ("server", "tool", "app")}
        try:
            conversation = request.env["ai.conversation"]._chat_own(conversation_id)
            page, csp = conversation._app_sandbox_page(
                call_id, own_origins=_own_origins(), writing=writing if any(writing.values()) else None
            )
        except ChatRefused as refusal:
            _logger.info("MCP App sandbox refused: call=%s code=%s", call_id, refusal.code.value)
            return Response(
                refusal.message,
                status=refusal.status,
                content_type="text/plain; charset=utf-8",
                headers=[("Content-Security-Policy", f"{SANDBOX}; default-src 'none'"), *PAGE_HEADERS],
            )
        policy = f"{SANDBOX}; frame-ancestors 'self'; {csp}"
        return Response(
            page,
            status=200,
            content_type="text/html; charset=utf-8",
            headers=[("Content-Security-Policy", policy), *PAGE_HEADERS],
        )


def _answer(conversation_id, ask):
    """What `ask(conversation)` answers for the user's conversation, its refusals as every JSON
    route answers them (refusals.py)."""
    return answer(lambda: ask(request.env["ai.conversation"]._chat_own(conversation_id)))


def _own_origins():
    """The URL the browser reaches Odoo at (besides web.base.url): no app may reach it."""
    return [request.httprequest.host_url]
