"""A server's question whose fields have defaults: an accepted answer that leaves such a field out
reaches the server with the default (MCP 2025-11-25), and a default the field refuses never does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import http_spec
from test_elicitation import ask_and_answer, result_of

from services.mcp import McpHub, apply_defaults
from testing.mcp_servers import DEFAULTS_FORM, DEFAULTS_FORM_UNTOUCHED, HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall


def server_received(
    hub: McpHub, llm: ScriptedLLM, server: HttpServer, content: dict[str, Any], fill: bool = True
) -> dict[str, Any]:
    """What `ask_defaults` got back when the user accepted with `content` (with the defaults applied
    to it, as the chat does, unless `fill` is False)."""
    spec = http_spec(server, key="asking-defaults")
    events = ask_and_answer(
        hub,
        llm,
        spec,
        (ToolCall("ask_defaults", {}, id="call_defaults"),),
        lambda event: ("accept", apply_defaults(event.requested_schema, content) if fill else content),
    )
    question = next(e for e in events if e.type == "elicitation_required")
    assert question.requested_schema == DEFAULTS_FORM
    echoed = json.loads(result_of(events, "call_defaults").model_text)
    assert echoed["action"] == "accept"
    return echoed["content"]


def test_an_untouched_answer_reaches_the_server_with_every_default(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    assert server_received(hub, llm, notifying_http, {}) == DEFAULTS_FORM_UNTOUCHED


def test_what_the_user_set_wins_over_the_default(hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer) -> None:
    answer = {"count": 5, "color": "red", "tags": [], "gift": False, "comment": "ring twice"}
    assert server_received(hub, llm, notifying_http, answer) == {**DEFAULTS_FORM_UNTOUCHED, **answer}


def test_the_server_does_not_fill_in_defaults_itself(hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer) -> None:
    # what makes the two tests above mean something: left alone, the field stays out
    assert server_received(hub, llm, notifying_http, {"count": 2}, fill=False) == {"count": 2}


@pytest.mark.parametrize(
    ("field", "default"),
    [
        ({"type": "integer"}, "many"),
        ({"type": "integer"}, 2.5),
        ({"type": "string", "enum": ["red", "green"]}, "pink"),
        ({"type": "string", "oneOf": [{"const": "s", "title": "Small"}]}, "xl"),
        ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, ["a", "z"]),
        ({"type": "number", "maximum": 10}, 11),
        ({"type": "boolean"}, "yes"),
        ({"type": 12}, 1),
        ({"type": "string", "pattern": "("}, "x"),
        ({"$ref": "#/$defs/missing"}, "x"),
    ],
)
def test_a_default_the_field_refuses_is_not_applied(field: dict[str, Any], default: Any) -> None:
    properties = {"bad": {**field, "default": default}, "good": {"type": "string", "default": "ok"}}
    schema = {"type": "object", "properties": properties}
    assert apply_defaults(schema, {}) == {"good": "ok"}


def test_odd_schemas_and_answers_are_left_for_the_check_to_report() -> None:
    odd = (None, [], "x", {}, {"properties": []}, {"properties": {"a": True, "b": "x", "c": {"type": "string"}}})
    for schema in odd:
        assert apply_defaults(schema, {"z": 1}) == {"z": 1}
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    assert apply_defaults(schema, ["not", "an", "object"]) == ["not", "an", "object"]
    assert apply_defaults(schema, {"a": None}) == {"a": None}, "a field the answer gives, even null, is the user's"
    refs = {"$defs": {"Color": {"enum": ["red"]}}, "properties": {"c": {"$ref": "#/$defs/Color", "default": "red"}}}
    assert apply_defaults(refs, {}) == {"c": "red"}


def test_the_answer_and_the_schema_are_not_changed_in_place() -> None:
    schema = {"properties": {"tags": {"type": "array", "default": ["a"]}}}
    content: dict[str, Any] = {}
    filled = apply_defaults(schema, content)
    filled["tags"].append("b")
    assert content == {} and schema["properties"]["tags"]["default"] == ["a"]
