"""The errors the chat's requests are refused with.

`ChatRefused` is raised by the models (ai.conversation and its extensions) when a chat request is
not served, and turned into an HTTP answer by the controllers. Its code is one of services'
`ErrorCode` values, so the widget, the logs and the services share one list of codes. Unlike
services/errors.py (failures met while working: a server, the model, a tool; no Odoo, English), these
are refusals of the user's request itself, translated, each with its HTTP status.
"""

from typing import Any

from .services.errors import ErrorCode

# the HTTP status each refusal is answered with; any other code (a server's failure met on the
# user's behalf) is a 400 whose message says what to fix
HTTP_STATUS = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.CSRF_INVALID: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.SERVER_GONE: 404,
    ErrorCode.PROMPT_NOT_FOUND: 404,
    ErrorCode.CONVERSATION_BUSY: 409,
    ErrorCode.NOT_WAITING: 409,
    ErrorCode.ALREADY_RECEIVED: 409,
    ErrorCode.PACE_LIMITED: 429,
    ErrorCode.BUDGET_SPENT: 402,
}


class ChatRefused(Exception):
    """A chat request that is not served, with the translated message the user sees. NOT_FOUND is
    the same for a record that does not exist and one the user may not use. `details` travel with
    the code to the client (e.g. the conversation a message already went to)."""

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.status = HTTP_STATUS.get(code, 400)
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"error": {**self.details, "code": self.code.value, "message": self.message}}

    @classmethod
    def not_found(cls, env: Any) -> "ChatRefused":
        """In `env`'s language: the refusal is also met outside a request (a flow's run, a cron)."""
        return cls(
            ErrorCode.NOT_FOUND, env._("No such assistant, cloud service or conversation, or you may not use it.")
        )

    @classmethod
    def invalid(cls, message: str) -> "ChatRefused":
        return cls(ErrorCode.INVALID_REQUEST, message)
