"""Suggestions for a prompt's argument and a template's value through the hub (completion/complete),
over streamable HTTP and stdio, on real FastMCP servers: one that completes (--completions), one
that does not declare the capability; a slow answer is none, in time."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from conftest import http_spec, stdio_spec

from services.mcp import CompletionRequest, Completions, McpHub
from services.server_spec import ServerSpec
from testing.mcp_servers import HttpServer, serve_http

LOGGER = "services.mcp.completion"


@pytest.fixture(scope="module")
def completing_http() -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--prompts", "--resources", "--completions") as server:
        yield server


@pytest.fixture(params=["streamable_http", "stdio"])
def completing(request: pytest.FixtureRequest, completing_http: HttpServer) -> ServerSpec:
    if request.param == "stdio":
        return stdio_spec("completing-stdio", "--prompts", "--resources", "--completions")
    return http_spec(completing_http, key="completing-http")


def ask(hub: McpHub, spec: ServerSpec, **fields: object) -> Completions:
    return hub.run(hub.acomplete(spec, CompletionRequest.model_validate(fields)))


def test_a_prompt_argument_and_a_template_value_are_completed(hub: McpHub, completing: ServerSpec) -> None:
    assert ask(hub, completing, kind="prompt", name="greeting", argument="name", value="al") == Completions(
        values=["Alan", "Alonzo"]
    )
    day = ask(hub, completing, kind="template", name="notes://day/{day}", argument="day", value="2026-01")
    assert day.values == ["2026-01-01", "2026-01-02"]


def test_the_values_filled_in_reach_the_server(hub: McpHub, completing: ServerSpec) -> None:
    style = {"kind": "prompt", "name": "greeting", "argument": "style", "value": "f"}
    assert ask(hub, completing, **style, context={"name": "Ada"}).values == ["formal", "friendly"]
    assert ask(hub, completing, **style, context={"name": "Grace"}).values == []


def test_the_listings_say_whether_the_server_completes(hub: McpHub, completing: ServerSpec) -> None:
    assert all(p.completions for p in hub.run(hub.alist_prompts(completing)))
    assert hub.run(hub.alist_resources(completing)).completions


def test_a_server_without_the_capability_is_never_asked(hub: McpHub, caplog: pytest.LogCaptureFixture) -> None:
    plain = stdio_spec("plain-stdio", "--prompts", "--resources")
    assert not any(p.completions for p in hub.run(hub.alist_prompts(plain)))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert ask(hub, plain, kind="prompt", name="greeting", argument="name", value="al") == Completions()
    # asked, the server would refuse the method, and the refusal would be logged
    assert not caplog.records


def test_a_late_answer_is_none_and_logged_with_the_server_and_duration(
    hub: McpHub, completing: ServerSpec, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert ask(hub, completing, kind="prompt", name="greeting", argument="name", value="slow") == Completions()
    [record] = caplog.records
    assert f"server={completing.name} duration=" in record.getMessage()
    # the session still answers after the request it gave up on
    assert ask(hub, completing, kind="prompt", name="greeting", argument="name", value="gr").values == ["Grace"]
