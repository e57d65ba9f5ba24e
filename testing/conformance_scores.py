"""The score table of a `scripts/conformance` run, and its verdict against the expected failures.

Reads the results the MCP conformance suite wrote (one folder per run, one `checks.json` per
scenario under it, in `<scenario>-<timestamp>/`), prints each scenario's passed, failed, warned and
skipped checks and a total per run, and exits 1 when a check failed or warned that
testing/conformance-expected-failures.yaml does not excuse, or when an entry there excuses a
scenario that ran and no longer fails (a stale entry: remove it, so the gate keeps its edge).
A warning counts as a failure, as the suite counts it. A scenario none of whose checks was made
(every one skipped, or none recorded: "0/0") was not exercised: it is not a pass, and fails the
gate as a failing check does unless an entry names the scenario.

    conformance_scores.py EXPECTED_YAML RUN_DIR[=REQUIREMENTS_YAML] ...

A run's requirements file (the suite's `requirements/<revision>.yaml`) marks the scenarios that
revision does not score (extensions, scenarios added after it).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml  # PyYAML: a dependency of pre-commit, in requirements-test.txt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

# the suite's folder names end with the run's timestamp: auth/basic-cimd-2026-11-26T08-40-00-793Z
TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
FAILING = ("FAILURE", "WARNING")


class ExpectedFailures(BaseModel):
    """testing/conformance-expected-failures.yaml: `scenario` or `scenario:check-id` -> reason."""

    model_config = ConfigDict(extra="forbid")

    client: dict[str, str] = Field(default_factory=dict)

    def excuses(self, scenario: str, check: str) -> str | None:
        """The entry excusing `check` of `scenario` failing, if any."""
        for entry in (scenario, f"{scenario}:{check}"):
            if entry in self.client:
                return entry
        return None


class Requirements(BaseModel):
    model_config = ConfigDict(extra="ignore")

    not_scored: list[dict[str, str]] = Field(default_factory=list)

    def unscored(self) -> dict[str, str]:
        return {e["scenario"]: e.get("reason", "") for e in self.not_scored if e.get("leg", "client") == "client"}


@dataclass
class Scenario:
    name: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)
    # a check the client never gave the suite a chance to make (it did not send that request)
    skipped: int = 0
    messages: dict[str, str] = field(default_factory=dict)
    # the ids of the checks skipped: an entry for one of them is neither used nor stale
    skipped_ids: set[str] = field(default_factory=set)

    @property
    def failing(self) -> list[str]:
        return self.failed + self.warned

    @property
    def exercised(self) -> bool:
        """Whether the client gave the suite a chance to make at least one check."""
        return bool(self.passed or self.failing)


def read_run(run: Path) -> list[Scenario]:
    scenarios: dict[str, Scenario] = {}
    for checks in sorted(run.rglob("checks.json")):
        name = TIMESTAMP.sub("", checks.parent.relative_to(run).as_posix())
        scenario = scenarios.setdefault(name, Scenario(name))
        for check in json.loads(checks.read_text(encoding="utf-8")):
            status, check_id = check.get("status"), str(check.get("id"))
            if status == "SUCCESS":
                scenario.passed += 1
            elif status == "SKIPPED":
                scenario.skipped += 1
                scenario.skipped_ids.add(check_id)
            elif status in FAILING:
                (scenario.failed if status == "FAILURE" else scenario.warned).append(check_id)
                scenario.messages[check_id] = str(check.get("errorMessage") or check.get("description") or "")
    return list(scenarios.values())


# what an unexercised scenario is listed as among its failing checks
NOT_EXERCISED = "not-exercised"


def unexcused(scenario: Scenario, expected: ExpectedFailures) -> list[str]:
    failing = scenario.failing if scenario.exercised else [NOT_EXERCISED]
    return [c for c in failing if expected.excuses(scenario.name, c) is None]


def verdict(scenario: Scenario, expected: ExpectedFailures) -> str:
    if unexcused(scenario, expected):
        return "FAIL" if scenario.exercised else "NOT EXERCISED"
    if not scenario.exercised:
        return "not exercised (expected)"
    return "expected" if scenario.failing else "pass"


def table(run: str, scenarios: list[Scenario], expected: ExpectedFailures, unscored: dict[str, str]) -> list[str]:
    """The run's lines; each failing check not excused is listed under its scenario."""
    width = max([len(s.name) for s in scenarios] + [8])
    lines = [f"== {run}", f"{'scenario':<{width}}  passed  failed  warned  skipped  verdict"]
    totals = [0, 0, 0, 0]
    for s in sorted(scenarios, key=lambda s: s.name):
        failing = unexcused(s, expected)
        note = f" (not scored: {unscored[s.name]})" if s.name in unscored else ""
        counts = (s.passed, len(s.failed), len(s.warned), s.skipped)
        lines.append(f"{s.name:<{width}}  {_counts(counts)}  {verdict(s, expected)}{note}")
        lines += [
            f"    {c}: {s.messages.get(c, 'no check was made: the client sent none of its requests')}"
            for c in dict.fromkeys(failing)
        ]
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
    lines.append(f"{'total':<{width}}  {_counts(totals)}  {len(scenarios)} scenarios")
    return lines


def _counts(counts: Iterable[int]) -> str:
    """passed, failed, warned, skipped, under their headings."""
    return "  ".join(f"{n:>{w}}" for n, w in zip(counts, (6, 6, 6, 7), strict=True))


def stale(expected: ExpectedFailures, runs: Iterable[list[Scenario]]) -> list[str]:
    """Entries whose scenario ran and excused nothing: it passes now. An entry for a check that was
    skipped (a run at another revision need not make it) is not stale."""
    ran: set[str] = set()
    used: set[str] = set()
    for scenarios in runs:
        for s in scenarios:
            ran.add(s.name)
            used.update(f"{s.name}:{c}" for c in s.skipped_ids)
            failing = s.failing if s.exercised else [NOT_EXERCISED]
            used.update(e for c in failing if (e := expected.excuses(s.name, c)) is not None)
    return [e for e in expected.client if e.split(":", 1)[0] in ran and e not in used]


def read_requirements(path: Path) -> dict[str, str]:
    return Requirements.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {}).unscored()


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        sys.stderr.write(__doc__ or "")
        return 2
    try:
        expected = ExpectedFailures.model_validate(yaml.safe_load(Path(argv[1]).read_text(encoding="utf-8")) or {})
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        sys.stderr.write(f"{argv[1]}: {exc}\n")
        return 2
    runs: list[list[Scenario]] = []
    failures = 0
    for arg in argv[2:]:
        folder, _, requirements = arg.partition("=")
        scenarios = read_run(Path(folder))
        if not scenarios:
            say(f"== {Path(folder).name}: no results (the suite did not run; see its log)")
            failures += 1
            continue
        unscored = read_requirements(Path(requirements)) if requirements else {}
        say("\n".join(table(Path(folder).name, scenarios, expected, unscored)) + "\n")
        failures += sum(1 for s in scenarios if unexcused(s, expected))
        runs.append(scenarios)
    old = stale(expected, runs)
    for entry in old:
        say(f"stale expected failure (it passes now: remove it): {entry}")
    if failures or old:
        say(f"conformance: {failures} failing scenario(s) not expected, {len(old)} stale entr(y/ies)")
        return 1
    say("conformance: no failure that is not expected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
