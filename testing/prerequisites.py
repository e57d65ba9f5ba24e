"""A test whose machine lacks what it needs (an Odoo, nginx, the package index): skipped on a
developer's machine, saying why, but a failure in CI (`CI=true`), where the run must prove what it
names rather than report "ok" for tests it never ran."""

from __future__ import annotations

import os

import pytest


def missing(reason: str) -> None:
    """Skips the test with `reason`, or fails it under CI=true."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and a prerequisite is missing: {reason}", pytrace=False)
    pytest.skip(reason)
