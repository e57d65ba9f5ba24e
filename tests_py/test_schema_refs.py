"""JSON Schemas from MCP servers, read as a client must: no schema reference is ever fetched (a
canary on 127.0.0.1 counts any attempt), a tool whose schema refers outside itself is left out with
a warning naming it while the turn goes on, and a null for an optional property that does not allow
null is left out instead of refused. Real servers (testing/mcp_servers.py's schema probes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import http_spec
from test_agent_loop import run, settings, tools_of
from test_elicitation import ask_and_answer, result_of

from services.json_schema import SchemaProblem
from services.loop import TurnRequest, argument_problems, without_null_optionals
from services.mcp import McpHub, apply_defaults, elicitation_errors
from testing.canary import SECRET, Canary
from testing.mcp_servers import HttpServer, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    with Canary() as running:
        yield running


@pytest.fixture(scope="module")
def probes(canary: Canary) -> Iterator[HttpServer]:
    with serve_http("streamable-http", "--schema-probes", canary.url) as server:
        yield server


def only(hub: McpHub, spec: Any, name: str) -> list[Any]:
    """The bindings of the server's tool `name` alone."""
    return [binding for binding in tools_of(hub, spec) if binding.tool.name == name]


def listed(hub: McpHub, server: HttpServer) -> dict[str, Any]:
    return {tool.name: tool for tool in hub.run(hub.alist_tools(http_spec(server, key="probes"))).tools}


def test_a_model_turn_fetches_no_reference_and_goes_on_without_the_tool_that_refers_elsewhere(
    hub: McpHub, llm: ScriptedLLM, canary: Canary, probes: HttpServer
) -> None:
    before = canary.hits
    spec = http_spec(probes, key="probes", name="Probes")
    llm.queue(
        Turn(
            tool_calls=(ToolCall("ref_probe", {"p": "x"}, id="c1"), ToolCall("local_ref", {"color": "blue"}, id="c2"))
        ),
        Turn(tool_calls=(ToolCall("local_ref", {"color": "red"}, id="c3"),)),
        Turn(text="Painted."),
    )
    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools_of(hub, spec), user_message="Paint"))

    assert events[-1].type == "done", [e.data() for e in events]
    warnings = [e.message for e in events if e.type == "warning"]
    assert any("'ref_probe' is left out" in w and canary.url in w and "never fetched" in w for w in warnings), warnings
    offered = {tool["function"]["name"] for tool in llm.requests[0]["tools"]}
    assert "ref_probe" not in offered and {"local_ref", "echo"} <= offered
    results = {e.id: e for e in events if e.type == "tool_result"}
    assert not results["c1"].ok and results["c1"].error_code == "MCP_TOOL_NOT_FOUND"
    # a reference within the schema resolves: the refusal names the colours it holds
    assert not results["c2"].ok
    assert "arguments.color: 'blue' is not one of ['red', 'green']" in results["c2"].error_message
    assert results["c3"].ok and results["c3"].model_text == "painted red"
    assert SECRET not in json.dumps([e.data() for e in events])
    assert canary.hits == before


def test_sync_names_the_tool_that_refers_elsewhere_and_fetches_nothing(
    hub: McpHub, canary: Canary, probes: HttpServer
) -> None:
    before = canary.hits
    report = hub.run(hub.atest_connection(http_spec(probes, key="probes", name="Probes")))
    [warning] = [w for w in report.warnings if "ref_probe" in w]
    assert warning == (
        f"Probes: the tool 'ref_probe' is left out of every answer because its input schema refers to "
        f"'{canary.url}' (at properties.p), outside itself, and schema references are never fetched."
    )
    assert not any("local_ref" in w for w in report.warnings)
    assert canary.hits == before


def test_checking_arguments_against_a_schema_that_refers_elsewhere_fetches_nothing(
    hub: McpHub, canary: Canary, probes: HttpServer
) -> None:
    """What an app's call and the Try wizard check (tool_runner.argument_problems)."""
    before = canary.hits
    tools = listed(hub, probes)
    with pytest.raises(SchemaProblem) as raised:
        argument_problems(tools["ref_probe"].input_schema, {"p": "x"})
    assert raised.value.reason.startswith(f"refers to '{canary.url}' (at properties.p)")
    assert SECRET not in str(raised.value)
    assert argument_problems(tools["local_ref"].input_schema, {"color": "red"}) == []
    assert canary.hits == before


