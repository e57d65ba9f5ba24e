"""Token usage of one model call, and what it costs.

Providers count the input tokens read from their prompt cache inside the input tokens (OpenAI's
`prompt_tokens_details.cached_tokens`, LangChain's `input_token_details.cache_read`) and the
reasoning tokens inside the output tokens (`completion_tokens_details.reasoning_tokens`); DeepSeek
names its cached part `prompt_cache_hit_tokens`, at the top of its usage, where LangChain does not
look (so stream.py hands the provider's own counts beside LangChain's). So the
cached part of the input is priced at the cached rate and the rest at the input rate, and reasoning
is priced as output. Money is Decimal: prices of a fraction of a cent per thousand tokens, summed
over a month of rounds, must not drift as binary floats do.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

__all__ = ["MILLION", "PROVIDER_USAGE_FIELDS", "Prices", "TokenUsage", "cost_of"]

MILLION = Decimal(1_000_000)
# counts a provider reports in its `usage` that LangChain's usage_metadata leaves out: DeepSeek's
# input tokens read from its context cache (https://api-docs.deepseek.com/guides/kv_cache)
PROVIDER_USAGE_FIELDS = ("prompt_cache_hit_tokens",)


class TokenUsage(BaseModel):
    """Tokens of one model call as its provider reported them."""

    model_config = ConfigDict(frozen=True)

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cached_input_tokens: NonNegativeInt = 0  # part of input_tokens
    reasoning_tokens: NonNegativeInt = 0  # part of output_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def reported(self) -> bool:
        """Whether the provider reported anything (a proxy refusing `stream_options` reports nothing)."""
        return self.total_tokens > 0

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None, reported: Mapping[str, Any] | None = None) -> TokenUsage:
        """The usage of LangChain's `usage_metadata` (Chat Completions and Responses alike), with
        what it drops read from `reported`, the provider's own usage counts (PROVIDER_USAGE_FIELDS)."""
        if not metadata:
            return cls()
        details_in = metadata.get("input_token_details") or {}
        details_out = metadata.get("output_token_details") or {}
        reported = reported or {}
        return cls(
            input_tokens=_count(metadata.get("input_tokens")),
            output_tokens=_count(metadata.get("output_tokens")),
            cached_input_tokens=_detail(details_in, "cache_read") or _count(reported.get("prompt_cache_hit_tokens")),
            reasoning_tokens=_detail(details_out, "reasoning"),
        )

    def totals(self) -> dict[str, int]:
        """The counts by name, with the total, leaving out those the provider did not report."""
        counts = {**self.model_dump(), "total_tokens": self.total_tokens}
        return {name: count for name, count in counts.items() if count}

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class Prices(BaseModel):
    """A model's prices per million tokens, in one currency. `cached_input` None: the input price."""

    model_config = ConfigDict(frozen=True)

    input: Decimal = Field(Decimal(0), ge=0)
    output: Decimal = Field(Decimal(0), ge=0)
    cached_input: Decimal | None = Field(None, ge=0)

    @property
    def free(self) -> bool:
        return not (self.input or self.output or self.cached_input)


def cost_of(usage: TokenUsage, prices: Prices) -> Decimal:
    """What `usage` costs at `prices`, unrounded: rounding each round to the currency's cents would
    turn most rounds of a cheap model into zero."""
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    cached_price = prices.input if prices.cached_input is None else prices.cached_input
    amount = (usage.input_tokens - cached) * prices.input + cached * cached_price + usage.output_tokens * prices.output
    return amount / MILLION


def _detail(details: Mapping[str, Any], name: str) -> int:
    """A detail of LangChain's usage, under its name or, for a `priority` or `flex` service tier,
    under the tier's prefix (`priority_cache_read`)."""
    return sum(_count(value) for key, value in details.items() if key == name or key.endswith(f"_{name}"))


def _count(value: Any) -> int:
    """A token count as reported; anything else (None, a negative or odd value) counts as none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
