"""`-u ai_mcp` on a database made by the previous version keeps every record, secret and
conversation.

The previous version is the module as it was just before its manifest version last changed, taken
from git; it is installed into a new database of a real Odoo 18, filled through its own code
(upgrade_data.py), then updated to this checkout the way an operator does it.
"""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testing.odoo_http import OdooNotFound, OdooServer  # noqa: E402

DATA_SCRIPT = (Path(__file__).parent / "upgrade_data.py").read_text()


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def manifest_version(text: str) -> str:
    return ast.literal_eval(text)["version"]


def previous_version() -> tuple[str, str]:
    """(commit, version): the last commit before the current version was introduced."""
    current = manifest_version((ROOT / "__manifest__.py").read_text())
    if manifest_version(git("show", "HEAD:__manifest__.py")) != current:
        return "HEAD", manifest_version(git("show", "HEAD:__manifest__.py"))
    introduced = None
    for commit in git("log", "--format=%H", "--", "__manifest__.py").split():
        if manifest_version(git("show", f"{commit}:__manifest__.py")) != current:
            break
        introduced = commit
    parent = git("rev-parse", "--verify", "--quiet", f"{introduced}^").strip() if introduced else ""
    if not parent:
        pytest.skip(f"no earlier version than {current} in this clone's history")
    return parent, manifest_version(git("show", f"{parent}:__manifest__.py"))


def unpack(commit: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def read_snapshot(server: OdooServer, before: str = "") -> dict:
    output = server.shell(f"{DATA_SCRIPT}\n{before}\nprint('SNAPSHOT ' + snapshot(env))\n")
    line = next((line for line in output.splitlines() if line.startswith("SNAPSHOT ")), None)
    assert line, f"the shell printed no snapshot: {output[-2000:]}"
    return json.loads(line.removeprefix("SNAPSHOT "))


@pytest.fixture(scope="module")
def upgraded() -> Iterator[tuple[dict, dict, str]]:
    commit, version = previous_version()
    with tempfile.TemporaryDirectory(prefix="ai_mcp-previous.") as old:
        unpack(commit, Path(old))
        try:
            server = OdooServer("upgrade-tests", module=Path(old))
        except OdooNotFound as exc:
            pytest.skip(str(exc))
        try:
            server.install()
            before = read_snapshot(server, before="populate(env)")
            assert before["version"] == version
            server.use_module(ROOT)
            log = server.tmp / "update.log"
            done = server.update(log)
            assert done.returncode == 0, (done.stdout.decode(errors="replace") + log.read_text(errors="replace"))[
                -4000:
            ]
            errors = [
                line
                for line in log.read_text(errors="replace").splitlines()
                if " ERROR " in line or " CRITICAL " in line
            ]
            assert not errors, errors
            yield before, read_snapshot(server), log.read_text(errors="replace")
        finally:
            server.close()


def test_update_runs_to_the_new_version(upgraded) -> None:
    before, after, _log = upgraded
    current = manifest_version((ROOT / "__manifest__.py").read_text())
    assert (before["version"], after["version"]) != (current, current)
    assert after["version"] == current


def test_every_record_is_kept_as_it_was(upgraded) -> None:
    before, after, _log = upgraded
    for model, records in before.items():
        if model in ("secrets", "portal", "version"):
            continue
        assert records, f"upgrade_data.py made no {model} record: the test would prove nothing"
        kept = {r["id"]: r for r in after[model]}
        assert sorted(kept) == [r["id"] for r in records], model
        for record in records:
            now = kept[record["id"]]
            assert {k: now[k] for k in record} == record, f"{model} {record['id']} changed"


def test_every_secret_still_decrypts_to_what_was_entered(upgraded) -> None:
    before, after, _log = upgraded
    assert before["secrets"]["ai.provider"], "no provider secret to compare"
    assert any(v["api_key"] == "tok-owner-4" for v in before["secrets"]["mcp.server"].values())
    assert after["secrets"] == before["secrets"]


def test_a_portal_user_never_becomes_internal(upgraded) -> None:
    before, after, _log = upgraded
    assert before["portal"]["portal"]
    assert after["portal"]["portal"] and not after["portal"]["internal"]


def test_every_server_has_call_limits_after_the_update(upgraded) -> None:
    """Servers made before the call time cap and the question timeout existed get their defaults;
    later ones keep what was set."""
    before, after, _log = upgraded
    assert before["mcp.server"], "no server to compare"
    was = {server["id"]: server for server in before["mcp.server"]}
    for server in after["mcp.server"]:
        for name in ("call_time_cap", "question_timeout"):
            assert server[name] == was[server["id"]].get(name, 600.0), (server["name"], name)
