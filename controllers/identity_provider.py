"""A user's one sign-in to her company's identity provider: start (redirect to the provider) and
callback (back from it). HTTP only: the flow is in mcp.identity.provider and services/oauth/."""

import logging

from markupsafe import Markup
from werkzeug.utils import redirect

from odoo import http
from odoo.exceptions import AccessError, UserError
from odoo.http import request

from ..models.mcp_identity_provider import CALLBACK_PATH, START_PATH
from ..notify import oauth_error_text
from ..services.errors import AiMcpError, ErrorCode
from .oauth import _page, _session_id

_logger = logging.getLogger(__name__)


class IdentityProviderController(http.Controller):
    @http.route(START_PATH, type="http", auth="user", methods=["GET"])
    def identity_start(self, provider_id=None, **_query):
        """Sends the browser to the provider's sign-in page."""
        title = request.env._("Cannot sign in")
        try:
            provider = request.env["mcp.identity.provider"].browse(int(provider_id or 0)).exists()
            if not provider:
                raise UserError(request.env._("No such identity provider, or not one of your companies'."))
            url = provider._sign_in_begin(_session_id())
        except (AccessError, UserError) as exc:
            return _page(title, exc.args[0], status=403)
        except AiMcpError as exc:
            return _page(title, oauth_error_text(request.env, exc), status=502)
        except ValueError:
            return _page(
                title, request.env._("The sign-in link is malformed: provider_id must be a number."), status=400
            )
        return redirect(url, code=303, Response=http.Response)

    @http.route(CALLBACK_PATH, type="http", auth="user", methods=["GET"])
    def identity_callback(self, **params):
        """Back from the provider. A page, never an exception: the pending sign-in's removal commits."""
        try:
            provider = request.env["mcp.identity.provider"]._sign_in_finish(params, _session_id())
        except AiMcpError as exc:
            _logger.info("Identity provider callback refused: user=%s code=%s", request.env.uid, exc.code.value)
            status = 400 if exc.code in (ErrorCode.OAUTH_STATE_INVALID, ErrorCode.OAUTH_ACCESS_DENIED) else 502
            return _page(request.env._("Sign-in failed"), oauth_error_text(request.env, exc), status=status)
        return _page(
            request.env._("Signed in"),
            request.env._(
                "You are signed in to %s: the servers it vouches for you at are yours to use. You can close this tab.",
                provider.name,
            ),
            extra=Markup("<script>setTimeout(function () { window.close(); }, 1500);</script>"),
        )
