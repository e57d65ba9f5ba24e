"""OAuth sign-in routes: start (redirect to the provider), callback (back from it), and Odoo's
client metadata document (its client id where providers accept those). HTTP only: the flow is
in mcp.server (models/server/oauth.py) and services/oauth/."""

import logging

from markupsafe import Markup, escape
from werkzeug.utils import redirect

from odoo import http
from odoo.exceptions import AccessError, UserError
from odoo.http import request

from ..exceptions import ChatRefused
from ..models.server.oauth import CALLBACK_PATH, CLIENT_METADATA_PATH, START_PATH
from ..notify import oauth_error_text
from ..services.errors import AiMcpError, ErrorCode
from ..services.oauth import client_metadata

_logger = logging.getLogger(__name__)

PAGE = Markup(
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>%(title)s</title>"
    "<meta name='viewport' content='width=device-width, initial-scale=1'></head>"
    "<body style='font-family: sans-serif; max-width: 40em; margin: 4em auto; padding: 0 1em'>"
    "<h1 style='font-size: 1.4em'>%(title)s</h1>"
    "<p class='o_ai_mcp_oauth_message'>%(message)s</p>%(extra)s</body></html>"
)


class OAuthController(http.Controller):
    @http.route(START_PATH, type="http", auth="user", methods=["GET"])
    def oauth_start(self, server_id=None, conversation_id=None, scope=None, **_query):
        """Sends the browser to the provider's sign-in page for a server (the user's own grant, or
        the shared one for its manager)."""
        try:
            server = request.env["mcp.server"].sudo().browse(int(server_id or 0)).exists()
            conversation = request.env["ai.conversation"]
            if conversation_id:
                conversation = conversation._chat_own(conversation_id)
            if not server:
                raise UserError(request.env._("No such MCP server."))
            url = server.with_user(request.env.user)._oauth_begin(
                _session_id(), conversation=conversation, scope=scope or None
            )
        except (AccessError, UserError) as exc:
            return _page(request.env._("Cannot sign in"), exc.args[0], status=403)
        except ChatRefused as refusal:
            return _page(request.env._("Cannot sign in"), refusal.message, status=refusal.status)
        except AiMcpError as exc:
            return _page(request.env._("Cannot sign in"), oauth_error_text(request.env, exc), status=502)
        except ValueError:
            return _page(
                request.env._("Cannot sign in"),
                request.env._("The sign-in link is malformed: server_id must be a number."),
                status=400,
            )
        return redirect(url, code=303, Response=http.Response)

    @http.route(CALLBACK_PATH, type="http", auth="user", methods=["GET"])
    def oauth_callback(self, **params):
        """Back from the provider. The response is a page, never an exception: the transaction
        commits the removal of the pending sign-in, so a state is used once whatever happens."""
        try:
            server, conversation = request.env["mcp.server"]._oauth_finish(params, _session_id())
        except AiMcpError as exc:
            _logger.info("OAuth callback refused: user=%s code=%s", request.env.uid, exc.code.value)
            status = 400 if exc.code in (ErrorCode.OAUTH_STATE_INVALID, ErrorCode.OAUTH_ACCESS_DENIED) else 502
            return _page(request.env._("Sign-in failed"), oauth_error_text(request.env, exc), status=status)
        if conversation:
            message = request.env._(
                "You are signed in to %s. You can close this tab: the conversation goes on by itself.", server.name
            )
        else:
            message = request.env._(
                "You are signed in to %s. You can close this tab and reload the server's form.", server.name
            )
        # the tab was opened by the chat: close it where the browser lets a page do so
        return _page(
            request.env._("Signed in"),
            message,
            extra=Markup("<script>setTimeout(function () { window.close(); }, 1500);</script>"),
        )

    @http.route(CLIENT_METADATA_PATH, type="http", auth="none", methods=["GET"], csrf=False)
    def oauth_client_metadata(self, **_query):
        """Odoo's client metadata document: where a provider supports them, this URL is Odoo's
        client id and no registration is needed."""
        env = request.env(su=True)
        server = env["mcp.server"]
        document = client_metadata(
            server._oauth_url(CALLBACK_PATH),
            server._oauth_client_name(),
            client_uri=server.get_base_url(),
            client_id=server._oauth_url(CLIENT_METADATA_PATH),
        )
        return request.make_json_response(document, headers={"Cache-Control": "public, max-age=3600"})


def _session_id():
    # the state is bound to the browser session that started the sign-in (stored as a hash)
    return request.session.sid or ""


def _page(title, message, status=200, extra=None):
    body = PAGE % {"title": escape(title), "message": escape(message), "extra": extra or Markup("")}
    return request.make_response(body, headers=[("Content-Type", "text/html; charset=utf-8")], status=status)
