"""A tool call's arguments read while the model is still writing them: what an MCP App is shown."""

from __future__ import annotations

import json

import pytest

from services.loop._partial_json import partial_object

ARGUMENTS = {
    "title": 'Q3 "report"\n, ok',
    "rows": [1, -2.5, 3e2, {"name": "x", "done": True, "note": None}],
    "chart": {"kind": "bar", "stacked": False},
    "count": 12345,
    "emoji": "😀 über",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("   ", {}),
        ("{", {}),
        ('{"ti', {}),  # a key being written
        ('{"title"', {}),  # a key without its value
        ('{"title":', {}),
        ('{"title": ', {}),
        ('{"title": "Q', {"title": "Q"}),  # a string as far as it goes
        ('{"title": "Q3"', {"title": "Q3"}),
        ('{"title": "Q3",', {"title": "Q3"}),
        ('{"title": "Q3", "n', {"title": "Q3"}),
        ('{"a": 1, "b": tr', {"a": 1}),  # a literal cut short
        ('{"a": 1, "b": true', {"a": 1, "b": True}),
        ('{"a": 1, "b": fals', {"a": 1}),
        ('{"a": 1, "b": false', {"a": 1, "b": False}),
        ('{"a": 1, "b": nul', {"a": 1}),
        ('{"a": 1, "b": null', {"a": 1, "b": None}),
        ('{"a": 12', {}),  # a number may go on: 12 of 1234
        ('{"a": 12,', {"a": 12}),
        ('{"a": 12 ', {"a": 12}),
        ('{"a": -', {}),
        ('{"a": 1.', {}),
        ('{"a": 1.5', {}),
        ('{"a": 1.5e', {}),
        ('{"a": 1.5e+', {}),
        ('{"a": 1.5e+3', {}),
        ('{"a": 1.5e+3}', {"a": 1500.0}),
        ('{"a": [1, 2', {"a": [1]}),
        ('{"a": [1, 2]', {"a": [1, 2]}),
        ('{"a": [1, 2, ', {"a": [1, 2]}),
        ('{"a": [1, {"b": "x', {"a": [1, {"b": "x"}]}),
        ('{"a": [1, {"b": "x"}, [', {"a": [1, {"b": "x"}, []]}),
        ('{"a": {"b": {"c": "deep', {"a": {"b": {"c": "deep"}}}),
        ('{"a": "12', {"a": "12"}),  # digits in a string are text
        ('{"a": "x, 12', {"a": "x, 12"}),
        ('{"a": "say \\"12', {"a": 'say "12'}),
        ('{"a": "C:\\\\", "b": 7', {"a": "C:\\"}),  # an escaped backslash ends the string
        ('{"a": "x\\', {"a": "x"}),  # an escape cut short
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a": "\\ud83d', {"a": ""}),  # half a surrogate pair
        ('{"a": "\\ud83d\\ude00', {"a": "😀"}),
        ('{"a": "line\\nnext', {"a": "line\nnext"}),
        ('{"a": "über', {"a": "über"}),
    ],
)
def test_what_is_known_of_unfinished_arguments(text: str, expected: dict) -> None:
    assert partial_object(text) == expected


def test_every_prefix_reads_as_a_growing_part_of_the_whole() -> None:
    """What an app is shown only ever grows towards the arguments the call runs with: a value once
    shown is only replaced by its continuation."""
    whole = json.dumps(ARGUMENTS, ensure_ascii=False)
    seen = [partial_object(whole[:end]) for end in range(len(whole) + 1)]
    assert seen[-1] == ARGUMENTS
    for earlier, later in zip(seen, seen[1:], strict=False):
        assert _continues(earlier, later), (earlier, later)


def _continues(earlier: object, later: object) -> bool:
    if isinstance(earlier, dict):
        return (
            isinstance(later, dict)
            and list(earlier) == list(later)[: len(earlier)]
            and all(_continues(value, later[key]) for key, value in earlier.items())
        )
    if isinstance(earlier, list):
        return (
            isinstance(later, list)
            and len(earlier) <= len(later)
            and all(_continues(a, b) for a, b in zip(earlier, later, strict=False))
        )
    if isinstance(earlier, str):
        return isinstance(later, str) and later.startswith(earlier)
    return earlier == later


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2",  # arguments are an object
        '"text',
        "12",
        "true",
        '{"a" 1',  # not JSON at all
        "{1: 2",
        '{"a": 1,}',
        '{"a": NaN',
        "<html>",
    ],
)
def test_what_does_not_begin_an_object_is_no_arguments(text: str) -> None:
    assert partial_object(text) == {}


def test_complete_arguments_read_as_json_does() -> None:
    whole = json.dumps(ARGUMENTS)
    assert partial_object(whole) == json.loads(whole)
    assert partial_object(whole + "\n") == ARGUMENTS


def test_long_arguments_read_in_one_pass() -> None:
    """A call writing a long document: a hundred thousand characters of escapes and digits."""
    text = '{"numbers": [' + ", ".join(str(n) for n in range(10_000)) + '], "body": "' + '\\"12\\\\ ' * 10_000
    arguments = partial_object(text)
    assert arguments["numbers"][-1] == 9999
    assert arguments["body"] == '"12\\ ' * 10_000
