"""MCP Apps at discovery, through the hub, against a real server with an app
(testing/mcp_apps_server.py) over streamable HTTP and stdio: a tool's app and who may call it are
seen only when the server is told we render apps, and the app's HTML reads back with what it asks
of the browser. Then how a tool's `_meta` is read when it is odd."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import FAST_RETRY, http_spec

from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from services.tool_info import APP_MIME_TYPE, ToolInfo, _app_of
from services.tool_result import StructuredPart, TextPart
from testing.mcp_apps_server import APP_URI, PROGRAM
from testing.mcp_servers import HttpServer, serve_http, server_argv


@pytest.fixture(scope="module")
def counter_http() -> Iterator[HttpServer]:
    with serve_http("streamable-http", program=PROGRAM) as server:
        yield server


def _stdio_spec(key: str, apps: bool) -> ServerSpec:
    argv = server_argv("stdio", program=PROGRAM)
    return build_server_spec(
        key=key, name=key, transport="stdio", command=argv[0], args=tuple(argv[1:]), retry=FAST_RETRY, apps=apps
    )


@pytest.fixture(params=["streamable_http", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


def _spec(transport: str, server: HttpServer, apps: bool, key: str = "") -> ServerSpec:
    key = key or f"counter-{transport}-{'apps' if apps else 'text'}"
    return _stdio_spec(key, apps) if transport == "stdio" else http_spec(server, key=key, apps=apps)


def _tools(hub: McpHub, spec: ServerSpec) -> dict[str, ToolInfo]:
    return {tool.name: tool for tool in hub.run(hub.alist_tools(spec)).tools}


def test_a_client_that_renders_apps_sees_each_tools_app_and_audience(
    hub: McpHub, counter_http: HttpServer, transport: str
) -> None:
    tools = _tools(hub, _spec(transport, counter_http, apps=True))
    shown = {name: (tool.app_uri, tool.visibility) for name, tool in tools.items()}
    assert shown == {
        "show_counter": (APP_URI, "model_app"),
        "counter_add": (APP_URI, "app"),
        "reset_counter": (None, "model_app"),
    }
    assert (tools["show_counter"].display_title, tools["counter_add"].model_visible) == ("Counter", False)


def test_a_client_without_apps_gets_the_same_tools_as_text(
    hub: McpHub, counter_http: HttpServer, transport: str
) -> None:
    tools = _tools(hub, _spec(transport, counter_http, apps=False))
    assert sorted(tools) == ["counter_add", "reset_counter", "show_counter"]
    assert {(tool.app_uri, tool.visibility) for tool in tools.values()} == {(None, "model_app")}


def test_turning_apps_on_reaches_a_server_already_connected(
    hub: McpHub, counter_http: HttpServer, transport: str
) -> None:
    """The same server, its apps turned on after a listing: the server is told on a new session."""
    key = f"counter-{transport}-switched"
    assert _tools(hub, _spec(transport, counter_http, apps=False, key=key))["show_counter"].app_uri is None
    assert _tools(hub, _spec(transport, counter_http, apps=True, key=key))["show_counter"].app_uri == APP_URI


def test_a_call_of_a_tool_with_an_app_answers_text_and_data(
    hub: McpHub, counter_http: HttpServer, transport: str
) -> None:
    spec = _spec(transport, counter_http, apps=True)
    shown = hub.run(hub.acall_tool(spec, "show_counter", {"start": 4}))
    added = hub.run(hub.acall_tool(spec, "counter_add", {"amount": 2}))
    assert shown.parts == [TextPart(text="Counter at 4"), StructuredPart(data={"count": 4})]
    assert added.parts == [TextPart(text="Counter at 6"), StructuredPart(data={"count": 6})]


def test_the_app_reads_back_with_its_mime_type_and_what_it_asks_of_the_browser(
    hub: McpHub, counter_http: HttpServer
) -> None:
    spec = _spec("streamable_http", counter_http, apps=True)
    [page] = hub.run(hub.aread_resource(spec, APP_URI))
    assert (page.uri, page.mime_type) == (APP_URI, APP_MIME_TYPE)
    assert page.text is not None and page.text.startswith("<!doctype html>")
    origin = f"http://127.0.0.1:{counter_http.port}"
    assert f'"{origin}"' in page.text  # the origin its probe fetches is the one it declares
    assert _read_meta(hub, spec) == {
        "ui": {"csp": {"connectDomains": [origin]}, "prefersBorder": True, "permissions": {"clipboardWrite": {}}}
    }


def test_an_app_over_stdio_declares_no_origin_unless_told_one(hub: McpHub) -> None:
    assert _read_meta(hub, _stdio_spec("counter-stdio-apps", apps=True)) == {
        "ui": {"prefersBorder": True, "permissions": {"clipboardWrite": {}}}
    }
    argv = server_argv("stdio", "--connect-domain", "http://localhost:8069", program=PROGRAM)
    told = build_server_spec(
        key="counter-told", name="told", transport="stdio", command=argv[0], args=tuple(argv[1:]), apps=True
    )
    assert _read_meta(hub, told)["ui"]["csp"] == {"connectDomains": ["http://localhost:8069"]}


def _read_meta(hub: McpHub, spec: ServerSpec) -> dict[str, Any] | None:
    """The `_meta` of the app's content as the server sent it (the hub's reading keeps the page)."""

    async def read() -> dict[str, Any] | None:
        session = await hub.pool.acquire(spec)
        result = await session.send(session.client.read_resource(APP_URI))
        return result.contents[0].meta

    return hub.run(read())


# -- _meta as servers really send it ----------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (None, {}),
        ({}, {}),
        ({"ui": {"resourceUri": "ui://a/app.html"}}, {"app_uri": "ui://a/app.html"}),
        # the flat key of the extension's drafts, still sent by servers written against them
        ({"ui/resourceUri": "ui://a/app.html"}, {"app_uri": "ui://a/app.html"}),
        ({"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"}, {"app_uri": "ui://new"}),
        # only ui:// resources are apps: a web page or a file is never loaded as one
        ({"ui": {"resourceUri": "https://example.com/app.html"}}, {}),
        ({"ui/resourceUri": "file:///app.html"}, {}),
        ({"ui": {"resourceUri": 42}}, {}),
        ({"ui": {"resourceUri": "ui://a", "visibility": ["app"]}}, {"app_uri": "ui://a", "visibility": "app"}),
        ({"ui": {"visibility": ["model"]}}, {"visibility": "model"}),
        ({"ui": {"visibility": ["model", "app"]}}, {}),
        # nobody at all cannot be meant: the default
        ({"ui": {"visibility": []}}, {}),
        ({"ui": {"visibility": ["app", "nobody"]}}, {"visibility": "app"}),
        ({"ui": {"visibility": "app"}}, {}),
        ({"ui": {"visibility": ["app", 3]}}, {}),
        ({"ui": "ui://a"}, {}),
        ({"ui": ["ui://a"]}, {}),
    ],
)
def test_a_tools_app_is_read_from_its_meta(meta: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    assert _app_of(meta) == expected
