"""A server's prompts through the hub: listed with their arguments, got as the text that starts a
turn, over streamable HTTP and stdio, on a real FastMCP server (--prompts)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import http_spec, stdio_spec

from services.errors import ErrorCode, McpError
from services.mcp import McpHub
from services.mcp.prompts import PromptArgument, PromptInfo
from services.server_spec import ServerSpec
from testing.mcp_servers import HttpServer, serve_http


@pytest.fixture(scope="module")
def prompts_http() -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--prompts") as server:
        yield server


@pytest.fixture(params=["streamable_http", "stdio"])
def prompts_spec(request: pytest.FixtureRequest, prompts_http: HttpServer) -> ServerSpec:
    if request.param == "stdio":
        return stdio_spec("prompts-stdio", "--prompts")
    return http_spec(prompts_http, key="prompts-http")


def by_name(hub: McpHub, spec: ServerSpec) -> dict[str, PromptInfo]:
    return {p.name: p for p in hub.run(hub.alist_prompts(spec))}


def test_prompts_are_listed_with_their_titles_and_arguments(hub: McpHub, prompts_spec: ServerSpec) -> None:
    prompts = by_name(hub, prompts_spec)
    assert sorted(prompts) == ["daily_summary", "greeting", "review"]
    assert (prompts["daily_summary"].title, prompts["daily_summary"].arguments) == ("Daily summary", [])
    assert prompts["greeting"].title == "Write a greeting"
    assert prompts["greeting"].description == "A greeting for someone, in a style."
    assert prompts["greeting"].arguments == [
        PromptArgument(name="name", required=True),
        PromptArgument(name="style", required=False),
    ]


def test_a_prompt_becomes_the_text_of_the_users_message(hub: McpHub, prompts_spec: ServerSpec) -> None:
    prompts = by_name(hub, prompts_spec)
    assert (
        hub.run(hub.aget_prompt(prompts_spec, prompts["greeting"], {"name": "Ada", "style": "formal"}))
        == "Write a formal greeting for Ada."
    )
    assert (
        hub.run(hub.aget_prompt(prompts_spec, prompts["greeting"], {"name": "Ada", "style": ""}))
        == "Write a warm greeting for Ada."
    )
    assert (
        hub.run(hub.aget_prompt(prompts_spec, prompts["daily_summary"], {}))
        == "Summarise what happened today in three bullet points."
    )


def test_several_messages_keep_their_order_roles_and_embedded_text(hub: McpHub, prompts_spec: ServerSpec) -> None:
    text = hub.run(hub.aget_prompt(prompts_spec, by_name(hub, prompts_spec)["review"], {"path": "app.py"}))
    assert text == "Please review app.py.\n\nfile:///app.py:\nprint('hello')\n\nAssistant: I will look for bugs first."


def test_a_missing_required_argument_is_named_before_the_server_is_asked(hub: McpHub, prompts_spec: ServerSpec) -> None:
    with pytest.raises(McpError) as info:
        hub.run(hub.aget_prompt(prompts_spec, by_name(hub, prompts_spec)["greeting"], {"name": "  ", "style": "warm"}))
    assert info.value.code is ErrorCode.MCP_INVALID_PARAMS
    assert info.value.message == "The prompt greeting needs name: fill them in and send it again."


def test_a_prompt_the_server_does_not_have_is_its_error_to_tell(hub: McpHub, prompts_spec: ServerSpec) -> None:
    with pytest.raises(McpError) as info:
        hub.run(hub.aget_prompt(prompts_spec, PromptInfo(name="gone"), {}))
    assert "gone" in info.value.message


def test_a_server_without_prompts_lists_none(hub: McpHub, http_server: HttpServer) -> None:
    assert hub.run(hub.alist_prompts(http_spec(http_server))) == []
