"""How a route of the chat answers a request the models refuse (ChatRefused): one rule for every
route of chat.py and app.py."""

from werkzeug.exceptions import NotFound

from odoo.http import request

from ..exceptions import ChatRefused
from ..services.errors import ErrorCode


def answer(ask):
    """What `ask()` returns; a refusal as {error: {code, message, ...}}, except a record that is
    missing or not the user's (NOT_FOUND): a 404, the same for both so that ids cannot be probed."""
    try:
        return ask()
    except ChatRefused as refusal:
        if refusal.code is ErrorCode.NOT_FOUND:
            raise NotFound() from None
        return refusal.as_dict()


def refused(refusal):
    """The answer of a plain HTTP route (a streamed turn) that is refused: {error} with the
    refusal's HTTP status; one that says when to send again (a pace limit) in Retry-After too."""
    headers = [("Retry-After", str(refusal.details["retry_after"]))] if "retry_after" in refusal.details else None
    return request.make_json_response(refusal.as_dict(), headers=headers, status=refusal.status)
