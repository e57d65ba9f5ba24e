"""Charging a model call to the budgets of its turn (ai.budget), in the writer's transaction.

Each budget keeps one counter row per period (ai.budget.period), created by the first call of the
period and raised in place by every call. A counter, rather than summing ai.usage when a turn
asks, because the question is asked before every turn and every round of 200 turns at once: one
indexed row per budget answers it, where a sum reads every row of the period, and a single
`UPDATE ... SET spent = spent + x RETURNING` is atomic, so concurrent turns in other processes
never lose a charge nor read a half-charged total. The counters are locked in budget id order:
two turns charging the same budgets (a company's, a group's) cannot deadlock.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

# a budget warns once per period when this share of it is spent
WARN_SHARE = Decimal("0.8")
WARN_PERCENT = f"{WARN_SHARE:.0%}"


@dataclass(frozen=True)
class ChargedBudget:
    """A budget a turn is charged to, read when the turn is prepared. `warning`: what the user is
    told (translated) when a charge of this turn passes WARN_SHARE of it."""

    budget_id: int
    tokens: bool
    period: str
    warning: str


class Charge(NamedTuple):
    """A budget's counter once charged, and whether this charge is the one that warns."""

    budget_id: int
    spent: Decimal
    amount: Decimal
    active: bool
    warn: bool


def period_start(period: str, day: datetime.date) -> datetime.date:
    """The first day of the `period` ("day", "week", "month", "year") holding `day`."""
    if period == "day":
        return day
    if period == "week":
        return day - datetime.timedelta(days=day.weekday())
    if period == "year":
        return day.replace(month=1, day=1)
    return day.replace(day=1)


def budget_day(cr: Any) -> datetime.date:
    """The day budgets are charged on: the transaction's, in UTC (tests replace it)."""
    return cr.now().date()


def charge_budgets(
    cr: Any, budgets: tuple[ChargedBudget, ...], cost: Decimal, tokens: int, day: datetime.date
) -> list[Charge]:
    """Adds `cost` (money budgets) or `tokens` (token budgets) to each budget's counter of the
    period holding `day`, creating the counter when the period starts."""
    ordered = sorted(budgets, key=lambda budget: budget.budget_id)
    starts = [(budget.budget_id, period_start(budget.period, day)) for budget in ordered]
    cr.execute(
        "INSERT INTO ai_budget_period (budget_id, period_start, spent, warned) VALUES "
        + ", ".join(["(%s, %s, 0, false)"] * len(starts))
        + " ON CONFLICT (budget_id, period_start) DO NOTHING",
        [value for pair in starts for value in pair],
    )
    charges = []
    for budget, (budget_id, start) in zip(ordered, starts, strict=True):
        cr.execute(
            "UPDATE ai_budget_period p SET spent = p.spent + %s FROM ai_budget b"
            " WHERE p.budget_id = %s AND p.period_start = %s AND b.id = p.budget_id"
            " RETURNING p.id, p.spent, b.amount, b.active, p.warned",
            (Decimal(tokens) if budget.tokens else cost, budget_id, start),
        )
        row = cr.fetchone()
        if row is None:  # the budget was deleted since the turn began: as if lifted
            charges.append(Charge(budget_id, Decimal(0), Decimal(0), False, False))
            continue
        counter_id, spent, amount, active, warned = row
        spent, amount = Decimal(str(spent)), Decimal(str(amount))
        # the row is locked by the update above until this transaction ends: no other turn warns too
        warn = active and not warned and amount > 0 and spent >= amount * WARN_SHARE
        if warn:
            cr.execute("UPDATE ai_budget_period SET warned = true WHERE id = %s", (counter_id,))
        charges.append(Charge(budget_id, spent, amount, active, warn and spent < amount))
    return charges
