"""Pace limits: whether a user's next turn may start, given the times of their latest turns, and when
it may when it may not."""

from __future__ import annotations

from datetime import datetime, timedelta

from services.pace import PaceLimits, PaceWindow, pace_breach

T0 = datetime(2026, 3, 2, 14, 2, 12)


def seconds(*offsets: float) -> list[datetime]:
    """Turn times `offsets` seconds after T0, newest first as the database gives them."""
    return sorted((T0 + timedelta(seconds=offset) for offset in offsets), reverse=True)


def test_no_limit_lets_every_turn_start() -> None:
    assert pace_breach(seconds(*range(500)), T0 + timedelta(seconds=500), PaceLimits()) is None
    assert not PaceLimits().any


def test_under_the_minute_limit_a_turn_starts() -> None:
    assert pace_breach(seconds(0, 10), T0 + timedelta(seconds=20), PaceLimits(per_minute=3)) is None


def test_the_turn_past_the_minute_limit_waits_for_the_oldest_to_leave_the_minute() -> None:
    limits = PaceLimits(per_minute=3)
    breach = pace_breach(seconds(0, 10, 20), T0 + timedelta(seconds=25), limits)
    assert breach is not None
    assert (breach.window, breach.limit) == (PaceWindow.MINUTE, 3)
    assert breach.next_at == T0 + timedelta(seconds=60)
    assert breach.wait(T0 + timedelta(seconds=25)) == timedelta(seconds=35)
    assert pace_breach(seconds(0, 10, 20), T0 + timedelta(seconds=60), limits) is None


def test_a_limit_lowered_below_what_was_sent_waits_until_few_enough_are_left() -> None:
    # 5 turns in the minute, the limit now 2: the next one may start when only 1 is left in it
    breach = pace_breach(seconds(0, 10, 20, 30, 40), T0 + timedelta(seconds=45), PaceLimits(per_minute=2))
    assert breach is not None
    assert breach.next_at == T0 + timedelta(seconds=90)


def test_the_hour_limit_counts_turns_of_the_last_hour() -> None:
    limits = PaceLimits(per_minute=10, per_hour=3)
    latest = seconds(0, 600, 1200)
    breach = pace_breach(latest, T0 + timedelta(seconds=1300), limits)
    assert breach is not None
    assert (breach.window, breach.limit) == (PaceWindow.HOUR, 3)
    assert breach.next_at == T0 + timedelta(hours=1)
    assert pace_breach(latest, T0 + timedelta(hours=1), limits) is None


def test_with_both_limits_reached_the_later_start_is_said() -> None:
    breach = pace_breach(seconds(0, 3000, 3001), T0 + timedelta(seconds=3002), PaceLimits(per_minute=2, per_hour=3))
    assert breach is not None
    assert breach.window is PaceWindow.HOUR
    assert breach.next_at == T0 + timedelta(hours=1)


def test_how_many_turns_the_database_is_asked_for() -> None:
    assert PaceLimits(per_minute=5, per_hour=0).most == 5
    assert PaceLimits(per_minute=5, per_hour=0).longest_window == timedelta(minutes=1)
    assert PaceLimits(per_minute=5, per_hour=40).most == 40
    assert PaceLimits(per_minute=0, per_hour=40).longest_window == timedelta(hours=1)
