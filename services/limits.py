"""The numeric settings with bounds (timeouts, rounds, calls): one definition each.

The services' specs validate with them (`Limit.field()`), and the Odoo models take their field
defaults and constraints from the same objects, so a record the form accepts is always a spec the
services accept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import Field

from .errors import ConfigError


class LimitedField(NamedTuple):
    """A record's field held to a Limit, and the message (lazily translated) when it is not. A named
    constructor, not a bare tuple: Odoo 19's string extractor takes a string opening the next bare
    tuple after a translated call for a translatable one."""

    field: str
    limit: Limit
    message: Any


@dataclass(frozen=True)
class Limit:
    """A setting's default and its bounds: above `low` (or from it, when `low_included`) up to
    `high`, both included where said."""

    default: float
    high: float
    low: float = 0
    low_included: bool = False

    def field(self, **kwargs: Any) -> Any:
        """The pydantic Field of a spec holding this setting."""
        lower = {"ge": self.low} if self.low_included else {"gt": self.low}
        return Field(self.default, le=self.high, **lower, **kwargs)

    def allows(self, value: float) -> bool:
        above = value >= self.low if self.low_included else value > self.low
        return above and value <= self.high

    def from_option(self, options: Mapping[str, str], option: str) -> float:
        """The number `option` of an `[ai_mcp]` section holds (options as strings); the default when
        it is absent or empty. Raises ConfigError naming the option when it is not a number within
        the bounds."""
        text = str(options.get(option) or "").strip()
        if not text:
            return self.default
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not self.allows(value):
            lower = "at least" if self.low_included else "more than"
            raise ConfigError(
                option,
                f"must be a number {lower} {_number(self.low)} and at most {_number(self.high)}, not {text!r}: "
                "fix it in the [ai_mcp] section of Odoo's configuration file",
            )
        return value

    @property
    def bounds(self) -> dict[str, str]:
        """{low, high} as they read in a message ("between 0 and 300 seconds")."""
        return {"low": _number(self.low), "high": _number(self.high)}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# an MCP server's
CONNECT_TIMEOUT = Limit(default=10.0, high=300)
CALL_TIMEOUT = Limit(default=30.0, high=3600)
# a call reporting progress goes on past its timeout (each report starts it again), up to this
CALL_TIME_CAP = Limit(default=600.0, high=86400)
# how long a question of the server (elicitation) waits for the user before it is cancelled
QUESTION_TIMEOUT = Limit(default=600.0, high=86400)

# a provider's: the context window of its models whose own is unknown (tokens), which the history
# sent is fitted to (services/loop/context_fit.py); 32,000 is read by every current chat model
# worth calling tools with, so a model of unknown size is neither cut short nor overrun
FALLBACK_CONTEXT_WINDOW = Limit(default=32_000, high=10_000_000, low=1_000, low_included=True)

# an assistant's
TEMPERATURE = Limit(default=0.2, high=2, low_included=True)
MAX_ROUNDS = Limit(default=5, high=20, low=1, low_included=True)
MAX_CALLS_PER_ROUND = Limit(default=10, high=100, low=1, low_included=True)
TOOL_CALL_TIMEOUT = Limit(default=30.0, high=3600)
TURN_TIMEOUT = Limit(default=120.0, high=7200)
# tools offered to the model up front: past this many (or TOOL_SEARCH_BYTES of their schemas), it
# is offered a search over them instead (services/loop/offered_tools.py)
TOOL_SEARCH_THRESHOLD = Limit(default=30, high=500, low=1, low_included=True)
TOOL_SEARCH_BYTES = 40_000
# calls a turn runs at once on one server
PER_SERVER_CONCURRENCY = Limit(default=4, high=64, low=1, low_included=True)

# a process's: a running turn renews its heartbeat at least every sixth of this (pacing.py); one
# silent this long died with its process and is taken over (Odoo's `[ai_mcp] turn_stale_after`)
TURN_STALE_AFTER = Limit(default=90.0, high=3600, low=6, low_included=True)
