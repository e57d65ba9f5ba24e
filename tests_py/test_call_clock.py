"""The clocks that time a call and a turn, driven by a manual clock: which limit ends a call, and
that the time a question waits for the user counts against neither the call nor the turn."""

from __future__ import annotations

from conftest import ManualClock

from services.call_clock import CallClock, CallLimits, Limit, TurnBudget, spoken_duration

LIMITS = CallLimits(idle=30, cap=600, question=600)


def test_progress_starts_the_idle_timeout_again_up_to_the_cap(clock: ManualClock) -> None:
    call = CallClock(LIMITS, clock)
    clock.advance(29)
    assert call.expired() is None and call.due() == 1
    call.activity()
    clock.advance(29)
    assert call.expired() is None
    clock.advance(1)
    assert call.expired() is Limit.IDLE
    for _ in range(30):
        call.activity()
        clock.advance(20)
    assert call.expired() is Limit.CAP


def test_an_open_question_stops_the_call_and_the_turn(clock: ManualClock) -> None:
    budget = TurnBudget(120, clock)
    call = CallClock(LIMITS, clock, budget)
    clock.advance(25)
    call.ask("q")
    clock.advance(500)
    assert call.expired() is None and call.lapsed() == [] and budget.remaining() == 95
    assert call.due() == 100  # the question's own limit
    call.answered("q")
    clock.advance(29)  # the answer gave the call a whole idle timeout again
    assert call.expired() is None
    clock.advance(1)
    assert call.expired() is Limit.IDLE
    assert budget.spent() == 55


def test_a_question_lapses_at_its_own_limit(clock: ManualClock) -> None:
    call = CallClock(LIMITS, clock)
    call.ask("q")
    clock.advance(599)
    assert call.lapsed() == []
    clock.advance(1)
    assert call.lapsed() == ["q"]


def test_the_turns_time_ends_a_call_and_counts_the_earlier_runs(clock: ManualClock) -> None:
    budget = TurnBudget(120, clock, spent=100)
    call = CallClock(LIMITS, clock, budget)
    clock.advance(19)
    assert call.expired() is None and call.due() == 1
    clock.advance(1)
    assert call.expired() is Limit.TURN


def test_two_questions_at_once_stop_the_turn_until_both_are_answered(clock: ManualClock) -> None:
    budget = TurnBudget(120, clock)
    first, second = CallClock(LIMITS, clock, budget), CallClock(LIMITS, clock, budget)
    first.ask("a")
    second.ask("b")
    first.answered("a")
    clock.advance(50)
    assert budget.spent() == 0
    second.answered("b")
    clock.advance(10)
    assert budget.spent() == 10


def test_limits_read_as_a_person_would_say_them() -> None:
    spoken = [spoken_duration(s) for s in (600, 60, 90, 1, 0.5)]
    assert spoken == ["10 minutes", "1 minute", "90 seconds", "1 second", "0.5 seconds"]
