"""Pace limits: how many turns a user may start in a sliding minute and hour.

The Odoo side reads the limits from the settings and the times of the user's latest turns from the
database; whether a new turn may start, and if not when the next one may, is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum


class PaceWindow(str, Enum):
    MINUTE = "minute"
    HOUR = "hour"


WINDOW_LENGTH = {PaceWindow.MINUTE: timedelta(minutes=1), PaceWindow.HOUR: timedelta(hours=1)}


@dataclass(frozen=True)
class PaceLimits:
    """Turns a user may start per minute and per hour; 0 is no limit."""

    per_minute: int = 0
    per_hour: int = 0

    def of(self, window: PaceWindow) -> int:
        return self.per_minute if window is PaceWindow.MINUTE else self.per_hour

    @property
    def any(self) -> bool:
        return self.per_minute > 0 or self.per_hour > 0

    @property
    def longest_window(self) -> timedelta:
        return WINDOW_LENGTH[PaceWindow.HOUR] if self.per_hour > 0 else WINDOW_LENGTH[PaceWindow.MINUTE]

    @property
    def most(self) -> int:
        """How many of the latest turns tell whether any limit is reached."""
        return max(self.per_minute, self.per_hour)


@dataclass(frozen=True)
class PaceBreach:
    """A limit the user reached: `limit` turns in the last `window`; the next turn may start at
    `next_at` (same clock as the turns' times)."""

    window: PaceWindow
    limit: int
    next_at: datetime

    def wait(self, now: datetime) -> timedelta:
        return max(self.next_at - now, timedelta(0))


def pace_breach(latest: Sequence[datetime], now: datetime, limits: PaceLimits) -> PaceBreach | None:
    """The limit that keeps a new turn from starting at `now`, or None. `latest`: the start times of
    the user's latest turns, newest first (at least `limits.most` of them when there are as many).
    With both limits reached, the one that lets the next turn start later is the one that holds."""
    breaches = []
    ordered = sorted(latest, reverse=True)
    for window in PaceWindow:
        limit = limits.of(window)
        if limit <= 0 or len(ordered) < limit:
            continue
        # the limit-th newest turn is inside the window exactly when the window holds `limit` turns;
        # once it leaves the window, one more may start
        next_at = ordered[limit - 1] + WINDOW_LENGTH[window]
        if next_at > now:
            breaches.append(PaceBreach(window, limit, next_at))
    return max(breaches, key=lambda breach: breach.next_at, default=None)
