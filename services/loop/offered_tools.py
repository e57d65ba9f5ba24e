"""What the model is offered each round: every tool of the turn, or, for an assistant with many
tools, a search over them.

Past the assistant's threshold of tools (LoopLimits.tool_search_threshold), or the size of their
schemas (LoopLimits.tool_search_bytes, TOOL_SEARCH_BYTES by default), the model is offered
`search_tools`, the tools the admin marks "always offered" and the tools its searches found, each
with its full schema; the system prompt says how many tools there are and on which servers. A
search runs over the turn's tools only (those the assistant may use, bound by the Odoo layer); what
it finds is offered from the next round on and stays offered for the rest of the conversation, up
to the threshold, the least recently found or called going first. A call of a tool that is not
offered is answered with how to find it.

The tools are offered in an order that only grows within a turn (those found at its start by
name, those found since appended) whatever is called or found again, so that the request's start
stays byte for byte what the provider's prompt cache holds.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..events import FoundTool, ToolCallEvent, ToolKey, ToolSearchEvent
from ..limits import TOOL_SEARCH_BYTES
from .presets import schema_without
from .tool_runner import BoundTool
from .tool_search import MAX_RESULTS, SearchableTool, ToolIndex, index_of
from .transcript import HistoryMessage
from .turn_tools import TurnTools

SEARCH_TOOL = "search_tools"
QUERY_DESCRIPTION = (
    "What the tool should do, in a few words of the user's request (e.g. 'create invoice', 'read excel "
    "range'), or the exact name of a tool"
)


class ToolOffer:
    """The tools offered to the model in one turn, and its searches."""

    def __init__(
        self,
        bound: TurnTools,
        threshold: int,
        found: Sequence[ToolKey],
        history: Sequence[HistoryMessage],
        max_bytes: int = TOOL_SEARCH_BYTES,
    ) -> None:
        self.bound = bound
        self.active = len(bound.tools) > threshold or sum(bound.sizes.values()) > max_bytes
        self.search_name = _free_name(SEARCH_TOOL, bound.tools)
        self.capacity = max(1, threshold - len(bound.always & set(bound.tools)))
        by_key = {(tool.server.key, tool.info.name): name for name, tool in bound.tools.items()}
        # least recently found or called first; what earlier turns called counts as used
        self.found: list[str] = [by_key[key] for key in ((k.server, k.tool) for k in found) if key in by_key]
        # the order offered: by name at the turn's start, each tool found since appended
        self._order: list[str] = sorted(self.found)
        self.used(call.name for message in history for call in message.tool_calls)
        self._definitions: tuple[dict[str, Any], ...] = ()
        self._shown: tuple[str, ...] = ()

    # -- what the model is offered ---------------------------------------------------------------

    def names(self) -> list[str]:
        """Model names of the tools offered now, the search first."""
        if not self.active:
            return list(self.bound.tools)
        always = [name for name in self.bound.tools if name in self.bound.always]
        found = set(self.found) - self.bound.always
        return [self.search_name, *always, *(name for name in self._order if name in found)]

    def definitions(self) -> Sequence[dict[str, Any]]:
        """The OpenAI tools offered now: the same objects while the offer stays the same."""
        if not self.active:
            return self.bound.offered
        names = tuple(self.names())
        if names != self._shown:
            self._shown = names
            self._definitions = (self._search_definition(), *(self.bound.definitions[n] for n in names[1:]))
        return self._definitions

    def offered(self) -> list[BoundTool]:
        """The bound tools offered now (the search aside), for the prompt of a model without native tools."""
        return [self.bound.tools[name] for name in self.names() if name in self.bound.tools]

    def described(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, description, arguments) of the tools offered now, for a model without native tools."""
        tools = [
            (t.model_name, t.info.description, schema_without(t.info.input_schema, t.fixed_arguments))
            for t in self.offered()
        ]
        if not self.active:
            return tools
        search = self._search_definition()["function"]
        return [(search["name"], search["description"], search["parameters"]), *tools]

    def may_call(self, name: str) -> bool:
        return not self.active or name in self.bound.always or name in self.found

    def is_search(self, name: str) -> bool:
        return self.active and name == self.search_name

    def prompt_line(self) -> str:
        """What the system prompt says of the tools when the model searches them."""
        if not self.active:
            return ""
        servers = Counter(tool.server.name for tool in self.bound.tools.values())
        listed = ", ".join(f"{server} ({count})" for server, count in sorted(servers.items()))
        return (
            f"You have {len(self.bound.tools)} tools on these servers: {listed}. Only some are offered at a time: "
            f"call {self.search_name} with what you need to find the others; the tools found are offered "
            "from your next step on."
        )

    # -- searching -------------------------------------------------------------------------------

    def search(self, call: ToolCallEvent) -> ToolSearchEvent:
        """Answer a call of the search: the best matches among the turn's tools, offered from now on."""
        query = call.arguments.get("query")
        query = query.strip() if isinstance(query, str) else ""
        matches = self._index.search(query, MAX_RESULTS) if query else []
        found = [self._found(match) for match in matches]
        self._touch(match.name for match in reversed(matches))  # the best found is the last to go
        return ToolSearchEvent(
            id=call.id,
            name=call.name,
            query=query,
            round=call.round,
            found=found,
            model_text=self._answer(query, found),
            kept=[self._key(name) for name in self.found],
            replay=call.replay,
        )

    def used(self, names: Iterable[str]) -> None:
        """The found tools just called move to the end of the found ones: the last to go."""
        self._touch(name for name in names if name in self.found)

    def _touch(self, names: Iterable[str]) -> None:
        """`names` (found or called) move to the end of the found tools, the least recently used of
        which go beyond the capacity."""
        for name in names:
            if self.active and name in self.bound.tools and name not in self.bound.always:
                if name in self.found:
                    self.found.remove(name)
                else:
                    self._order = [*(n for n in self._order if n != name), name]
                self.found.append(name)
        self._trim()

    def _key(self, name: str) -> ToolKey:
        tool = self.bound.tools[name]
        return ToolKey(server=tool.server.key, tool=tool.info.name)

    def _trim(self) -> None:
        del self.found[: max(0, len(self.found) - self.capacity)]

    @functools.cached_property
    def _index(self) -> ToolIndex:
        return index_of(
            tuple(
                SearchableTool.of(
                    name, tool.info.title, tool.info.description, tool.server.name, _shown_schema(self, name)
                )
                for name, tool in self.bound.tools.items()
            )
        )

    def _found(self, match: SearchableTool) -> FoundTool:
        tool = self.bound.tools[match.name]
        return FoundTool(
            name=match.name,
            tool=tool.info.name,
            title=tool.info.display_title,
            server=tool.server.name,
            summary=match.summary(),
        )

    def _answer(self, query: str, found: list[FoundTool]) -> str:
        if not query:
            return f"Give {self.search_name} a query: a few words saying what the tool should do."
        if not found:
            return (
                f"No tool matches {query!r}. Search again with other words (what the tool does, or a word of its "
                "name), or answer without a tool."
            )
        lines = [f"- {tool.name} ({tool.server}): {tool.summary or tool.title}" for tool in found]
        count = "1 tool" if len(found) == 1 else f"{len(found)} tools"
        return "\n".join([f"{count} found for {query!r}, offered to you from your next step on:", *lines])

    def _search_definition(self) -> dict[str, Any]:
        servers = sorted({tool.server.name for tool in self.bound.tools.values()})
        return {
            "type": "function",
            "function": {
                "name": self.search_name,
                "description": (
                    f"Search the {len(self.bound.tools)} tools on {', '.join(servers)} by what they do. The best "
                    "matches are returned with a line each and offered to you, with their arguments, from your "
                    "next step on. Search again with other words when what you need is not among them."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": QUERY_DESCRIPTION}},
                    "required": ["query"],
                },
            },
        }


def _shown_schema(offer: ToolOffer, name: str) -> dict[str, Any]:
    """The arguments the model is shown (presets left out), as the tool's OpenAI definition says."""
    parameters = offer.bound.definitions[name].get("function", {}).get("parameters")
    return parameters if isinstance(parameters, dict) else {}


def _free_name(wanted: str, taken: Iterable[str]) -> str:
    """`wanted`, or with a number when one of the assistant's own tools has that name."""
    names = set(taken)
    if wanted not in names:
        return wanted
    return next(f"{wanted}_{n}" for n in range(2, len(names) + 3) if f"{wanted}_{n}" not in names)
