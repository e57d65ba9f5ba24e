"""Parameter presets: checked when saved, resolved per turn, hidden from the model, never overridden by it."""

from __future__ import annotations

import pytest
from conftest import http_spec
from hypothesis import given
from hypothesis import strategies as st

from services.errors import ConfigError
from services.llm import LlmSettings
from services.loop import (
    KNOWN_VARIABLES,
    AssistantSettings,
    ToolBinding,
    TurnRequest,
    resolve_preset,
    run_turn,
    validate_preset,
    variables_in,
)
from services.loop.presets import schema_without
from services.mcp import McpHub
from testing.mcp_servers import HttpServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "note": {"type": "string"}},
    "required": ["a", "b"],
}


def test_unknown_key_and_unknown_variable_are_named() -> None:
    with pytest.raises(ConfigError) as info:
        validate_preset({"c": 1}, SCHEMA)
    assert (
        info.value.field == "arguments"
        and "'c' is not an argument" in info.value.message
        and "a, b, note" in info.value.message
    )
    with pytest.raises(ConfigError) as info:
        validate_preset({"note": "by {{user.password}}"}, SCHEMA)
    assert "{{user.password}} is not a known variable" in info.value.message
    validate_preset({"note": "by {{ user.login }} for {{cloud_service.name}}", "a": "{{user.id}}"}, SCHEMA)


def test_resolution_keeps_types_for_whole_references() -> None:
    values = {"user.id": 7, "user.login": "ana", "cloud_service.name": None}
    assert resolve_preset(
        {"a": "{{user.id}}", "note": "{{user.login}} @ {{cloud_service.name}}", "tags": ["{{user.login}}"]}, values
    ) == {
        "a": 7,
        "note": "ana @ ",
        "tags": ["ana"],
    }


def test_fixed_keys_leave_the_model_schema() -> None:
    shown = schema_without(SCHEMA, {"b": 2})
    assert set(shown["properties"]) == {"a", "note"} and shown["required"] == ["a"]
    assert SCHEMA["required"] == ["a", "b"]  # the tool's own schema is untouched


@given(
    st.recursive(
        st.text(max_size=5) | st.integers() | st.sampled_from(["{{user.id}}", "x {{user.login}} y"]),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
        max_leaves=10,
    )
)
def test_resolved_presets_contain_no_known_reference(value) -> None:
    values = {name: f"<{name}>" for name in KNOWN_VARIABLES}
    assert variables_in(resolve_preset({"v": value}, values)) & KNOWN_VARIABLES == set()


def test_model_cannot_see_or_override_a_preset(hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer) -> None:
    spec = http_spec(tools_server)
    add = next(t for t in hub.run(hub.alist_tools(spec)).tools if t.name == "add")
    binding = ToolBinding(server=spec, tool=add, fixed_arguments=resolve_preset({"b": "{{user.id}}"}, {"user.id": 100}))
    llm.queue(Turn(tool_calls=(ToolCall("add", {"a": 1, "b": 5}),)), Turn(text="101"))
    request = TurnRequest(
        assistant=AssistantSettings(name="A", llm=LlmSettings(base_url=llm.base_url, model="m", max_retries=0)),
        tools=[binding],
        user_message="add",
    )
    events = list(hub.iterate(lambda: run_turn(request, hub)))
    offered = llm.requests[0]["tools"][0]["function"]["parameters"]
    assert set(offered["properties"]) == {"a"} and offered.get("required") == ["a"]
    result = next(e for e in events if e.type == "tool_result")
    assert result.ok and result.model_text == "101.0"  # b came from the preset, not the model's 5
