"""Model-facing function names for MCP tools.

OpenAI-compatible APIs accept function names matching ``^[a-zA-Z0-9_-]{1,64}$`` and fail the whole
request on one bad or duplicate name, while MCP allows 128 characters, dots, slashes and any server
may offer a tool called ``search``. This module gives every tool of a turn a valid, unique name and
maps the model's answer back to the (server, tool) it means.

Names depend only on the *set* of refs, never on their order: when a later turn offers the same
tools, the names in the conversation history still point at the same tools.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

# OpenAI's documented pattern. Check with fullmatch(): "$" also matches before a final newline.
MODEL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

MAX_LEN = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 8
# Truncated names keep this many characters, then "_" and the hash: 55 + 1 + 8 = 64.
_KEEP = MAX_LEN - 1 - _HASH_LEN
_PREFIX_SEP = "__"
# Naming levels, tried in order for names that clash: plain, server-prefixed, prefixed + hash.
_PLAIN, _PREFIXED, _HASHED = 0, 1, 2


@dataclass(frozen=True)
class ToolRef:
    """One MCP tool as offered in a turn: the server's key and display name, and the tool's MCP name."""

    server_key: str
    server_name: str
    tool: str


def sanitize(text: str, fallback: str) -> str:
    """Replace every character a model name may not hold with "_"; `fallback` stands in for ""."""
    return _UNSAFE.sub("_", text) or fallback


def _digest(ref: ToolRef) -> str:
    # The NUL separator keeps ("ab", "c") and ("a", "bc") apart.
    return hashlib.sha256(f"{ref.server_key}\0{ref.tool}".encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LEN]


def _fit(name: str, digest: str) -> str:
    if len(name) <= MAX_LEN:
        return name
    return f"{name[:_KEEP]}_{digest}"


def _candidate(ref: ToolRef, level: int, digest: str) -> str:
    name = sanitize(ref.tool, "tool")
    if level >= _PREFIXED:
        name = f"{sanitize(ref.server_name, 'server')}{_PREFIX_SEP}{name}"
    if level >= _HASHED:
        name = f"{name}_{digest}"
    return _fit(name, digest)


class ToolNameMap:
    """The two-way mapping between a turn's tools and the names the model sees."""

    def __init__(self, names: dict[ToolRef, str]) -> None:
        self._names = names
        self._refs = {name: ref for ref, name in names.items()}

    @classmethod
    def build(cls, refs: Sequence[ToolRef]) -> ToolNameMap:
        """Name every ref; a ref given twice is named once.

        A name unique among the turn's tools is used as is. Names that clash all move up a level
        (server prefix, then a hash of server key and tool), until none clash; a name that only
        clashes with another's prefixed form moves up too, so the result is unique whatever the
        tool names are.

        Raises ValueError when two refs share server key and tool but not server name (the caller
        mixed up its servers), or in the astronomically unlikely case of two 32-bit hashes clashing.
        """
        unique = list(dict.fromkeys(refs))
        _check_identities(unique)
        digests = {ref: _digest(ref) for ref in unique}
        levels = dict.fromkeys(unique, _PLAIN)
        while True:
            names = {ref: _candidate(ref, levels[ref], digests[ref]) for ref in unique}
            clashes = _clashes(names)
            if not clashes:
                return cls(names)
            for group in clashes:
                movable = [ref for ref in group if levels[ref] < _HASHED]
                if not movable:
                    raise ValueError(f"tool names clash even with their hash: {names[group[0]]!r}")
                for ref in movable:
                    levels[ref] += 1

    def model_name(self, ref: ToolRef) -> str:
        """The name the model sees for `ref`; KeyError for a ref not given to `build`."""
        return self._names[ref]

    def resolve(self, model_name: str) -> ToolRef | None:
        """The tool a model name stands for, or None for a name the model invented."""
        return self._refs.get(model_name)

    def items(self) -> list[tuple[str, ToolRef]]:
        """(model name, ref) pairs in the order the refs were first given."""
        return [(name, ref) for ref, name in self._names.items()]


def _check_identities(refs: list[ToolRef]) -> None:
    # The hash covers server key and tool only, so those two must identify a tool.
    seen: dict[tuple[str, str], ToolRef] = {}
    for ref in refs:
        other = seen.setdefault((ref.server_key, ref.tool), ref)
        if other != ref:
            raise ValueError(
                f"server {ref.server_key!r} offers tool {ref.tool!r} under two names: "
                f"{other.server_name!r} and {ref.server_name!r}"
            )


def _clashes(names: dict[ToolRef, str]) -> list[list[ToolRef]]:
    groups: dict[str, list[ToolRef]] = defaultdict(list)
    for ref, name in names.items():
        groups[name].append(ref)
    return [group for group in groups.values() if len(group) > 1]
