"""The chat's requests run in the companies the user switched to in the web client.

Odoo's web client keeps the switched-to companies in the `cids` cookie and sends them as the
context of its own model calls; the chat's routes (/ai_mcp/...) are called by the widget directly,
so the cookie is read here: the companies it names that the user may work in, ignoring any other.
Without the cookie a request runs, as any Odoo request, in all the user's companies."""

from odoo import models
from odoo.http import request

CHAT_PATH_PREFIX = "/ai_mcp/"


class IrHttp(models.AbstractModel):
    _inherit = "ir.http"

    @classmethod
    def _pre_dispatch(cls, rule, args):
        result = super()._pre_dispatch(rule, args)
        if request.httprequest.path.startswith(CHAT_PATH_PREFIX) and request.env.uid:
            switched = switched_company_ids(request.httprequest.cookies.get("cids"), request.env.user)
            if switched:
                request.update_context(allowed_company_ids=switched)
        return result


def switched_company_ids(cookie, user):
    """The ids of the companies `cookie` ("1-3", or "1,3") names that `user` may work in, in order."""
    allowed = set(user.sudo().company_ids.ids)
    named = [int(part) for part in (cookie or "").replace(",", "-").split("-") if part.strip().isdigit()]
    return [company_id for company_id in dict.fromkeys(named) if company_id in allowed]
