"""The clocks that bound a tool call and a turn. A person's time never counts against either.

A call is bounded three ways: it must show a sign of life (its result, a progress notification, a
question for the user) within its idle timeout, as the TypeScript SDK's `resetTimeoutOnProgress`
does; it may run at most its hard cap in all, however often it reports progress; and it ends with
the turn's time. While a question of the call waits for the user, none of these runs (the turn's
clock stops for every call of the turn), and the question has its own limit instead.

Every reading comes from `now`, a monotonic-time callable, so that tests can drive the clocks.
These clocks only measure: a live MCP call is cancelled when one runs out by mcp/_call_timeout.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from math import inf

Now = Callable[[], float]


class Limit(str, Enum):
    IDLE = "idle"
    CAP = "cap"
    TURN = "turn"


class Stopwatch:
    """Time that runs except while someone is waited for. Pauses nest: the watch runs again once
    every pause has ended (two questions open at once)."""

    def __init__(self, now: Now = time.monotonic, spent: float = 0.0) -> None:
        self._now = now
        self._spent = spent
        self._since: float | None = now()
        self._pauses = 0

    @property
    def paused(self) -> bool:
        return self._pauses > 0

    def elapsed(self) -> float:
        return self._spent + (self._now() - self._since if self._since is not None else 0.0)

    def pause(self) -> None:
        if not self._pauses:
            self._spent = self.elapsed()
            self._since = None
        self._pauses += 1

    def resume(self) -> None:
        if not self._pauses:
            return
        self._pauses -= 1
        if not self._pauses:
            self._since = self._now()


class TurnBudget:
    """The turn's time limit, counted over every run of the turn (before and after an approval,
    a sign-in, a "continue?"): `spent` is what the earlier runs used."""

    def __init__(self, seconds: float, now: Now = time.monotonic, spent: float = 0.0) -> None:
        self.seconds = seconds
        self.watch = Stopwatch(now, spent)

    def spent(self) -> float:
        return self.watch.elapsed()

    def remaining(self) -> float:
        return self.seconds - self.watch.elapsed()


@dataclass(frozen=True)
class CallLimits:
    """`idle`: seconds without a sign of life; `cap`: seconds in all; `question`: seconds one
    question may wait for the user before it is cancelled."""

    idle: float
    cap: float
    question: float


class CallClock:
    """One call's deadlines. The hub's loop reads `expired` and `lapsed` whenever `due` says."""

    def __init__(self, limits: CallLimits, now: Now = time.monotonic, budget: TurnBudget | None = None) -> None:
        self.limits = limits
        self.budget = budget
        self._now = now
        self._watch = Stopwatch(now)
        self._active_at = 0.0
        self._asked: dict[str, float] = {}

    def activity(self) -> None:
        """The server showed a sign of life: the idle timeout starts again."""
        if not self._watch.paused:
            self._active_at = self._watch.elapsed()

    def ask(self, question: str) -> None:
        """A question waits for the user: the call's and the turn's clocks stop."""
        self._asked[question] = self._now()
        self._watch.pause()
        if self.budget is not None:
            self.budget.watch.pause()

    def answered(self, question: str) -> None:
        """The question is closed; the call has a whole idle timeout again to act on the answer."""
        if self._asked.pop(question, None) is None:
            return
        self._watch.resume()
        if self.budget is not None:
            self.budget.watch.resume()
        self._active_at = self._watch.elapsed()

    def hold(self) -> None:
        """The client works for the call (the assistant's model answers its server's sampling
        request): the call's clock stops, the turn's runs on, as during any model call."""
        self._watch.pause()

    def release(self) -> None:
        """The client's work for the call is done: it has a whole idle timeout again."""
        self._watch.resume()
        if not self._watch.paused:
            self._active_at = self._watch.elapsed()

    def lapsed(self) -> list[str]:
        """The questions that waited longer than allowed."""
        now = self._now()
        return [question for question, asked in self._asked.items() if now - asked >= self.limits.question]

    def expired(self) -> Limit | None:
        if self._watch.paused:
            return None
        if self.budget is not None and self.budget.remaining() <= 0:
            return Limit.TURN
        elapsed = self._watch.elapsed()
        if elapsed >= self.limits.cap:
            return Limit.CAP
        if elapsed - self._active_at >= self.limits.idle:
            return Limit.IDLE
        return None

    def due(self) -> float:
        """Seconds until the nearest deadline as things stand (a sign of life moves it later)."""
        if self._watch.paused:
            now = self._now()
            # held with no question open: nothing lapses, the caller reads again at its tick
            return max(0.0, min((asked + self.limits.question - now for asked in self._asked.values()), default=inf))
        elapsed = self._watch.elapsed()
        left = min(self.limits.cap - elapsed, self._active_at + self.limits.idle - elapsed)
        if self.budget is not None:
            left = min(left, self.budget.remaining())
        return max(0.0, left)


def spoken_duration(seconds: float) -> str:
    """`600` -> "10 minutes", `90` -> "90 seconds": how a limit reads in a sentence."""
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"
