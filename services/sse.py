"""The Server-Sent Events wire of the chat stream (docs/events.md).

One event = ``id:`` (its sequence number), ``event:`` (its type) and one ``data:`` line holding a
JSON object. JSON escapes every control character, so a payload never breaks the framing. The
decoder follows the WHATWG EventSource parsing rules, so tests and Python clients read the stream
exactly as a browser does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_EVENT_TYPE = re.compile(r"[a-z_]+")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_TEXT_LINE_END = re.compile(r"\r\n|\r|\n")
_ID = re.compile(r"[0-9]+")
_BOM = b"\xef\xbb\xbf"


def _json_text(data: dict[str, Any]) -> str:
    if not isinstance(data, dict):
        raise TypeError(f"an event's data must be a dict, not {type(data).__name__}")
    # allow_nan=False: NaN and Infinity are not JSON and would break the browser's JSON.parse.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates (tool output may carry them) have no UTF-8 form; \u escapes keep them.
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def encode_event(event_type: str, data: dict[str, Any], event_id: int | None = None) -> bytes:
    """One event, ready to write; ValueError for a type outside [a-z_]+ or a negative id."""
    if not _EVENT_TYPE.fullmatch(event_type):
        raise ValueError(f"invalid SSE event type {event_type!r}: use lowercase letters and '_'")
    lines = []
    if event_id is not None:
        if isinstance(event_id, bool) or event_id < 0:
            raise ValueError(f"invalid SSE event id {event_id!r}: use a sequence number")
        lines.append(f"id: {event_id}")
    lines.append(f"event: {event_type}")
    lines.append(f"data: {_json_text(data)}")
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """A comment (clients ignore it); each line of `text` gets its own ":" so none is read as a field."""
    lines = _TEXT_LINE_END.split(text)
    return "".join(f": {line}\n" if line else ":\n" for line in lines).encode("utf-8", "replace") + b"\n"


HEARTBEAT = encode_comment("heartbeat")


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: dict[str, Any]
    id: int | None


class SseDecoder:
    """Incremental decoder: feed bytes as they arrive, split anywhere, get whole events back.

    Differences from EventSource, on purpose: `id` is the id given in the event's own block (not
    the last one seen, since ids are sequence numbers of stored events), data must be a JSON object
    and ids decimal numbers (ValueError otherwise: the stream is then broken, drop the decoder),
    and `retry:` is ignored (this decoder does not reconnect).
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._started = False
        # A chunk ending in "\r" may be the first half of "\r\n".
        self._skip_lf = False
        self._event = ""
        self._data: list[str] = []
        self._id: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if not self._started:
            chunk = self._without_bom(chunk)
        if not chunk:
            return []
        scanned = len(self._buffer)
        self._buffer += chunk
        events: list[SseEvent] = []
        # Only the new bytes can hold a line end: the kept remainder never does.
        start = 0
        for match in _LINE_END.finditer(self._buffer, scanned):
            # Lines are decoded whole, so a multi-byte character split across chunks is never cut.
            event = self._line(self._buffer[start : match.start()].decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
            start = match.end()
        self._skip_lf = self._buffer.endswith(b"\r")
        del self._buffer[:start]
        return events

    def _without_bom(self, chunk: bytes) -> bytes:
        """Drop a UTF-8 byte order mark opening the stream, holding back bytes that may start one."""
        pending = bytes(self._buffer) + chunk
        self._buffer.clear()
        if len(pending) < len(_BOM) and _BOM.startswith(pending):
            self._buffer += pending
            return b""
        self._started = True
        return pending.removeprefix(_BOM)

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = self._parse_id(value)
        return None

    def _parse_id(self, value: str) -> int | None:
        if not value:
            return None
        if not _ID.fullmatch(value):
            raise ValueError(f"SSE event id {value!r} is not a sequence number")
        return int(value)

    def _dispatch(self) -> SseEvent | None:
        event_type, data, event_id = self._event or "message", self._data, self._id
        self._event, self._data, self._id = "", [], None
        # An event without data lines is not dispatched (WHATWG).
        if not data:
            return None
        try:
            payload = json.loads("\n".join(data))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"SSE event {event_type!r} (id {event_id}) has data that is not JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise ValueError(f"SSE event {event_type!r} (id {event_id}) has data that is not a JSON object")
        return SseEvent(event=event_type, data=payload, id=event_id)
