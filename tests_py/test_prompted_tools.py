"""Prompted tool calling: the prompt section, and tolerant parsing of calls out of the reply text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from services.loop._prompted_tools import ParsedCall, ParsedReply, describe_tools, parse_reply

KNOWN = {"search", "write_file", "get-time"}
SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for,\n in plain words."},
        "limit": {"type": "integer", "default": 10},
        "order": {"enum": ["asc", "desc"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "since": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["query"],
}


def _calls(text: str) -> tuple[ParsedCall, ...]:
    return parse_reply(text, KNOWN).calls


# --- describe_tools -----------------------------------------------------------------------------


def test_describe_tools_teaches_both_forms_and_lists_parameters() -> None:
    prompt = describe_tools([("search", "Search the web.", SEARCH_SCHEMA), ("get-time", "", {"type": "object"})])
    assert '{"tool_calls": [{"name": "TOOL_NAME", "arguments": {"PARAMETER": VALUE}}]}' in prompt
    assert "<TOOL_NAME>\n<PARAMETER>VALUE</PARAMETER>\n</TOOL_NAME>" in prompt
    assert (
        "### search\nSearch the web.\nParameters:\n"
        "- query (string, required): What to look for, in plain words.\n"
        "- limit (integer, optional, default 10)\n"
        '- order (one of "asc", "desc", optional)\n'
        "- tags (array of string, optional)\n"
        "- since (string or null, optional)"
    ) in prompt
    assert prompt.endswith("### get-time\n(no description)\nParameters: none.")


def test_describe_tools_survives_odd_schemas() -> None:
    odd = {"properties": {"a": True, "b": {"type": ["integer", "null"]}, "c": {}}, "required": [{"x": 1}, "b"]}
    assert describe_tools([("t", "T.", odd)]).endswith(
        "- a (any, optional)\n- b (integer or null, required)\n- c (any, optional)"
    )


def test_describe_tools_is_deterministic_and_empty_without_tools() -> None:
    tools = [("search", "Search.", SEARCH_SCHEMA)]
    assert describe_tools(tools) == describe_tools([("search", "Search.", json.loads(json.dumps(SEARCH_SCHEMA)))])
    assert describe_tools([]) == ""


def test_the_prompt_itself_holds_no_call() -> None:
    # A model that echoes its instructions must not trigger a call.
    prompt = describe_tools([("search", "Search the web.", SEARCH_SCHEMA)])
    assert parse_reply(prompt, KNOWN).calls == ()


# --- parse_reply: readable examples ---------------------------------------------------------------


def test_fenced_json_block() -> None:
    reply = (
        'Let me look.\n```json\n{"tool_calls": [{"name": "search", "arguments": {"query": "odoo"}}]}\n```\nOne moment.'
    )
    assert parse_reply(reply, KNOWN) == ParsedReply(
        text="Let me look.\n\nOne moment.", calls=(ParsedCall("search", {"query": "odoo"}),)
    )


def test_fence_without_language_and_bare_json() -> None:
    call = ParsedCall("search", {"query": "x"})
    assert _calls('```\n{"tool_calls": [{"name": "search", "arguments": {"query": "x"}}]}\n```') == (call,)
    assert _calls('Sure: {"tool_calls": [{"name": "search", "arguments": {"query": "x"}}]}') == (call,)


def test_single_object_and_arguments_as_a_json_string() -> None:
    assert _calls('{"name": "search", "arguments": {"limit": 3}}') == (ParsedCall("search", {"limit": 3}),)
    assert _calls('{"name": "search", "arguments": "{\\"limit\\": 3}"}') == (ParsedCall("search", {"limit": 3}),)


def test_tools_without_arguments() -> None:
    reply = (
        '{"tool_calls": [{"name": "get-time"}, {"name": "get-time", "arguments": null},'
        ' {"name": "get-time", "arguments": ""}]}'
    )
    assert _calls(reply) == (ParsedCall("get-time", {}),) * 3


def test_xml_form_decodes_json_values() -> None:
    reply = (
        "Checking.\n<search>\n<query> red shoes </query>\n<limit>5</limit>\n<exact>true</exact>\n"
        '<tags>["a", "b"]</tags>\n<filter>{"size": 42}</filter>\n<code>"007"</code>\n</search>'
    )
    assert parse_reply(reply, KNOWN) == ParsedReply(
        text="Checking.",
        calls=(
            ParsedCall(
                "search",
                {
                    "query": "red shoes",
                    "limit": 5,
                    "exact": True,
                    "tags": ["a", "b"],
                    "filter": {"size": 42},
                    "code": "007",
                },
            ),
        ),
    )


def test_xml_form_only_for_known_tools() -> None:
    reply = "Use <b>bold</b> and <div><p>x</p></div>, or <unknown><q>1</q></unknown>."
    assert parse_reply(reply, KNOWN) == ParsedReply(text=reply, calls=())


def test_several_calls_in_reply_order_across_forms() -> None:
    reply = (
        '<get-time></get-time> then {"name": "search", "arguments": {"query": "a"}}\n'
        '```json\n{"tool_calls": [{"name": "write_file", "arguments": {"path": "p"}},'
        ' {"name": "search", "arguments": {}}]}\n```'
    )
    assert [call.name for call in _calls(reply)] == ["get-time", "search", "write_file", "search"]
    assert parse_reply(reply, KNOWN).text == "then"


def test_unknown_names_in_json_form_are_returned_for_the_loop_to_refuse() -> None:
    assert _calls('{"tool_calls": [{"name": "rm_rf", "arguments": {}}]}') == (ParsedCall("rm_rf", {}),)


def test_a_call_inside_another_calls_arguments_is_an_argument() -> None:
    inner = '{"name": "search", "arguments": {}} and <search><query>x</query></search>'
    reply = json.dumps({"name": "write_file", "arguments": {"content": inner}})
    assert _calls(reply) == (ParsedCall("write_file", {"content": inner}),)
    xml = f"<write_file><content>{inner}</content></write_file>"
    assert _calls(xml) == (ParsedCall("write_file", {"content": inner}),)


def test_markdown_fences_inside_fenced_call_arguments() -> None:
    content = "# Title\n```python\nprint(1)\n```\n"
    reply = (
        "```json\n" + json.dumps({"tool_calls": [{"name": "write_file", "arguments": {"content": content}}]}) + "\n```"
    )
    assert parse_reply(reply, KNOWN) == ParsedReply(text="", calls=(ParsedCall("write_file", {"content": content}),))


def test_raw_newlines_inside_json_strings_are_tolerated() -> None:
    assert _calls('{"name": "write_file", "arguments": {"content": "a\nb"}}') == (
        ParsedCall("write_file", {"content": "a\nb"}),
    )


def test_example_code_and_data_are_not_calls() -> None:
    for reply in [
        '```python\nrequest = {"name": "search", "arguments": {}}\nsend(request)\n```',
        '{"name": "Ada", "age": 36}',
        '{"tool_calls": "none"}',
        '{"tool_calls": [{"name": "search", "arguments": {}}, {"arguments": {}}]}',
        '{"config": {"name": "search", "arguments": {}}}',
    ]:
        assert parse_reply(reply, KNOWN) == ParsedReply(text=reply, calls=()), reply


def test_an_empty_tool_calls_block_is_removed() -> None:
    assert parse_reply('Nothing to do. {"tool_calls": []}', KNOWN) == ParsedReply(text="Nothing to do.", calls=())


def test_garbage_and_half_written_calls_yield_no_call() -> None:
    for reply in [
        "",
        "   ",
        '{"tool_calls": [{"name": "x", "argu',
        '{"tool_calls": [{"name": "search", "arguments": {}}, {"name": "write_file", "arguments": {}}',
        '```json\n{"tool_calls": [{"name": "search", "arguments": {"query": "a',
        "<search><query>shoes</query>",
        "<search><query>shoes",
        '{"name": "search", "arguments": "{\\"query\\": ',
        '{"name": "write_file", "arguments": {"content": "<search><query>x</query></search> and',
        '<write_file><content>{"name": "search", "arguments": {}}',
        "{{{{ }}}} ``` <<<>>> \x00 \ud800",
        "[" * 50_000,
        '{"a":' * 50_000,
    ]:
        assert parse_reply(reply, KNOWN) == ParsedReply(text=reply.strip(), calls=()), reply[:80]


def test_non_json_numbers_stay_strings() -> None:
    reply = '{"name": "search", "arguments": {"a": NaN, "b": 1e400, "c": 2.5}} <search><a>Infinity</a></search>'
    assert _calls(reply) == (
        ParsedCall("search", {"a": "NaN", "b": "1e400", "c": 2.5}),
        ParsedCall("search", {"a": "Infinity"}),
    )


# --- parse_reply: properties ----------------------------------------------------------------------

_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
# XML values and names must not hold "<", or they would be markup themselves.
_XML_TEXT = st.text(st.characters(blacklist_characters="<"), max_size=12)
_XML_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _XML_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_XML_TEXT, inner, max_size=3),
    max_leaves=8,
)
_XML_KEY = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,10}", fullmatch=True)
_NAMES = st.lists(st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True), min_size=1, max_size=4, unique=True)
_PROSE = st.text(st.characters(blacklist_characters="{}<`"), max_size=30)
_SEPARATOR = st.sampled_from(["", " ", "\n", "\n\n"])
_JSON_FORMS = ["fenced_json", "fenced", "bare", "single", "string_arguments"]


def _xml_value(value: Any) -> str:
    if isinstance(value, str) and value and value == value.strip():
        try:
            json.loads(value, strict=False)
        except ValueError:
            return value  # plain text, written as is
    return json.dumps(value, ensure_ascii=False)


def _markup(form: str, call: ParsedCall, ascii_only: bool, indent: int | None) -> str:
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=ascii_only, indent=indent)

    if form == "xml":
        params = "".join(f"<{key}>{_xml_value(value)}</{key}>\n" for key, value in call.arguments.items())
        return f"<{call.name}>\n{params}</{call.name}>"
    if form == "single":
        return dump({"name": call.name, "arguments": call.arguments})
    if form == "string_arguments":
        return dump({"name": call.name, "arguments": json.dumps(call.arguments)})
    block = dump({"tool_calls": [{"name": call.name, "arguments": call.arguments}]})
    return {"fenced_json": f"```json\n{block}\n```", "fenced": f"```\n{block}\n```", "bare": block}[form]


def _calls_as_values(names: list[str], xml: bool) -> st.SearchStrategy[Any]:
    """Argument values that look like calls: they must stay arguments, whole or cut short."""
    name = st.sampled_from(names)
    as_object = name.map(lambda n: {"name": n, "arguments": {}})
    as_json_text = name.map(lambda n: json.dumps({"name": n, "arguments": {}}))
    if xml:
        return as_object | as_json_text
    return as_object | as_json_text | name.map(lambda n: f"<{n}><q>1</q></{n}>")


@st.composite
def _embedded_call(draw: st.DrawFn, names: list[str], forms: list[str]) -> tuple[str, ParsedCall]:
    form = draw(st.sampled_from(forms))
    xml = form == "xml"
    values = (_XML_VALUE if xml else _JSON_VALUE) | _calls_as_values(names, xml)
    arguments = draw(st.dictionaries(_XML_KEY if xml else st.text(max_size=10), values, max_size=4))
    call = ParsedCall(draw(st.sampled_from(names)), arguments)
    return _markup(form, call, draw(st.booleans()), draw(st.sampled_from([None, 2]))), call


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_embedded_calls_parse_back_exactly(data: st.DataObject) -> None:
    names = data.draw(_NAMES)
    items = data.draw(st.lists(_embedded_call(names, [*_JSON_FORMS, "xml"]), min_size=1, max_size=3))
    prose = data.draw(st.lists(_PROSE, min_size=len(items) + 1, max_size=len(items) + 1))
    separator = data.draw(_SEPARATOR)
    text = prose[0] + "".join(
        separator + markup + separator + after for (markup, _), after in zip(items, prose[1:], strict=True)
    )
    assert parse_reply(text, names) == ParsedReply(
        text="\n\n".join(piece.strip() for piece in prose if piece.strip()),
        calls=tuple(call for _, call in items),
    )


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_truncated_call_is_no_call(data: st.DataObject) -> None:
    names = data.draw(_NAMES)
    markup, call = data.draw(_embedded_call(names, [*_JSON_FORMS, "xml"]))
    before = data.draw(_PROSE) + data.draw(_SEPARATOR)
    cut = data.draw(st.integers(0, len(markup) - 1))
    calls = parse_reply(before + markup[:cut], names).calls
    # Only the closing fence may be cut from a whole JSON object; the call then is whole too.
    if markup.startswith("<") or cut <= markup.rindex("}"):
        assert calls == ()
    else:
        assert calls in ((), (call,))


_FRAGMENTS = st.sampled_from(
    [
        '{"tool_calls": [',
        '{"name": ',
        '"search"',
        '"arguments": ',
        "{",
        "}",
        "[",
        "]",
        '"',
        ",",
        ":",
        "\\",
        "```",
        "```json\n",
        "<search>",
        "</search>",
        "<query>",
        "</query>",
        "null",
        "1e999",
        "NaN",
        "\n",
        "\r",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FRAGMENTS | st.text(max_size=5), max_size=30).map("".join))
def test_parse_reply_never_raises(text: str) -> None:
    reply = parse_reply(text, {"search"})
    assert all(isinstance(call.arguments, dict) and call.name for call in reply.calls)
    assert len(reply.text) <= len(text)
