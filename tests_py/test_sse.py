"""The SSE wire: what encode_* writes, SseDecoder reads back, however the bytes are split."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.sse import HEARTBEAT, SseDecoder, SseEvent, encode_comment, encode_event


def _decode_all(*chunks: bytes) -> list[SseEvent]:
    decoder = SseDecoder()
    return [event for chunk in chunks for event in decoder.feed(chunk)]


def test_event_wire_format() -> None:
    assert (
        encode_event("text", {"delta": "héllo\nworld"}, 3)
        == 'id: 3\nevent: text\ndata: {"delta":"héllo\\nworld"}\n\n'.encode()
    )
    assert encode_event("done", {}) == b"event: done\ndata: {}\n\n"


def test_heartbeat_and_comments() -> None:
    assert HEARTBEAT == b": heartbeat\n\n"
    assert encode_comment() == b":\n\n"
    assert encode_comment("a\nb\r\nc\rd") == b": a\n: b\n: c\n: d\n\n"
    assert _decode_all(encode_comment("x\n\ndata: {}\n\n")) == []


@pytest.mark.parametrize("event_type", ["Text", "tool-call", "", "text\n", "data: x", "ünï"])
def test_invalid_event_type_is_refused(event_type: str) -> None:
    with pytest.raises(ValueError, match="event type"):
        encode_event(event_type, {})


@pytest.mark.parametrize("event_id", [-1, True])
def test_invalid_event_id_is_refused(event_id: int) -> None:
    with pytest.raises(ValueError, match="event id"):
        encode_event("text", {}, event_id)


def test_payloads_that_are_not_json_objects_are_refused() -> None:
    with pytest.raises(TypeError):
        encode_event("text", ["delta"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        encode_event("text", {"x": float("nan")})


def test_lone_surrogates_survive_as_escapes() -> None:
    wire = encode_event("tool_result", {"content": "a\udc80b"}, 1)
    assert b"\\udc80" in wire
    assert _decode_all(wire) == [SseEvent("tool_result", {"content": "a\udc80b"}, 1)]


def test_crlf_and_cr_line_ends() -> None:
    wire = b'id: 1\r\nevent: text\r\ndata: {"delta":"a"}\r\n\r\nevent: done\rdata: {}\r\r'
    assert _decode_all(wire) == [SseEvent("text", {"delta": "a"}, 1), SseEvent("done", {}, None)]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    # Were the "\n" read as a second line end, the blank line would dispatch "a" without its data.
    assert _decode_all(b"event: a\r", b"\ndata: {}\r", b"\n\r\n") == [SseEvent("a", {}, None)]


def test_comments_and_unknown_fields_are_ignored() -> None:
    wire = b': hello\nretry: 100\nfoo: bar\nevent: x\n:data: {"no": 1}\ndata: {}\n\n'
    assert _decode_all(wire) == [SseEvent("x", {}, None)]


def test_data_lines_are_joined_with_newlines() -> None:
    assert _decode_all(b'data: {"a":\ndata: [1,\ndata:2]}\n\n') == [SseEvent("message", {"a": [1, 2]}, None)]


def test_field_rules() -> None:
    # No space after the colon is fine; only one leading space is stripped; a field without colon
    # has an empty value; an event without data is not dispatched.
    wire = b'event:tick\ndata:  {"a":1}\n\nevent: lost\nid\n\ndata\ndata: {}\n\n'
    assert _decode_all(wire) == [SseEvent("tick", {"a": 1}, None), SseEvent("message", {}, None)]


def test_byte_order_mark_is_dropped_even_when_split() -> None:
    assert _decode_all(b"\xef", b"\xbb", b"\xbfdata: {}\n\n") == [SseEvent("message", {}, None)]
    assert _decode_all(b"\xef\xbb\xbfdata: {}\n\n") == [SseEvent("message", {}, None)]


def test_ids_do_not_carry_over() -> None:
    assert [e.id for e in _decode_all(b"id: 7\ndata: {}\n\ndata: {}\n\n")] == [7, None]


def test_unterminated_event_waits_for_its_blank_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b'data: {"a": 1}\n') == []
    assert decoder.feed(b"\n") == [SseEvent("message", {"a": 1}, None)]


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"event: text\ndata: [1]\n\n", "'text'.*not a JSON object"),
        (b"event: text\ndata: {oops\n\n", "'text'.*not JSON"),
        (b"id: seven\ndata: {}\n\n", "not a sequence number"),
    ],
)
def test_broken_events_raise(wire: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _decode_all(wire)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Line ends, emoji and other multi-byte characters, often.
_TRICKY_TEXT = st.text(st.sampled_from(["\n", "\r", ":", " ", "a", "é", "€", "😀", "\u2028", "\x00"]))
_PAYLOAD = st.dictionaries(st.text(max_size=8) | _TRICKY_TEXT, _JSON | _TRICKY_TEXT, max_size=5)
_EVENT = st.builds(
    SseEvent,
    event=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    data=_PAYLOAD,
    id=st.none() | st.integers(min_value=0, max_value=2**53),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_EVENT, st.integers(0, 2)), max_size=8), st.data())
def test_round_trip_through_any_chunking(items: list[tuple[SseEvent, int]], data: st.DataObject) -> None:
    wire = (
        b"".join(HEARTBEAT * beats + encode_event(event.event, event.data, event.id) for event, beats in items)
        + HEARTBEAT
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=20)))
    chunks = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    assert _decode_all(*chunks) == [event for event, _ in items]


@settings(max_examples=50, deadline=None)
@given(_PAYLOAD)
def test_one_byte_at_a_time(payload: dict) -> None:
    wire = encode_event("text", payload, 1)
    assert b"\n" not in wire.rstrip(b"\n").split(b"data: ", 1)[1]
    assert _decode_all(*(wire[i : i + 1] for i in range(len(wire)))) == [SseEvent("text", payload, 1)]


def test_json_payload_is_compact() -> None:
    payload = {"a": [1, {"b": None}], "é": "😀"}
    data_line = encode_event("text", payload).split(b"\n")[1]
    assert data_line == b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
