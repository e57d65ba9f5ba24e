"""A limit read from Odoo's `[ai_mcp]` section: its default, its bounds, and a bad value refused with
the option's name, as the hub's options are (test_hub.py)."""

from __future__ import annotations

import pytest

from services.errors import ConfigError
from services.limits import TURN_STALE_AFTER
from turn.pacing import heartbeat_seconds

OPTION = "turn_stale_after"


def stale_after(value: str | None) -> float:
    return TURN_STALE_AFTER.from_option({} if value is None else {OPTION: value, "other": "x"}, OPTION)


def test_the_stale_limit_defaults_to_90_seconds_and_the_heartbeat_to_a_sixth_of_it() -> None:
    assert stale_after(None) == stale_after("") == stale_after("  ") == 90.0
    assert heartbeat_seconds(stale_after(None)) == 15.0
    assert stale_after(" 12 ") == 12.0
    assert heartbeat_seconds(stale_after("12")) == 2.0


@pytest.mark.parametrize("value", ["6", "6.0", "45.5", "3600"])
def test_the_bounds_are_included(value: str) -> None:
    assert stale_after(value) == float(value)


@pytest.mark.parametrize("value", ["5.9", "0", "-90", "3601", "soon", "nan", "inf", "90s"])
def test_a_bad_value_names_the_option_and_its_bounds(value: str) -> None:
    with pytest.raises(ConfigError) as refused:
        stale_after(value)
    assert refused.value.field == OPTION
    assert refused.value.message == (
        f"{OPTION}: must be a number at least 6 and at most 3600, not {value!r}: "
        "fix it in the [ai_mcp] section of Odoo's configuration file"
    )
