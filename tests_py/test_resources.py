"""A server's resources through the hub: listed with templates, read as text or binary with the
caps of tool results, over streamable HTTP and stdio, on a real FastMCP server (--resources)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from conftest import http_spec, stdio_spec

from services.errors import ErrorCode, McpError
from services.mcp import McpHub, expand
from services.server_spec import ServerSpec
from services.tool_result import DISPLAY_TEXT_LIMIT, ResourceLinkPart, ResourcePart
from testing.mcp_servers import PNG_1PX, HttpServer, serve_http


@pytest.fixture(scope="module")
def resources_http() -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--resources") as server:
        yield server


@pytest.fixture(params=["streamable_http", "stdio"])
def resources_spec(request: pytest.FixtureRequest, resources_http: HttpServer) -> ServerSpec:
    if request.param == "stdio":
        return stdio_spec("resources-stdio", "--resources")
    return http_spec(resources_http, key="resources-http")


def test_resources_and_templates_are_listed(hub: McpHub, resources_spec: ServerSpec) -> None:
    listing = hub.run(hub.alist_resources(resources_spec))
    by_uri = {r.uri: r for r in listing.resources}
    assert sorted(by_uri) == ["images://dot.png", "notes://big", "notes://today"]
    assert (by_uri["notes://today"].title, by_uri["notes://today"].mime_type) == ("Today's note", "text/markdown")
    [template] = listing.templates
    assert (template.uri_template, template.title, template.variables) == ("notes://day/{day}", "A day's note", ["day"])


def test_text_and_binary_resources_are_read(hub: McpHub, resources_spec: ServerSpec) -> None:
    [note] = hub.run(hub.aread_resource(resources_spec, "notes://today"))
    assert (note.uri, note.mime_type, note.text) == ("notes://today", "text/markdown", "# Today\n- water the plants")
    [dot] = hub.run(hub.aread_resource(resources_spec, "images://dot.png"))
    assert (dot.mime_type, base64.b64decode(dot.blob or "")) == ("image/png", PNG_1PX)


def test_a_template_is_expanded_with_the_users_values_encoded(hub: McpHub, resources_spec: ServerSpec) -> None:
    uri = expand("notes://day/{day}", {"day": "2026-11-23"})
    assert uri == "notes://day/2026-11-23"
    [note] = hub.run(hub.aread_resource(resources_spec, uri))
    assert note.text == "# 2026-11-23\n- nothing planned"
    assert expand("notes://day/{day}", {"day": "a b/c"}) == "notes://day/a%20b%2Fc"
    with pytest.raises(McpError) as info:
        expand("notes://day/{day}", {"day": " "})
    assert info.value.message == "Fill in day to read notes://day/{day}."


def test_a_large_resource_is_capped_with_a_visible_marker(hub: McpHub, resources_spec: ServerSpec) -> None:
    [big] = hub.run(hub.aread_resource(resources_spec, "notes://big"))
    assert big.text is not None and big.text.startswith("x" * DISPLAY_TEXT_LIMIT)
    assert big.text.endswith("[... truncated: 50000 more characters not shown ...]")


def test_an_unknown_resource_is_the_servers_error_to_tell(hub: McpHub, resources_spec: ServerSpec) -> None:
    with pytest.raises(McpError) as info:
        hub.run(hub.aread_resource(resources_spec, "notes://nowhere"))
    assert "notes://nowhere" in info.value.message


def test_tools_answer_with_links_and_embedded_resources(hub: McpHub, resources_spec: ServerSpec) -> None:
    [link] = hub.run(hub.acall_tool(resources_spec, "link_note", {})).parts
    assert isinstance(link, ResourceLinkPart) and link.uri == "notes://today"
    [embedded] = hub.run(hub.acall_tool(resources_spec, "embed_dot", {})).parts
    assert isinstance(embedded, ResourcePart) and base64.b64decode(embedded.blob or "") == PNG_1PX


def test_a_server_without_resources_lists_none(hub: McpHub, http_server: HttpServer) -> None:
    listing = hub.run(hub.alist_resources(http_spec(http_server)))
    assert (listing.resources, listing.templates) == ([], [])
    assert ErrorCode.MCP_INVALID_PARAMS.value == "MCP_INVALID_PARAMS"
