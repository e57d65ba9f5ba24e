"""The `ai.usage` row of each model call of a turn and its charge to the budgets, written with the
call's `usage` event.

What a row names besides its tokens (user, company, assistant, provider, model, cloud service and
the model's prices in the company's currency) is read once, where the turn is prepared, into a
UsageContext: the writer adds a row per model call, and charges the budgets named there, without
a lookup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from ..services.events import UsageEvent
from ..services.loop import SpendGuard
from ..services.token_usage import Prices, cost_of
from . import budget_charges
from .budget_charges import ChargedBudget, charge_budgets
from .event_dispatch import records
from .sql_rows import insert_row

# the precision of ai.usage's cost (digits=(16, 6)): a call is charged to the budgets what its row
# holds, so that a counter is the sum of its rows (a charge of the unrounded cost drifts from it by
# half a millionth a call)
COST_STEP = Decimal("0.000001")


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
    # the budgets each call is charged to (turn/budget_charges.py)
    budgets: tuple[ChargedBudget, ...] = field(default=())
    # the reports' one currency, and the rate of the company's into it (models/ai_usage.py)
    report_currency_id: int | None = None
    report_rate: Decimal = Decimal(1)


def record_usage(env, context: UsageContext, conversation_id: int, event: UsageEvent, cost: Decimal) -> None:
    """Inserts the row of `event`'s model call, which cost `cost`."""
    usage = event.usage
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
            "incomplete": event.incomplete,
            "sampling": event.sampling,
            "input_tokens": usage.input_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "total_tokens": usage.total_tokens,
            "cost": cost,
            "report_currency_id": context.report_currency_id or context.currency_id,
            "report_cost": cost * context.report_rate,
        },
    )


class UsageLedger:
    """The usage rows of one run of a turn and the budgets they are charged to. Tells the turn's
    SpendGuard each budget's counter after every charge, and keeps the warnings due (a budget
    passing its warning share) for the runner to send."""

    def __init__(self, conversation_id: int, context: UsageContext, spend: SpendGuard | None = None) -> None:
        self.conversation_id = conversation_id
        self.context = context
        self.spend = spend
        self.calls = 0  # the turn's calls charged so far, in the loop's order
        self.warnings: list[str] = []

    @records(UsageEvent)
    def _usage(self, env, seq, event: UsageEvent) -> None:
        cost = cost_of(event.usage, self.context.prices).quantize(COST_STEP, ROUND_HALF_UP)
        self.calls += 1
        budgets = self.context.budgets
        charges = []
        if budgets:
            now = budget_charges.budget_now(env.cr)
            charges = charge_budgets(env.cr, budgets, cost, event.usage.total_tokens, now)
        # after the charge: the counter it locked until the commit puts the rows of the calls that
        # share a budget in the order of their charges
        record_usage(env, self.context, self.conversation_id, event, cost)
        for charge in charges:
            if self.spend is not None:
                self.spend.confirm(charge.budget_id, charge.spent, charge.amount, charge.active, self.calls)
            if charge.warn:
                # once per budget and period: read then, in the user's language, with the share spent
                budget = env["ai.budget"].browse(charge.budget_id)
                self.warnings.append(budget._warning_message(charge.spent))

    def take_warnings(self) -> list[str]:
        warnings, self.warnings = self.warnings, []
        return warnings
