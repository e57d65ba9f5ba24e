"""scripts/conformance end to end: the official MCP conformance suite (installed with npm into the
scripts' cache on first use) runs one scenario against testing/conformance_client.py, the addon's
own client, and the score table gates on testing/conformance-expected-failures.yaml. One cheap
scenario each, so the harness cannot rot unseen; the whole suite is `scripts/conformance`
(docs/conformance.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "conformance"

pytestmark = [
    pytest.mark.skipif(
        shutil.which("npm") is None,
        reason="scripts/conformance installs the MCP conformance suite with npm, which is not installed",
    ),
    pytest.mark.timeout(300),
]


def conformance(
    results: Path, *args: str, expected: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """scripts/conformance ARGS with its results under `results`; the run's folder is returned."""
    env = {
        **os.environ,
        "AI_MCP_CONFORMANCE_RESULTS": str(results),
        "AI_MCP_CONFORMANCE_PYTHON": sys.executable,
        **({"AI_MCP_CONFORMANCE_EXPECTED": str(expected)} if expected else {}),
    }
    done = subprocess.run(
        [str(SCRIPT), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=280, check=False
    )
    return done, (results / "latest").resolve()


def score(run: Path, expected: Path) -> subprocess.CompletedProcess[str]:
    """The score table of `run`'s results again, against `expected`."""
    folders = [str(p) for p in run.iterdir() if p.is_dir()]
    return subprocess.run(
        [sys.executable, str(ROOT / "testing" / "conformance_scores.py"), str(expected), *folders],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def checks(run: Path, scenario: str) -> dict[str, str]:
    """check id -> status, from the suite's own record of the scenario."""
    found = list(run.glob(f"*/{scenario}-*/checks.json"))
    assert len(found) == 1, found
    return {c["id"]: c["status"] for c in json.loads(found[0].read_text())}


def test_the_addons_client_passes_a_scenario_and_an_entry_for_it_would_be_stale(tmp_path: Path) -> None:
    done, run = conformance(tmp_path / "results", "--scenario", "tools_call", "--spec-version", "2025-11-25")

    assert done.returncode == 0, done.stdout + done.stderr
    # the suite saw the client initialize (the handshake of 2025-11-25) and call add_numbers
    assert checks(run, "tools_call")["tool-add-numbers"] == "SUCCESS"
    assert "tools_call       2       0       0        0  pass" in done.stdout
    assert (run / "scores.txt").read_text() in done.stdout

    # an expected failure of a scenario that passes is reported, so the list cannot go stale
    stale = tmp_path / "stale.yaml"
    stale.write_text('client:\n  tools_call: "once failed"\n')
    rescored = score(run, stale)
    assert rescored.returncode == 1, rescored.stdout + rescored.stderr
    assert "stale expected failure (it passes now: remove it): tools_call" in rescored.stdout


def test_a_turns_call_mirrors_the_header_parameters_of_a_tool_synced_on_another_session(tmp_path: Path) -> None:
    # as in Odoo, the tools are listed at sync on a session of their own and called on the pooled one
    done, run = conformance(tmp_path / "results", "--scenario", "http-custom-headers", "--spec-version", "2026-07-28")

    assert done.returncode == 0, done.stdout + done.stderr
    found = list(run.glob("*/http-custom-headers-*/checks.json"))
    statuses = [c["status"] for c in json.loads(found[0].read_text()) if c["status"] != "INFO"]
    assert statuses and set(statuses) == {"SUCCESS"}, done.stdout


def test_a_failure_not_listed_fails_the_run_naming_the_check(tmp_path: Path) -> None:
    # the model is shown LangChain's dereferenced schema: the $defs the scenario wants echoed are gone
    scenario = "json-schema-2020-12-preservation"
    check = "json-schema-2020-12-client-$defs-preserved"
    unlisted = tmp_path / "none.yaml"
    unlisted.write_text("client: {}\n")
    done, run = conformance(tmp_path / "results", "--scenario", scenario, expected=unlisted)

    assert done.returncode == 1, done.stdout + done.stderr
    assert checks(run, scenario)[check] == "FAILURE"
    assert f"{check}: " in done.stdout
    assert "1 failing scenario(s) not expected" in done.stdout

    # the repository's list explains it: the same results pass the gate
    rescored = score(run, ROOT / "testing" / "conformance-expected-failures.yaml")
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert re.search(rf"^{re.escape(scenario)}\s+\d+\s+1\s+0\s+\d+\s+expected", rescored.stdout, re.MULTILINE)


def test_an_extension_scenario_named_with_a_revision_runs_at_it_and_dpop_passes(tmp_path: Path) -> None:
    # the suite skips an extension scenario named with a spec version; the script runs it there,
    # as that revision's run does: DPoP-bound tokens, both servers' nonces included
    scenario = "auth/dpop-nonce"
    done, run = conformance(tmp_path / "results", "--scenario", scenario, "--spec-version", "2026-07-28")

    assert done.returncode == 0, done.stdout + done.stderr
    found = checks(run, scenario)
    dpop = {check: status for check, status in found.items() if check.startswith("sep-1932-")}
    assert set(dpop) == {
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
        "sep-1932-client-as-nonce",
        "sep-1932-client-rs-nonce",
    }
    assert set(dpop.values()) == {"SUCCESS"}, done.stdout
