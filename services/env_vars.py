"""The environment variables a stdio server is started with, as an admin enters them.

Only these (and PATH) reach the server's process: nothing is expanded from Odoo's own environment,
which holds the database password.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .errors import ConfigError, _lt


def parse_env_json(text: str | None) -> dict[str, str]:
    """A JSON object of strings, e.g. {"API_TOKEN": "..."}; raises ConfigError naming `env_vars`."""
    if not text or not str(text).strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "env_vars",
            _lt('This is not valid JSON (%(error)s). Enter a JSON object, e.g. {"API_TOKEN": "..."}.'),
            error=exc.msg,
        ) from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError("env_vars", _lt('This must be a JSON object of strings, e.g. {"API_TOKEN": "..."}.'))
    check_env_names(data, "env_vars")
    return data


def check_env_names(names: Iterable[str], field: str) -> None:
    """Raises ConfigError naming `field` for a name no process environment can hold."""
    for name in names:
        if not name or "=" in name or "\x00" in name:
            raise ConfigError(
                field,
                _lt("The variable name %(name)s is invalid. Use letters, digits and _ only."),
                name=repr(name),
            )
