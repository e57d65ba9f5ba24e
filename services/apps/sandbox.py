"""An MCP App as the chat serves it: its ui:// resource read from the server, the Content Security
Policy and iframe permissions it runs under, and a short-lived cache of read apps.

An app is untrusted HTML. It runs in a sandboxed page of Odoo's without same-origin rights, so it
can reach only what its CSP lets it: the domains its resource declares, checked here, and never
Odoo itself.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode, McpError
from ..server_spec import ServerSpec
from ..tool_info import APP_MIME_TYPE

_logger = logging.getLogger(__name__)

# an app's HTML is sent whole to the browser: larger ones are refused, not cut
MAX_APP_HTML = 5_000_000
# the permissions an app may ask for (`_meta.ui.permissions`), and their iframe `allow` names
ALLOW_NAMES = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
# scheme://host[:port] with an optional leading "*." label and nothing else (no path, no quotes)
SOURCE = re.compile(
    r"^(?P<scheme>https?|wss?)://(?P<wild>\*\.)?(?P<host>[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)"
    r"(:(?P<port>[0-9]{1,5}))?/?$"
)
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
# ws(s) reaches the same server as http(s) on the same host and port
SAME_SERVER = {"ws": "http", "wss": "https"}


class AppCsp(BaseModel):
    """The domains of `_meta.ui.csp`: what the app fetches from (connect), loads scripts, styles,
    images, fonts and media from (resource), frames (frame), and sets as its base URI."""

    model_config = ConfigDict(frozen=True)

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()


class AppResource(BaseModel):
    """A ui:// resource as its server serves it: the HTML and what its `_meta.ui` asks for."""

    model_config = ConfigDict(frozen=True)

    uri: str
    html: str
    csp: AppCsp = AppCsp()
    permissions: tuple[str, ...] = ()  # requested, by their `_meta.ui.permissions` names
    prefers_border: bool | None = None


def app_resource(result: mcp_types.ReadResourceResult, uri: str, server: str) -> AppResource:
    """The app of `uri` in a resources/read result of `server`. Raises McpError when the result
    has no content for `uri`, or has it under another type than an app's, or in a form that
    cannot be read as HTML."""
    content = next((c for c in result.contents if str(c.uri) == uri), None)
    if content is None:
        raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{server} returned no content for the app {uri}.")
    if _mime(content.mime_type) != _mime(APP_MIME_TYPE):
        raise McpError(
            ErrorCode.MCP_PROTOCOL_ERROR,
            f"{server} serves the app {uri} as {content.mime_type or 'no type'}; an app must be {APP_MIME_TYPE}.",
        )
    html = _html(content, uri, server)
    ui = (content.meta or {}).get("ui")
    ui = ui if isinstance(ui, dict) else {}
    border = ui.get("prefersBorder")
    return AppResource(
        uri=uri,
        html=html,
        csp=_csp(ui.get("csp")),
        permissions=_permissions(ui.get("permissions")),
        prefers_border=border if isinstance(border, bool) else None,
    )


def _mime(value: str | None) -> str:
    return "".join((value or "").lower().split())


