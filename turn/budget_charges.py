"""Charging a model call to the budgets of its turn (ai.budget), in the writer's transaction.

Each budget keeps one counter row per period (ai.budget.period), created by the first call of the
period and raised in place by every call. A counter, rather than summing ai.usage when a turn
asks, because the question is asked before every turn and every round of 200 turns at once: one
indexed row per budget answers it, where a sum reads every row of the period, and a single
`UPDATE ... SET spent = spent + x RETURNING` is atomic, so concurrent turns in other processes
never lose a charge nor read a half-charged total. The counters are locked in budget id order:
two turns charging the same budgets (a company's, a group's) cannot deadlock.

The writer's transaction that charges runs under READ COMMITTED (`charge_read_committed`), not
Odoo's REPEATABLE READ: there, the UPDATE of a counter another turn charged after this
transaction's snapshot was taken fails ("could not serialize access due to concurrent update"),
and so does the INSERT of a period's counter another turn has just created, and with every turn of
a busy budget charging the same row most charges would fail. Under READ COMMITTED the UPDATE waits
for the other turn's row lock, then adds to the value it committed. The usage row, its event and
the charge stay in that one transaction rather than a second one of their own: they commit or roll
back together, so a counter always equals the sum of the usage rows charged to it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

import pytz

from odoo import sql_db

# a budget warns once per period when this share of it is spent
WARN_SHARE = Decimal("0.8")


@dataclass(frozen=True)
class ChargedBudget:
    """A budget a turn is charged to, read when the turn is prepared. `time_zone`: its company's,
    where its days begin."""

    budget_id: int
    tokens: bool
    period: str
    time_zone: str = "UTC"


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


def next_period_start(period: str, start: datetime.date) -> datetime.date:
    """The first day of the `period` after the one starting on `start`."""
    if period == "day":
        return start + datetime.timedelta(days=1)
    if period == "week":
        return start + datetime.timedelta(days=7)
    if period == "year":
        return start.replace(year=start.year + 1)
    return (start + datetime.timedelta(days=31)).replace(day=1)


def budget_now(cr: Any) -> datetime.datetime:
    """The instant budgets are charged at: the transaction's, as a naive UTC datetime (tests
    replace it)."""
    return cr.now()


def local_day(now: datetime.datetime, time_zone: str) -> datetime.date:
    """The day `now` (naive UTC) falls on in `time_zone`."""
    return pytz.utc.localize(now).astimezone(pytz.timezone(time_zone)).date()


def utc_midnight(day: datetime.date, time_zone: str) -> datetime.datetime:
    """The instant `day` begins in `time_zone`, as a naive UTC datetime (ai.usage's dates)."""
    local = pytz.timezone(time_zone).localize(datetime.datetime.combine(day, datetime.time.min))
    return local.astimezone(pytz.utc).replace(tzinfo=None)


def share_text(spent: Decimal, amount: Decimal) -> str:
    """How much of `amount` is spent, in whole percent rounded down: "90%", "112%"."""
    return f"{int(spent * 100 / amount)}%" if amount > 0 else "100%"


def charge_read_committed(cr: Any) -> None:
    """Runs the rest of `cr`'s transaction, which charges budgets, under READ COMMITTED (see the
    module's docstring). Must come before the transaction's first query."""
    # a test's cursor belongs to the test's transaction, begun long ago, and has it to itself
    if isinstance(cr, sql_db.Cursor):
        cr.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")


def charge_budgets(
    cr: Any, budgets: tuple[ChargedBudget, ...], cost: Decimal, tokens: int, now: datetime.datetime
) -> list[Charge]:
    """Adds `cost` (money budgets) or `tokens` (token budgets) to each budget's counter of the
    period holding `now` (naive UTC) in its time zone, creating the counter when the period starts."""
    ordered = sorted(budgets, key=lambda budget: budget.budget_id)
    starts = [(budget.budget_id, period_start(budget.period, local_day(now, budget.time_zone))) for budget in ordered]
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
        # the row is locked by the update above until this transaction ends: no other turn warns too.
        # A charge that passes the whole amount warns as well when none did: the user is told before
        # the next turn is refused.
        warn = active and not warned and amount > 0 and spent >= amount * WARN_SHARE
        if warn:
            cr.execute("UPDATE ai_budget_period SET warned = true WHERE id = %s", (counter_id,))
        charges.append(Charge(budget_id, spent, amount, active, warn))
    return charges
