"""Button results: a notification in the web client, then the form reloads to show new state."""

from __future__ import annotations

from .services.errors import AiMcpError, ConfigError, OAuthError


def notification(title: str, message: str, kind: str = "info", sticky: bool = False, reload: bool = True) -> dict:
    params = {"title": title, "message": message, "type": kind, "sticky": sticky}
    if reload:
        params["next"] = {"type": "ir.actions.client", "tag": "soft_reload"}
    return {"type": "ir.actions.client", "tag": "display_notification", "params": params}


def config_error_text(records, error: ConfigError) -> str:
    """'Field label: sentence' in the user's language, the field as the form labels it."""
    field = records._fields.get(error.field)
    label = field._description_string(records.env) if field else error.field
    return records.env._("%(field)s: %(problem)s", field=label, problem=error.translated(records.env._))


def error_text(error: AiMcpError, records=None) -> str:
    """'CODE: message Advice.', the advice left out when the message already is the advice. With
    `records`, a configuration error names the field as their form labels it, in the user's
    language, and its sentence already says how to fix it."""
    if isinstance(error, ConfigError) and records is not None:
        return f"{error.code.value}: {config_error_text(records, error)}"
    text = f"{error.code.value}: {error.message}"
    if error.advice and error.advice not in error.message:
        text = f"{text} {error.advice}"
    return text


def oauth_error_text(env, error: AiMcpError) -> str:
    """What went wrong with a sign-in, naming the provider's metadata field at fault where there is one."""
    if isinstance(error, OAuthError) and error.field:
        return env._("%(message)s (field: %(field)s)", message=error.message, field=error.field)
    return error.message
