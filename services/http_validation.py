"""Checks for user-supplied URLs and HTTP headers, with messages that name the fix."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from .errors import ConfigError, _lt

# RFC 9110 section 5.1: a field name is a token.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 section 5.5: visible ASCII, spaces and tabs inside, obs-text allowed; never CR, LF or NUL.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
# Set by httpx and the MCP transport themselves; a user value would break the protocol.
_RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "mcp-session-id",
        "mcp-protocol-version",
    }
)


def check_url(url: str | None, field: str = "url") -> str:
    """Return the URL stripped, or raise ConfigError naming `field`."""
    if not url or not url.strip():
        raise ConfigError(field, _lt("An address is required. Enter it in full, e.g. https://mcp.example.com/mcp."))
    url = url.strip()
    if any(ch.isspace() for ch in url):
        raise ConfigError(field, _lt("The address must not contain spaces. Percent-encode them as %%20."))
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        if parts.scheme:
            raise ConfigError(
                field,
                _lt(
                    "The address must start with http:// or https://, not %(scheme)s://. Enter it in full, e.g. https://mcp.example.com/mcp."
                ),
                scheme=parts.scheme,
            )
        raise ConfigError(
            field,
            _lt("The address must start with http:// or https://. Enter it in full, e.g. https://mcp.example.com/mcp."),
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(field, _lt("The address has an invalid port. Use a number from 1 to 65535.")) from None
    if not parts.hostname:
        raise ConfigError(
            field, _lt("The address has no host name. Enter it in full, e.g. https://mcp.example.com/mcp.")
        )
    if port == 0:
        raise ConfigError(field, _lt("The address has an invalid port. Use a number from 1 to 65535."))
    if parts.username or parts.password:
        raise ConfigError(
            field, _lt("The address must not embed a user or password. Use the authentication fields instead.")
        )
    return url


def check_header(name: str, value: str, field: str = "headers") -> None:
    if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
        raise ConfigError(
            field,
            _lt("%(name)s is not a valid HTTP header name. Use only letters, digits and the characters -_. in it."),
            name=repr(name),
        )
    if name.lower() in _RESERVED_HEADERS:
        raise ConfigError(
            field, _lt("The header %(name)s is set by the MCP transport itself. Remove it."), name=repr(name)
        )
    if not isinstance(value, str):
        raise ConfigError(
            field, _lt("The header %(name)s must have a string value. Put the value in quotes."), name=repr(name)
        )
    if not _HEADER_VALUE.fullmatch(value):
        raise ConfigError(
            field,
            _lt("The header %(name)s has a value with a line break or control character. Remove it."),
            name=repr(name),
        )


def check_headers(headers: dict[str, str], field: str = "headers") -> dict[str, str]:
    for name, value in headers.items():
        check_header(name, value, field)
    return dict(headers)


def parse_headers_json(text: str | None, field: str = "headers") -> dict[str, str]:
    """Parse a headers JSON text as typed by an admin: an object whose values are strings."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            field,
            _lt(
                "This is not valid JSON (%(error)s at line %(line)s, column %(column)s). "
                'Enter a JSON object, e.g. {"X-Org": "acme"}.'
            ),
            error=exc.msg,
            line=exc.lineno,
            column=exc.colno,
        ) from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(field, _lt('This must be a JSON object of strings, e.g. {"X-Org": "acme"}.'))
    return check_headers(data, field)
