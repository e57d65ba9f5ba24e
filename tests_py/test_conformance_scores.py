"""testing/conformance_scores.py on results written as the MCP conformance suite writes them: what
the score table says of a scenario, and when the gate fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCORES = ROOT / "testing" / "conformance_scores.py"


def scenario(run: Path, name: str, statuses: list[str]) -> None:
    """A scenario's checks.json, one check per status, in the suite's folder layout."""
    folder = run / f"{name}-2026-11-28T03-40-00-000Z"
    folder.mkdir(parents=True)
    checks = [{"id": f"check-{i}", "status": s, "errorMessage": f"says {s}"} for i, s in enumerate(statuses)]
    folder.joinpath("checks.json").write_text(json.dumps(checks))


def score(tmp_path: Path, expected: str, run: Path) -> subprocess.CompletedProcess[str]:
    listed = tmp_path / "expected.yaml"
    listed.write_text(expected)
    return subprocess.run(
        [sys.executable, str(SCORES), str(listed), str(run)], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_scenario_whose_checks_were_all_skipped_was_not_exercised_and_fails_the_gate(tmp_path: Path) -> None:
    run = tmp_path / "2026-07-28"
    scenario(run, "tools_call", ["SUCCESS"])
    scenario(run, "http-standard-headers", ["SKIPPED", "SKIPPED", "INFO"])

    done = score(tmp_path, "client: {}\n", run)

    assert done.returncode == 1, done.stdout
    assert "http-standard-headers       0       0       0        2  NOT EXERCISED" in done.stdout
    assert "not-exercised: no check was made: the client sent none of its requests" in done.stdout
    assert "tools_call                  1       0       0        0  pass" in done.stdout

    # an entry naming the scenario excuses it, and goes stale once the scenario is exercised
    excused = score(tmp_path, 'client:\n  http-standard-headers: "no prompts"\n', run)
    assert excused.returncode == 0, excused.stdout
    assert "not exercised (expected)" in excused.stdout


def test_a_warning_fails_the_gate_as_a_failure_does(tmp_path: Path) -> None:
    run = tmp_path / "auth"
    scenario(run, "auth/basic-cimd", ["SUCCESS", "WARNING"])

    done = score(tmp_path, "client: {}\n", run)

    assert done.returncode == 1, done.stdout
    assert "check-1: says WARNING" in done.stdout


def test_an_entry_for_a_check_the_run_skipped_is_not_stale(tmp_path: Path) -> None:
    # the check fails at one revision and is not made at another: a run of the other leaves it be
    run = tmp_path / "2025-11-25"
    scenario(run, "json-schema-2020-12-preservation", ["SUCCESS", "SKIPPED"])

    done = score(tmp_path, 'client:\n  json-schema-2020-12-preservation:check-1: "stripped"\n', run)

    assert done.returncode == 0, done.stdout
    assert "stale" not in done.stdout