def _html(content: mcp_types.TextResourceContents | mcp_types.BlobResourceContents, uri: str, server: str) -> str:
    if isinstance(content, mcp_types.TextResourceContents):
        html = content.text
    else:
        try:
            html = base64.b64decode(content.blob, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise McpError(
                ErrorCode.MCP_PROTOCOL_ERROR, f"{server} sent the app {uri} as a blob that is not base64 UTF-8 text."
            ) from None
    if len(html) > MAX_APP_HTML:
        raise McpError(
            ErrorCode.MCP_PROTOCOL_ERROR,
            f"The app {uri} of {server} is {len(html)} characters long; at most {MAX_APP_HTML} are shown.",
        )
    return html


def _csp(declared: Any) -> AppCsp:
    declared = declared if isinstance(declared, dict) else {}

    def domains(key: str) -> tuple[str, ...]:
        values = declared.get(key)
        return tuple(v for v in values if isinstance(v, str)) if isinstance(values, list) else ()

    return AppCsp(
        connect_domains=domains("connectDomains"),
        resource_domains=domains("resourceDomains"),
        frame_domains=domains("frameDomains"),
        base_uri_domains=domains("baseUriDomains"),
    )


def _permissions(requested: Any) -> tuple[str, ...]:
    if not isinstance(requested, dict):
        return ()
    return tuple(name for name in ALLOW_NAMES if name in requested)


# -- what the app runs under ------------------------------------------------------------------


class SandboxPolicy(BaseModel):
    """The domains and permissions an app is granted: what its CSP and iframe `allow` are made of."""

    model_config = ConfigDict(frozen=True)

    csp: AppCsp = AppCsp()
    permissions: tuple[str, ...] = ()
    # (directive, domain) of each declared domain left out, for the log
    dropped: tuple[tuple[str, str], ...] = ()

    def content_security_policy(self) -> str:
        """The app's CSP. No source is 'self': the sandbox page is served from Odoo's URL, and
        'self' would be Odoo."""
        resources = " ".join(self.csp.resource_domains)

        def sources(*fixed: str, domains: Sequence[str] = ()) -> str:
            return " ".join([*fixed, *domains]) or "'none'"

        directives = [
            "default-src 'none'",
            f"script-src 'unsafe-inline' {resources}".rstrip(),
            f"style-src 'unsafe-inline' {resources}".rstrip(),
            f"img-src data: blob: {resources}".rstrip(),
            f"font-src data: {resources}".rstrip(),
            f"media-src data: blob: {resources}".rstrip(),
            f"connect-src {sources(domains=self.csp.connect_domains)}",
            f"frame-src {sources(domains=self.csp.frame_domains)}",
            "object-src 'none'",
            f"base-uri {sources(domains=self.csp.base_uri_domains)}",
            "form-action 'none'",
        ]
        return "; ".join(directives)

    def allow(self) -> str:
        """The iframe `allow` attribute of the granted permissions, e.g. "camera; clipboard-write"."""
        return "; ".join(ALLOW_NAMES[name] for name in self.permissions)


def sandbox_policy(app: AppResource, granted: Iterable[str], own_origins: Iterable[str]) -> SandboxPolicy:
    """What `app` runs under: its declared domains that are plain origins other than Odoo's
    (`own_origins`: Odoo's URLs), and the permissions `granted` to it (those it asked for that its
    server allows)."""
    own = [origin for origin in (_origin(url) for url in own_origins) if origin]
    dropped: list[tuple[str, str]] = []

    def kept(domains: tuple[str, ...], directive: str) -> tuple[str, ...]:
        result = []
        for domain in domains:
            source = checked_source(domain, own)
            if source is None:
                dropped.append((directive, domain))
            elif source not in result:
                result.append(source)
        return tuple(result)

    granted = set(granted)
    return SandboxPolicy(
        csp=AppCsp(
            connect_domains=kept(app.csp.connect_domains, "connect"),
            resource_domains=kept(app.csp.resource_domains, "resource"),
            frame_domains=kept(app.csp.frame_domains, "frame"),
            base_uri_domains=kept(app.csp.base_uri_domains, "base-uri"),
        ),
        permissions=tuple(name for name in app.permissions if name in granted),
        dropped=tuple(dropped),
    )


def log_dropped(policy: SandboxPolicy, app: AppResource, server: str) -> None:
    """Say in the log which declared domains of `app` of `server` its policy left out, and where."""
    for directive, domain in policy.dropped:
        _logger.warning(
            "MCP App domain dropped: server=%s app=%s directive=%s domain=%r", server, app.uri, directive, domain
        )


def checked_source(domain: str, own: Sequence[tuple[str, str, int]]) -> str | None:
    """`domain` as a CSP source when it is an http(s) or ws(s) origin (`scheme://host[:port]`,
    the host may start with `*.`) that cannot reach Odoo (`own`: Odoo's (scheme, host, port));
    None otherwise: `*`, a scheme alone, a path, quotes, keywords."""
    match = SOURCE.match(domain.strip().lower())
    if match is None:
        return None
    scheme, host, wild = match["scheme"], match["host"], bool(match["wild"])
    port = int(match["port"]) if match["port"] else DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return None
    for own_scheme, own_host, own_port in own:
        same_host = own_host.endswith(f".{host}") if wild else own_host == host
        # a wildcard over Odoo's host is dropped whatever its scheme and port
        if same_host and (wild or (SAME_SERVER.get(scheme, scheme) == own_scheme and port == own_port)):
            return None
    return domain.strip().lower().rstrip("/")


def _origin(url: str) -> tuple[str, str, int] | None:
    parts = urlsplit(url or "")
    scheme = SAME_SERVER.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return scheme, parts.hostname.lower(), port


# -- the cache --------------------------------------------------------------------------------


class AppCache:
    """The apps read lately, for `ttl` seconds: a conversation opens an app twice (its data, then
    its sandbox page), and several blocks of one tool show the same app. Keyed by the server's
    configuration, whose grant reads it, and the URI, so an app is never served to another
    user of a per-user sign-in nor after its server's settings changed."""

    def __init__(self, ttl: float = 300.0, now: Callable[[], float] = time.monotonic, max_entries: int = 128) -> None:
        self.ttl = ttl
        self.now = now
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str, str], tuple[float, AppResource]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(spec: ServerSpec, uri: str) -> tuple[str, str, str]:
        return f"{spec.key}#{spec.fingerprint()}", spec.token_owner or "shared", uri

    def get(self, key: tuple[str, str, str]) -> AppResource | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self.now() - entry[0] >= self.ttl:
                del self._entries[key]
                return None
            return entry[1]

    def put(self, key: tuple[str, str, str], app: AppResource) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (self.now(), app)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
