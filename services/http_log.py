"""Keeps the values of query strings out of the log.

httpx (the model providers' client) and httpx2 (the MCP servers') log every request at INFO, the
level Odoo runs at, as `HTTP Request: POST <full URL> "HTTP/1.1 200 OK"`: a few hundred lines a
turn, each with the URL's query, where some gateways take their key. The loggers are not raised
above INFO: those lines are how an operator sees which provider or server was called and what it
answered (a 429, a 502). A filter on them masks each query value and keeps its name instead.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

import httpx
import httpx2

# the loggers of the HTTP clients, which log each request's URL at INFO
HTTP_CLIENT_LOGGERS = ("httpx", "httpx2")
MASK = "***"


class QueryValuesMasked(logging.Filter):
    """Masks the query values of the URLs among a record's arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_masked(arg) for arg in record.args)
        return True


def mask_logged_queries() -> None:
    """Install QueryValuesMasked on the HTTP clients' loggers, once per process."""
    for name in HTTP_CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(known, QueryValuesMasked) for known in logger.filters):
            logger.addFilter(QueryValuesMasked())


def without_query_values(url: str) -> str:
    """`url` with each query value replaced by MASK: https://h/p?key=***&tenant=***. A part
    without a name (?sk-123) is masked whole: it may be the key itself."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = "&".join(_masked_part(part) for part in parts.query.split("&"))
    return urlunsplit(parts._replace(query=query))


def _masked_part(part: str) -> str:
    name, equals, _value = part.partition("=")
    return f"{name}={MASK}" if equals else MASK


def _masked(arg: object) -> object:
    if isinstance(arg, (httpx.URL, httpx2.URL)):
        return without_query_values(str(arg))
    return arg