def test_a_question_that_refers_elsewhere_is_answered_without_fetching_it(
    hub: McpHub, llm: ScriptedLLM, canary: Canary, probes: HttpServer
) -> None:
    """The answer is checked as Odoo checks it (models/conversation/call.py: defaults, then the check)."""
    before = canary.hits
    checked: list[list[str]] = []

    def answer(event: Any) -> tuple[str, dict[str, Any] | None]:
        content = apply_defaults(event.requested_schema, {"code": "x"})
        checked.append(elicitation_errors(event.requested_schema, content))
        return ("decline", None)

    spec = http_spec(probes, key="probes", name="Probes")
    events = ask_and_answer(
        hub, llm, spec, (ToolCall("ask_ref", {}, id="call_ask"),), answer, tools=only(hub, spec, "ask_ref")
    )
    assert checked == [
        [
            f"The server's form cannot be checked: its schema refers to '{canary.url}' (at properties.code), "
            "outside itself, and schema references are never fetched."
        ]
    ]
    assert json.loads(result_of(events, "call_ask").model_text) == {"action": "decline", "content": None}
    assert canary.hits == before


def test_a_null_for_an_optional_property_that_does_not_allow_it_is_left_out(
    hub: McpHub, llm: ScriptedLLM, probes: HttpServer
) -> None:
    spec = http_spec(probes, key="probes", name="Probes")
    llm.queue(
        Turn(tool_calls=(ToolCall("optional_flags", {"name": "a", "verbose": None, "note": None}, id="c1"),)),
        Turn(tool_calls=(ToolCall("optional_flags", {"name": None}, id="c2"),)),
        Turn(text="Done."),
    )
    request = TurnRequest(assistant=settings(llm), tools=only(hub, spec, "optional_flags"), user_message="Flags")
    events = run(hub, request)
    results = {e.id: e for e in events if e.type == "tool_result"}
    # the server got no verbose (its default) and the null it allows for note
    assert results["c1"].ok, results["c1"].error_message
    assert json.loads(results["c1"].model_text) == {"name": "a", "verbose": False, "note": None}
    # a required property's null is still refused, naming it
    assert not results["c2"].ok
    assert "arguments.name: None is not of type 'string'" in results["c2"].error_message
    schema = listed(hub, probes)["optional_flags"].input_schema
    assert without_null_optionals(schema, {"name": "a", "verbose": None, "note": None}) == {"name": "a", "note": None}


def test_a_tool_langchain_cannot_convert_is_left_out_and_the_turn_goes_on(
    hub: McpHub, llm: ScriptedLLM, probes: HttpServer
) -> None:
    """A reference that resolves (a plain-name anchor) but that LangChain's conversion refuses."""
    spec = http_spec(probes, key="probes", name="Probes")
    anchored = {
        "type": "object",
        "$defs": {"Color": {"$anchor": "color", "type": "string", "enum": ["red", "green"]}},
        "properties": {"color": {"$ref": "#color"}},
        "required": ["color"],
    }
    tools = [
        b.model_copy(update={"tool": b.tool.model_copy(update={"input_schema": anchored})})
        if b.tool.name == "local_ref"
        else b
        for b in only(hub, spec, "local_ref") + only(hub, spec, "echo")
    ]
    llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="c1"),)), Turn(text="Done."))
    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools, user_message="Echo"))
    assert events[-1].type == "done", [e.data() for e in events]
    [warning] = [e.message for e in events if e.type == "warning"]
    assert warning.startswith("Probes: the tool 'local_ref' is left out because its input schema cannot be offered")
    assert [tool["function"]["name"] for tool in llm.requests[0]["tools"]] == ["echo"]
    assert next(e for e in events if e.type == "tool_result").ok


COLORS = {"enum": ["red"]}


@pytest.mark.parametrize(
    "schema",
    [
        {"$id": "https://example.com/tool.json", "$defs": {"C": COLORS}, "properties": {"c": {"$ref": "#/$defs/C"}}},
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"C": COLORS},
            "properties": {"c": {"$ref": "#/definitions/C"}},
        },
        {"properties": {"c": {"$id": "inner", "$defs": {"C": COLORS}, "$ref": "#/$defs/C"}}},
        {"$defs": {"C": {"$anchor": "colour", **COLORS}}, "properties": {"c": {"$ref": "#colour"}}},
        {"$defs": {"a/b": COLORS}, "properties": {"c": {"$ref": "#/$defs/a~1b"}}},
    ],
)
def test_references_within_the_schema_resolve(schema: dict[str, Any]) -> None:
    assert argument_problems({"type": "object", **schema}, {"c": "blue"}) == [
        "arguments.c: 'blue' is not one of ['red']"
    ]


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("#/$defs/missing", "has the reference '#/$defs/missing' (at properties.c), which points at nothing in it"),
        (
            "other.json",
            "refers to 'other.json' (at properties.c), outside itself, and schema references are never fetched",
        ),
    ],
)
def test_a_reference_that_resolves_to_nothing_within_the_schema_is_named(ref: str, reason: str) -> None:
    with pytest.raises(SchemaProblem) as raised:
        argument_problems({"type": "object", "properties": {"c": {"$ref": ref}}}, {"c": "blue"})
    assert raised.value.reason == reason
