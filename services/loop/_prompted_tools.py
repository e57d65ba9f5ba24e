"""Tool calling for models without native function calling.

The tools are described in the system prompt (`describe_tools`) and the model's reply is searched
for calls (`parse_reply`), in either of two forms the prompt teaches:

- JSON: ``{"tool_calls": [{"name": ..., "arguments": {...}}]}``, bare or in a fenced block; a single
  ``{"name": ..., "arguments": {...}}`` object and ``arguments`` given as a JSON string are accepted.
- XML: ``<tool_name><param>value</param></tool_name>``, only for known tool names, so HTML or XML in
  an ordinary answer is never taken for a call.

The reply is read left to right and the first construct wins, so a call quoted inside another
call's arguments is part of those arguments, not a second call. Anything doubtful (malformed or
half-written JSON, an unclosed call tag) yields no call: running a wrong call is worse than
answering with text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ParsedReply:
    """The reply's text without the call markup (stripped), and the calls in reply order."""

    text: str
    calls: tuple[ParsedCall, ...]


def _finite_float(text: str) -> float | str:
    # "1e400" parses to inf, which is no JSON value and could not be sent on to the tool.
    value = float(text)
    return value if math.isfinite(value) else text


# strict=False: models put raw newlines inside JSON strings. NaN and Infinity are kept as the
# strings they are rather than read as floats no JSON encoder may write.
_DECODER = json.JSONDecoder(strict=False, parse_constant=str, parse_float=_finite_float)

_FENCE = "```"
_FENCE_OPEN = rf"(?P<fence>{_FENCE})"
# An object starting with a key: "{" in prose ("use {braces}") is not worth a parse attempt.
_JSON_START = r"(?P<json>\{\s*\")"
_FENCE_LANGUAGE = re.compile(r"[A-Za-z][\w+.-]*(?=\s)")
_SPACE = re.compile(r"\s*")
_XML_PARAM = re.compile(r"<(?P<param>[^\W\d][\w.-]*)\s*>(?P<value>.*?)</(?P=param)\s*>", re.DOTALL)
_UNTERMINATED_STRING = "Unterminated string"

# Calls found in a span of the reply: (start, end, calls).
_Span = tuple[int, int, list[ParsedCall]]


def describe_tools(tools: Sequence[tuple[str, str, dict[str, Any]]]) -> str:
    """The system-prompt section for (model name, description, JSON input schema) tools; "" for none."""
    if not tools:
        return ""
    return "\n\n".join([_INSTRUCTIONS, *(_describe_tool(*tool) for tool in tools)])


_INSTRUCTIONS = """\
# Tools

You can call the tools listed below. To call tools, write EITHER one fenced JSON block:

```json
{"tool_calls": [{"name": "TOOL_NAME", "arguments": {"PARAMETER": VALUE}}]}
```

OR, for each call, one XML block with one element per parameter:

<TOOL_NAME>
<PARAMETER>VALUE</PARAMETER>
</TOOL_NAME>

Rules:
- TOOL_NAME is one of the names listed below, exactly as written.
- Give every required parameter, with the type shown. "arguments" is a JSON object.
- In the XML form, write text as is and numbers, booleans, arrays and objects as JSON; text that
  would read as JSON (such as "42" or "true") goes in JSON double quotes.
- You may call several tools in one reply; they run in the order written.
- After your calls, stop. The results come back in the next message; never invent them.
- When you need no tool, answer normally, without any tool-call block.

## Available tools"""


def _describe_tool(name: str, description: str, schema: dict[str, Any]) -> str:
    lines = [f"### {name}", description.strip() or "(no description)"]
    # The schema comes from the server: expect any shape.
    properties = schema.get("properties")
    listed = schema.get("required")
    required = {item for item in listed if isinstance(item, str)} if isinstance(listed, list) else set()
    if not isinstance(properties, dict) or not properties:
        lines.append("Parameters: none.")
        return "\n".join(lines)
    lines.append("Parameters:")
    for param, param_schema in properties.items():
        lines.append(_describe_param(param, param_schema, param in required))
    return "\n".join(lines)


def _describe_param(name: str, schema: Any, required: bool) -> str:
    facts = [_type_label(schema), "required" if required else "optional"]
    if isinstance(schema, dict) and "default" in schema:
        facts.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    line = f"- {name} ({', '.join(facts)})"
    description = schema.get("description") if isinstance(schema, dict) else None
    if isinstance(description, str) and description.strip():
        # One line per parameter: a description's own line breaks would read as new entries.
        line += ": " + " ".join(description.split())
    return line


def _type_label(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "one of " + ", ".join(json.dumps(value, ensure_ascii=False) for value in enum)
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_label(schema['items'])}"
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list) and kind:
        return " or ".join(str(k) for k in kind)
    for combinator in ("anyOf", "oneOf"):
        alternatives = schema.get(combinator)
        if isinstance(alternatives, list) and alternatives:
            return " or ".join(_type_label(alternative) for alternative in alternatives)
    return "any"


def parse_reply(text: str, known_tools: Collection[str]) -> ParsedReply:
    """The calls in a model's reply and the text around them. Never raises.

    Calls in the JSON form are returned whatever their name, so that the agent loop can answer a
    call to an unknown tool with an error the model reads and corrects; the XML form is only
    recognised for `known_tools`.
    """
    spans = _scan(text, _candidates(known_tools))
    remaining = "\n\n".join(piece.strip() for piece in _outside(text, spans) if piece.strip())
    return ParsedReply(text=remaining, calls=tuple(call for _, _, calls in spans for call in calls))


