"""MCP Apps as the chat serves them: the app read from its resource, the CSP and permissions it runs
under (never Odoo's origin, never a source that is not a plain origin), the cache of read apps, and
tool results as an app reads them."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator

import pytest
from conftest import ManualClock, http_spec
from mcp import types as mcp_types

from services.apps import AppCache, AppResource, app_resource, call_tool_result, log_dropped, sandbox_policy
from services.apps.sandbox import MAX_APP_HTML, AppCsp
from services.errors import McpError
from services.mcp import McpHub
from services.server_spec import build_server_spec
from services.tool_info import APP_MIME_TYPE
from services.tool_result import ImagePart, ResourceLinkPart, ResourcePart, StructuredPart, TextPart
from testing.mcp_apps_server import PROGRAM
from testing.mcp_servers import HttpServer, serve_http

ODOO = ("https://erp.example.com", "http://localhost:8069/")
BOARD_META = {
    "ui": {
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "prefersBorder": False,
    }
}


def read_result(*contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents):
    return mcp_types.ReadResourceResult(contents=list(contents))


def text(uri="ui://board/app.html", html="<p>board</p>", mime=APP_MIME_TYPE, meta=None):
    return mcp_types.TextResourceContents(uri=uri, mimeType=mime, text=html, _meta=meta)


# -- reading an app ---------------------------------------------------------------------------


def test_an_app_is_read_with_what_its_meta_asks_for() -> None:
    app = app_resource(read_result(text(meta=BOARD_META)), "ui://board/app.html", "Board server")
    assert app == AppResource(
        uri="ui://board/app.html",
        html="<p>board</p>",
        csp=AppCsp(connect_domains=("https://api.example.com",), resource_domains=("https://cdn.example.com",)),
        permissions=("camera", "clipboardWrite"),
        prefers_border=False,
    )


def test_an_app_without_meta_asks_for_nothing_and_a_malformed_meta_is_ignored() -> None:
    plain = app_resource(read_result(text()), "ui://board/app.html", "S")
    assert (plain.csp, plain.permissions, plain.prefers_border) == (AppCsp(), (), None)
    odd = {"ui": {"csp": {"connectDomains": "https://api.example.com", "frameDomains": [1, "https://x.example"]}}}
    weird = app_resource(read_result(text(meta=odd)), "ui://board/app.html", "S")
    assert weird.csp == AppCsp(frame_domains=("https://x.example",))


def test_the_content_of_the_uri_is_taken_and_a_blob_decoded() -> None:
    blob = mcp_types.BlobResourceContents(
        uri="ui://board/app.html", mimeType="text/html; profile=mcp-app", blob=base64.b64encode(b"<p>\xc3\xa9</p>")
    )
    other = text(uri="ui://other/app.html", html="<p>other</p>")
    assert app_resource(read_result(other, blob), "ui://board/app.html", "S").html == "<p>é</p>"


def test_what_is_not_an_app_is_refused_naming_the_uri_and_the_type() -> None:
    with pytest.raises(McpError) as info:
        app_resource(read_result(text(mime="text/html")), "ui://board/app.html", "Board server")
    assert info.value.message == (
        "Board server serves the app ui://board/app.html as text/html; an app must be text/html;profile=mcp-app."
    )
    with pytest.raises(McpError) as info:
        app_resource(read_result(text(uri="ui://other")), "ui://board/app.html", "Board server")
    assert info.value.message == "Board server returned no content for the app ui://board/app.html."
    bad_blob = mcp_types.BlobResourceContents(uri="ui://board/app.html", mimeType=APP_MIME_TYPE, blob="%%%")
    with pytest.raises(McpError, match="not base64 UTF-8 text"):
        app_resource(read_result(bad_blob), "ui://board/app.html", "S")
    with pytest.raises(McpError, match=f"at most {MAX_APP_HTML} are shown"):
        app_resource(read_result(text(html="x" * (MAX_APP_HTML + 1))), "ui://board/app.html", "S")


# -- the policy it runs under ---------------------------------------------------------------


def test_the_csp_of_an_app_that_declares_nothing_reaches_nowhere_and_never_self() -> None:
    policy = sandbox_policy(AppResource(uri="ui://a", html=""), [], ODOO)
    assert policy.content_security_policy() == (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
        "font-src data:; media-src data: blob:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )
    assert policy.allow() == ""


def test_declared_domains_go_where_they_are_declared_for() -> None:
    app = AppResource(
        uri="ui://a",
        html="",
        csp=AppCsp(
            connect_domains=("https://api.example.com", "wss://live.example.com:8443"),
            resource_domains=("https://cdn.example.com",),
            frame_domains=("https://*.youtube.com",),
            base_uri_domains=("https://base.example.com",),
        ),
    )
    csp = sandbox_policy(app, [], ODOO).content_security_policy()
    assert "script-src 'unsafe-inline' https://cdn.example.com;" in csp
    assert "img-src data: blob: https://cdn.example.com;" in csp
    assert "font-src data: https://cdn.example.com;" in csp
    assert "connect-src https://api.example.com wss://live.example.com:8443;" in csp
    assert "frame-src https://*.youtube.com;" in csp
    assert "base-uri https://base.example.com;" in csp
    assert "'self'" not in csp


@pytest.mark.parametrize(
    "domain",
    [
        "*",
        "https:",
        "https://",
        "'self'",
        "'unsafe-eval'",
        "data:",
        "https://cdn.example.com/lib.js",
        "https://cdn.example.com/path/",
        "ftp://files.example.com",
        "javascript://x",
        "https://a.example.com https://b.example.com",
        "https://exa mple.com",
        "https://*",
        "https://cdn.*.example.com",
        "https://example.com:99999",
        "https://user@example.com",
        "https://example.com;script-src",
    ],
)
def test_anything_but_a_plain_origin_is_dropped_and_logged(domain: str, caplog: pytest.LogCaptureFixture) -> None:
    app = AppResource(uri="ui://board/app.html", html="", csp=AppCsp(connect_domains=(domain,)))
    policy = sandbox_policy(app, [], ODOO)
    assert policy.csp.connect_domains == ()
    assert "connect-src 'none'" in policy.content_security_policy()
    assert policy.dropped == (("connect", domain),)
    with caplog.at_level(logging.WARNING, logger="services.apps.sandbox"):
        log_dropped(policy, app, "Board server")
    assert f"server=Board server app=ui://board/app.html directive=connect domain={domain!r}" in caplog.text


@pytest.mark.parametrize(
    "domain",
    [
        "https://erp.example.com",
        "https://ERP.example.com:443",
        "wss://erp.example.com",
        "https://*.example.com",
        "http://localhost:8069",
        "ws://localhost:8069",
    ],
)
def test_no_source_may_reach_odoo(domain: str) -> None:
    app = AppResource(uri="ui://a", html="", csp=AppCsp(connect_domains=(domain,), resource_domains=(domain,)))
    policy = sandbox_policy(app, [], ODOO)
    assert policy.csp == AppCsp()


def test_other_ports_schemes_and_hosts_of_odoos_neighbourhood_are_kept() -> None:
    kept = (
        "http://erp.example.com",
        "https://erp.example.com:8443",
        "https://api.example.com",
        "http://localhost:3000",
    )
    app = AppResource(uri="ui://a", html="", csp=AppCsp(connect_domains=(*kept, "HTTPS://CDN.example.com/")))
    assert sandbox_policy(app, [], ODOO).csp.connect_domains == (*kept, "https://cdn.example.com")


def test_an_app_gets_the_permissions_it_asked_for_that_were_granted() -> None:
    app = AppResource(uri="ui://a", html="", permissions=("camera", "microphone", "clipboardWrite"))
    policy = sandbox_policy(app, ["clipboardWrite", "geolocation", "camera"], ODOO)
    assert policy.permissions == ("camera", "clipboardWrite")
    assert policy.allow() == "camera; clipboard-write"


# -- the cache --------------------------------------------------------------------------------


def test_a_read_app_is_kept_for_its_time_then_read_again(clock: ManualClock) -> None:
    cache = AppCache(ttl=300, now=clock)
    spec = build_server_spec(key="db/mcp.server/1", name="S", url="https://mcp.example.com/mcp")
    key = cache.key(spec, "ui://a")
    app = AppResource(uri="ui://a", html="<p>a</p>")
    assert cache.get(key) is None
    cache.put(key, app)
    clock.advance(299)
    assert cache.get(key) == app
    clock.advance(1)
    assert cache.get(key) is None


def test_the_cache_tells_apart_configurations_grants_and_uris(clock: ManualClock) -> None:
    cache = AppCache(now=clock)
    base = {"key": "db/mcp.server/1", "name": "S", "url": "https://mcp.example.com/mcp"}
    spec = build_server_spec(**base)
    cache.put(cache.key(spec, "ui://a"), AppResource(uri="ui://a", html="shared"))
    assert cache.get(cache.key(spec, "ui://b")) is None
    assert (
        cache.get(cache.key(build_server_spec(**base, headers={"X-Org": "b"}, auth_type="headers"), "ui://a")) is None
    )
    per_user = build_server_spec(**base, auth_type="oauth", token_owner="7")
    assert cache.key(per_user, "ui://a")[1] == "7"
    assert cache.get(cache.key(per_user, "ui://a")) is None
    assert cache.get(cache.key(spec, "ui://a")).html == "shared"


def test_the_cache_keeps_the_latest_apps_only(clock: ManualClock) -> None:
    cache = AppCache(now=clock, max_entries=2)
    spec = build_server_spec(key="k", name="S", url="https://mcp.example.com/mcp")
    for uri in ("ui://a", "ui://b", "ui://c"):
        cache.put(cache.key(spec, uri), AppResource(uri=uri, html=uri))
    assert [cache.get(cache.key(spec, uri)) is not None for uri in ("ui://a", "ui://b", "ui://c")] == [
        False,
        True,
        True,
    ]


# -- results as an app reads them -----------------------------------------------------------


def test_a_tool_result_is_given_to_an_app_as_mcp_names_it() -> None:
    parts = [
        TextPart(text="hi"),
        ImagePart(mime_type="image/png", data="iVBO"),
        ResourcePart(uri="notes://a", mime_type="text/plain", text="a"),
        ResourcePart(uri="images://b", blob="AAAA"),
        ResourceLinkPart(uri="notes://c", name="c", mime_type="text/plain"),
        StructuredPart(data={"n": 1}),
    ]
    assert call_tool_result(parts, is_error=False) == {
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "notes://a", "mimeType": "text/plain", "text": "a"}},
            {"type": "resource", "resource": {"uri": "images://b", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "notes://c", "name": "c", "mimeType": "text/plain"},
        ],
        "structuredContent": {"n": 1},
        "isError": False,
    }
    assert call_tool_result([TextPart(text="boom")], is_error=True) == {
        "content": [{"type": "text", "text": "boom"}],
        "isError": True,
    }


# -- through the hub, from a real server ------------------------------------------------------


@pytest.fixture(scope="module")
def apps_server() -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--board", program=PROGRAM) as server:
        yield server


def test_the_hub_reads_an_app_whole_from_its_server(hub: McpHub, apps_server: HttpServer) -> None:
    spec = http_spec(apps_server, key="apps", apps=True)
    board = hub.run(hub.aread_app(spec, "ui://board/app.html"))
    assert board.html.startswith("<!doctype html>")
    assert board.permissions == ("camera", "microphone", "clipboardWrite")
    assert board.csp.frame_domains == ("https://*.youtube.com",)
    assert board.prefers_border is True
    with pytest.raises(McpError, match="serves the app ui://broken/app.html as text/html"):
        hub.run(hub.aread_app(spec, "ui://broken/app.html"))
