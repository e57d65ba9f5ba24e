"""The `ai.usage` row of each model call of a turn, written with the call's `usage` event.

What a row names besides its tokens (user, company, assistant, provider, model, cloud service and
the model's prices in the company's currency) is read once, where the turn is prepared, into a
UsageContext: the writer adds a row per model call without a lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..services.events import UsageEvent
from ..services.token_usage import Prices, cost_of
from .sql_rows import insert_row


@dataclass(frozen=True)
class UsageContext:
    """What every usage row of one run of a turn names, as plain ids."""

    user_id: int
    company_id: int
    currency_id: int
    assistant_id: int
    provider_id: int
    model_id: int | None
    model_name: str
    cloud_service_id: int | None
    prices: Prices


def record_usage(env, context: UsageContext, conversation_id: int, event: UsageEvent) -> Decimal:
    """Inserts the row of `event`'s model call; returns its cost."""
    usage = event.usage
    cost = cost_of(usage, context.prices)
    insert_row(
        env["ai.usage"],
        {
            "date": env.cr.now(),
            "user_id": context.user_id,
            "company_id": context.company_id,
            "currency_id": context.currency_id,
            "assistant_id": context.assistant_id,
            "provider_id": context.provider_id,
            "model_id": context.model_id,
            "model_name": context.model_name,
            "cloud_service_id": context.cloud_service_id,
            "conversation_id": conversation_id,
            "round": event.round,
            "input_tokens": usage.input_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "total_tokens": usage.total_tokens,
            "cost": cost,
        },
    )
    return cost