def _outside(text: str, spans: list[_Span]) -> list[str]:
    """The pieces of `text` between the spans."""
    pieces, position = [], 0
    for start, end, _ in spans:
        pieces.append(text[position:start])
        position = end
    pieces.append(text[position:])
    return pieces


def _candidates(known_tools: Collection[str]) -> re.Pattern[str]:
    alternatives = [_FENCE_OPEN, _JSON_START]
    if known_tools:
        names = "|".join(re.escape(name) for name in sorted(known_tools))
        alternatives.append(rf"(?P<xml><(?P<tool>{names})\s*>)")
    return re.compile("|".join(alternatives), re.DOTALL)


def _scan(text: str, candidates: re.Pattern[str]) -> list[_Span]:
    """Every call span in `text`, in order."""
    spans: list[_Span] = []
    position = 0
    while (match := candidates.search(text, position)) is not None:
        calls, position = _read(text, match, candidates)
        if calls is not None:
            spans.append((match.start(), position, calls))
    return spans


def _read(text: str, match: re.Match[str], candidates: re.Pattern[str]) -> tuple[list[ParsedCall] | None, int]:
    """The calls of the construct `match` opens (None if it is not call markup), and where to go on."""
    if match.group("fence") is not None:
        return _read_fence(text, match.end(), candidates)
    if match.group("json") is not None:
        return _read_json(text, match.start())
    return _read_xml(text, match)


def _read_fence(text: str, start: int, candidates: re.Pattern[str]) -> tuple[list[ParsedCall] | None, int]:
    """A fenced block is call markup only if it holds nothing but calls.

    Code or example JSON shown in a fence is left alone. The calls are read before the closing
    fence is looked for, so a call whose arguments hold a fence (markdown to write) stays whole.
    """
    language = _FENCE_LANGUAGE.match(text, start)
    position = language.end() if language else start
    calls: list[ParsedCall] = []
    blocks = 0
    while True:
        position = _SPACE.match(text, position).end()
        if blocks and text.startswith(_FENCE, position):
            return calls, position + len(_FENCE)
        match = candidates.match(text, position)
        if match is None or match.group("fence") is not None:
            return None, _past_fence(text, start)
        found, position = _read(text, match, candidates)
        if found is None:
            return None, _past_fence(text, start)
        calls += found
        blocks += 1


def _past_fence(text: str, start: int) -> int:
    close = text.find(_FENCE, start)
    # Unclosed: go on right after the opening fence, as if it were not there.
    return start if close < 0 else close + len(_FENCE)


def _read_json(text: str, start: int) -> tuple[list[ParsedCall] | None, int]:
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        # Whatever lies before the error belongs to this broken object; a call found inside it
        # would be a fragment (say, the first of a half-written list). An unterminated string
        # runs to the end of the reply.
        if exc.msg.startswith(_UNTERMINATED_STRING):
            return None, len(text)
        return None, max(exc.pos, start + 1)
    except (ValueError, RecursionError):
        # Nesting beyond the recursion limit, or an integer too long to convert: nothing after
        # this point can be trusted as a call.
        return None, len(text)
    return _calls_from_json(value), end


def _calls_from_json(value: Any) -> list[ParsedCall] | None:
    if not isinstance(value, dict):
        return None
    if "tool_calls" in value:
        entries = value["tool_calls"]
        if not isinstance(entries, list):
            return None
        calls = [_call(entry) for entry in entries]
        # One malformed entry means the block was not understood: run none of it.
        if any(call is None for call in calls):
            return None
        return calls
    # A lone object needs both keys: {"name": "Ada"} in an answer is data, not a call.
    if "name" in value and "arguments" in value:
        call = _call(value)
        return None if call is None else [call]
    return None


def _call(entry: Any) -> ParsedCall | None:
    if not isinstance(entry, dict):
        return None
    name = entry.get("name")
    arguments = entry.get("arguments")
    if not isinstance(name, str) or not name:
        return None
    # Models write a tool without parameters in every way: no arguments, null, "".
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        arguments = _arguments_from_string(arguments)
    if not isinstance(arguments, dict):
        return None
    return ParsedCall(name=name, arguments=arguments)


def _arguments_from_string(raw: str) -> Any:
    if not raw.strip():
        return {}
    try:
        return _DECODER.decode(raw)
    except (ValueError, RecursionError):
        return None


def _read_xml(text: str, match: re.Match[str]) -> tuple[list[ParsedCall] | None, int]:
    name = match.group("tool")
    close = _closing_tag(text, name, match.end())
    if close is None:
        # An unclosed call tag: the reply was cut inside a call, and whatever follows is part of it.
        return None, len(text)
    body = text[match.end() : close.start()]
    arguments = {param.group("param"): _xml_value(param.group("value")) for param in _XML_PARAM.finditer(body)}
    return [ParsedCall(name=name, arguments=arguments)], close.end()


def _closing_tag(text: str, name: str, start: int) -> re.Match[str] | None:
    """The tag that closes the call: a parameter may share the tool's name, so count nesting."""
    depth = 1
    for tag in re.compile(rf"<(?P<slash>/?){re.escape(name)}\s*>").finditer(text, start):
        depth += -1 if tag.group("slash") else 1
        if depth == 0:
            return tag
    return None


def _xml_value(raw: str) -> Any:
    """A parameter's value: JSON where it parses (numbers, booleans, arrays, objects), else the text."""
    value = raw.strip()
    try:
        return _DECODER.decode(value)
    except (ValueError, RecursionError):
        return value
