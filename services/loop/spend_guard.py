"""What a running turn may still spend: the budgets that apply to it, seen from the loop.

The loop asks `refusal()` before every model call and reports each call's tokens with `charge()`;
the Odoo layer's turn writer, which charges the budgets in the database, reports each counter as it
stands after charging with `confirm()`. The writer does not keep pace with the loop (the loop may
begin a round before the writer stored the last one), so a budget's spending as the loop sees it is
the counter last confirmed plus the turn's own calls charged since: the turn's own rounds count at
once, the other turns' as soon as the writer reads the counter. Before a model call the loop waits
(briefly: the writer stores a budgeted call's usage at once) for the writer to have charged the
turn's earlier calls, so the counter it reads holds every other turn's charges up to then. A turn
thus starts at most one model call once a budget is spent by others, and none once it is spent by
its own: each turn goes over a budget by at most one round.

Thread-safe: the loop runs on the hub's thread, the writer in the request's.
"""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from ..token_usage import Prices, TokenUsage, cost_of

__all__ = ["BudgetLine", "SpendGuard"]

# how long the loop waits at most for the writer to charge the turn's last call, and how often it looks
SETTLE_TIMEOUT = 5.0
SETTLE_POLL = 0.01


class BudgetLine(BaseModel):
    """One budget a turn is charged to, as the turn starts. `refusal`: what the user is told once
    it is spent (translated by the Odoo layer)."""

    model_config = ConfigDict(frozen=True)

    budget_id: int
    tokens: bool  # counts tokens, not money
    amount: Decimal
    spent: Decimal
    refusal: str


class _Standing:
    """A budget's counter as last known, and how many of the turn's own calls it includes."""

    def __init__(self, line: BudgetLine) -> None:
        self.line = line
        self.amount = line.amount
        self.spent = line.spent
        self.charged = 0
        self.lifted = False


class SpendGuard:
    def __init__(
        self,
        lines: tuple[BudgetLine, ...] | list[BudgetLine],
        prices: Prices,
        settle_timeout: float = SETTLE_TIMEOUT,
    ) -> None:
        self._lock = threading.Lock()
        self._settle_timeout = settle_timeout
        self._prices = prices
        self._budgets = {line.budget_id: _Standing(line) for line in lines}
        # the turn's own calls, in order: (cost, tokens)
        self._calls: list[tuple[Decimal, int]] = []

    @property
    def budget_ids(self) -> tuple[int, ...]:
        return tuple(self._budgets)

    def charge(self, usage: TokenUsage) -> None:
        """The loop: one of the turn's model calls ended, having used `usage`."""
        with self._lock:
            self._calls.append((cost_of(usage, self._prices), usage.total_tokens))

    def confirm(self, budget_id: int, spent: Decimal, amount: Decimal, active: bool, charged: int) -> None:
        """The writer: `budget_id`'s counter is `spent` of `amount` once the turn's first `charged`
        calls are in it; an inactive budget was lifted."""
        with self._lock:
            standing = self._budgets.get(budget_id)
            if standing is None or charged < standing.charged:
                return
            standing.spent, standing.amount, standing.charged = spent, amount, charged
            standing.lifted = not active

    async def settled(self) -> None:
        """Waits until the writer has charged every call of the turn so far, or the settle
        timeout passed (a writer that is late only makes the count rest on the turn's own calls)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._settle_timeout
        while not self._all_charged() and loop.time() < deadline:
            await asyncio.sleep(SETTLE_POLL)

    def _all_charged(self) -> bool:
        with self._lock:
            return all(standing.charged >= len(self._calls) for standing in self._budgets.values())

    def refusal(self) -> str | None:
        """Why no further model call may start (the first budget spent), or None."""
        with self._lock:
            for standing in self._budgets.values():
                if standing.lifted:
                    continue
                unconfirmed = self._calls[standing.charged :]
                own = sum(
                    (Decimal(tokens) if standing.line.tokens else cost for cost, tokens in unconfirmed), Decimal(0)
                )
                if standing.spent + own >= standing.amount:
                    return standing.line.refusal
        return None
