"""Button results: a notification in the web client, then the form reloads to show new state."""
from __future__ import annotations

from ..services.errors import AiMcpError


def notification(title: str, message: str, kind: str = "info", sticky: bool = False, reload: bool = True) -> dict:
    params = {"title": title, "message": message, "type": kind, "sticky": sticky}
    if reload:
        params["next"] = {"type": "ir.actions.client", "tag": "soft_reload"}
    return {"type": "ir.actions.client", "tag": "display_notification", "params": params}


def error_text(error: AiMcpError) -> str:
    """'CODE: message Advice.', the advice left out when the message already is the advice."""
    text = f"{error.code.value}: {error.message}"
    if error.advice and error.advice not in error.message:
        text = f"{text} {error.advice}"
    return text
