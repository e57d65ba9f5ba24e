"""`-u ai_mcp` on a database made by the previous version keeps every record, secret and
conversation.

The previous version is the module as its users last had it, taken from git (previous_version());
it is installed into a new database of a real Odoo (18 or 19: the previous version that installs on
it), filled through its own code
(upgrade_data.py), then updated to this checkout the way an operator does it.

Each version runs with its own requirements.txt met: what one needs and Odoo's Python lacks (or
holds in another version: mcp<2 before, mcp>=2.3 now) is installed into a cached folder put first on
PYTHONPATH of that version's Odoo processes only (testing/requirements_overlay.py), so one Odoo venv
serves both sides of a dependency change. Without the package index that folder cannot be made the
first time, and the test is skipped saying so.
"""

from __future__ import annotations

import ast
import io
import json
import os
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
from testing.prerequisites import missing  # noqa: E402
from testing.requirements_overlay import (  # noqa: E402
    OverlayUnavailable,
    check_services_import,
    overlay_for,
    requirements,
)

DATA_SCRIPT = (Path(__file__).parent / "upgrade_data.py").read_text()
# models the update adds rows to: usage rows of answers recorded before usage existed, and the
# shared "This Odoo" server with its tools, made by a data file on the first install or update
GROWN_BY_UPDATE = {"ai.usage", "mcp.server", "mcp.tool"}


def synced_by_update(model: str, field: str, record: dict) -> bool:
    """Whether the update itself changes this stored value: This Odoo (transport odoo) is synced
    from the module's catalogue by every install and update."""
    return model == "mcp.server" and record.get("transport") == "odoo" and field == "last_sync"


# stored fields the update makes write-only secrets: compared with the secrets (never read back)
BECAME_SECRET = {"ai.provider": {"extra_query"}}


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def manifest(text: str) -> dict:
    return ast.literal_eval(text)


def manifest_version(text: str) -> str:
    return manifest(text)["version"]


def as_read(version: str, series: int) -> str:
    """A manifest's version as Odoo `series` reads it: one naming no series is that series' own
    (1.7.0 is 18.0.1.7.0 on 18 and 19.0.1.7.0 on 19)."""
    return version if version.count(".") > 2 else f"{series}.0.{version}"


def installs_on(version: str, series: int) -> bool:
    return as_read(version, series).startswith(f"{series}.0.")


def shown(commit: str, path: str) -> str:
    return git("show", f"{commit}:{path}") if git("ls-tree", "--name-only", commit, path).strip() else ""


def runs_on(commit: str, series: int) -> tuple:
    """What a commit's version is and runs on: its manifest's version (as `series` reads it) and
    external dependencies and the requirements of its requirements.txt."""
    declared = manifest(shown(commit, "__manifest__.py"))
    wanted = sorted(str(r) for r in requirements(shown(commit, "requirements.txt")))
    return as_read(declared["version"], series), declared.get("external_dependencies"), wanted


def from_commit(series: int) -> tuple[str, str] | None:
    """(commit, version as `series` reads it) of AI_MCP_UPGRADE_FROM, a commit of this clone to
    update from instead of the previous version (a database made by a commit that was deployed
    between two versions); None when it is not set."""
    commit = os.environ.get("AI_MCP_UPGRADE_FROM")
    if not commit:
        return None
    return commit, as_read(manifest_version(git("show", f"{commit}:__manifest__.py")), series)


def previous_version(series: int) -> tuple[str, str]:
    """(commit, version as `series` reads it): the previous version that installs on Odoo `series`
    as its users had it, its last commit before either its dependencies or its version changed.
    The work toward a new version may change the dependencies before the version is raised (mcp 2.3
    came in a commit of its own): the commits after that run neither version's requirements, and
    none was ever what an operator updated from."""

    def version_at(commit: str) -> str:
        return as_read(manifest_version(git("show", f"{commit}:__manifest__.py")), series)

    current = as_read(manifest_version((ROOT / "__manifest__.py").read_text()), series)
    if version_at("HEAD") != current:
        return "HEAD", version_at("HEAD")
    changes = git("log", "--format=%H", "--", "__manifest__.py").split()
    older = [
        c
        for c in changes
        if version_at(c) != current and installs_on(manifest_version(git("show", f"{c}:__manifest__.py")), series)
    ]
    if not older:
        pytest.skip(f"no version before {current} in this clone's history installs on Odoo {series}")
    previous = version_at(older[0])
    # the commit that brought the previous version in: the oldest of its run of manifest changes
    introduced = older[0]
    for commit in older[1:]:
        if version_at(commit) != previous:
            break
        introduced = commit
    released = runs_on(introduced, series)
    after = git(
        "rev-list", "--reverse", "--ancestry-path", f"{introduced}..HEAD", "--", "__manifest__.py", "requirements.txt"
    ).split()
    changed = next((commit for commit in after if runs_on(commit, series) != released), None)
    if changed is None:
        # not on one line of history: the commit before the current version came in
        changed = changes[changes.index(older[0]) - 1]
    return parent_towards(changed, introduced), previous


def parent_towards(commit: str, ancestor: str) -> str:
    """The parent of `commit` on the line of history that holds `ancestor`: a merge's first parent
    may be the other branch, whose version the running series may not install (a branch that
    made the addon install on Odoo 19, merged into a main whose manifest still named 18.0)."""
    parents = git("rev-list", "--parents", "-n", "1", commit).split()[1:]
    for parent in parents:
        if subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", ancestor, parent]).returncode == 0:
            return parent
    return parents[0]


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


def with_requirements(server: OdooServer, addon: Path) -> Path | None:
    """The overlay Odoo's Python needs to run the addon in `addon` (None: nothing), checked by
    importing every module of its services/; skips the test when the package index is out of reach."""
    python = server.command[0]
    try:
        overlay = overlay_for(python, addon)
    except OverlayUnavailable as exc:
        missing(f"the requirements of {addon} cannot be installed beside Odoo's own packages: {exc}")
    check_services_import(python, addon, overlay)
    return overlay


@pytest.fixture(scope="module")
def upgraded() -> Iterator[tuple[dict, dict, str]]:
    try:
        server = OdooServer("upgrade-tests")
    except OdooNotFound as exc:
        missing(str(exc))
    with tempfile.TemporaryDirectory(prefix="ai_mcp-previous.") as old:
        try:
            commit, version = from_commit(server.series) or previous_version(server.series)
            unpack(commit, Path(old))
            previous_deps = with_requirements(server, Path(old))
            current_deps = with_requirements(server, ROOT)
            server.use_module(Path(old), overlay=previous_deps)
            server.install()
            before = read_snapshot(server, before="populate(env)")
            assert before["version"] == version
            server.use_module(ROOT, overlay=current_deps)
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
    current = as_read(manifest_version((ROOT / "__manifest__.py").read_text()), int(after["version"].split(".")[0]))
    assert (before["version"], after["version"]) != (current, current)
    assert after["version"] == current


def test_every_record_is_kept_as_it_was(upgraded) -> None:
    before, after, _log = upgraded
    for model, records in before["records"].items():
        assert records, f"upgrade_data.py made no {model} record: the test would prove nothing"
        kept = {r["id"]: r for r in after["records"][model]}
        if model in GROWN_BY_UPDATE:
            assert {r["id"] for r in records} <= set(kept), model
        else:
            assert sorted(kept) == [r["id"] for r in records], model
        for record in records:
            now = kept[record["id"]]
            kept_fields = [
                k for k in record if k not in BECAME_SECRET.get(model, ()) and not synced_by_update(model, k, record)
            ]
            assert {k: now[k] for k in kept_fields} == {k: record[k] for k in kept_fields}, (
                f"{model} {record['id']} changed"
            )


def test_what_the_test_fills_covers_servers_grants_tools_and_conversations(upgraded) -> None:
    before, _after, _log = upgraded
    records = before["records"]
    for model in (
        "mcp.server",
        "mcp.oauth.token",
        "mcp.oauth.pending",
        "mcp.tool",
        "ai.tool.preset",
        "ai.assistant",
        "ai.conversation",
        "ai.message",
        "ai.conversation.event",
        "ai.tool.call",
    ):
        assert model in records, f"the previous version has no {model}"
    servers = records["mcp.server"]
    assert {s["auth_type"] for s in servers} >= {"bearer", "headers", "api_key", "oauth", "none"}
    # and, from 1.11.0 on, This Odoo (transport odoo), which the module's data makes
    assert {s["transport"] for s in servers} - {"odoo"} == {"streamable_http", "sse", "stdio"}
    grants = records["mcp.oauth.token"]
    assert any(not g["user_id"] for g in grants) and any(g["user_id"] for g in grants), "shared and per-user grants"
    tools = records["mcp.tool"]
    assert {t["review_state"] for t in tools} == {"approved", "changed"}
    assert {t["requires_approval"] for t in tools} == {True, False}
    assert not all(t["enabled"] for t in tools) and not all(t["active"] for t in tools)
    assert any(a["mcp_tool_disabled_ids"] for a in records["ai.assistant"])
    conversations = records["ai.conversation"]
    assert "awaiting_approval" in {c["state"] for c in conversations}
    assert any(c["channel_id"] for c in conversations), "a conversation in Discuss"
    assert {m["status"] for m in records["ai.message"]} >= {"done", "denied", "pending", "error"}
    assert {c["status"] for c in records["ai.tool.call"]} == {"ok", "denied", "error"}


def test_every_secret_still_decrypts_to_what_was_entered(upgraded) -> None:
    before, after, _log = upgraded
    assert before["secrets"]["mcp.server"], "no server secret to compare"
    for model, records in before["secrets"].items():
        fields = {field for values in records.values() for field in values}
        unset = sorted(f for f in fields if not any(values[f] for values in records.values()))
        assert not unset, f"upgrade_data.py set no {model} secret {unset}: the test would prove nothing of them"
        for record, values in records.items():
            assert record in after["secrets"].get(model, {}), f"{model} {record} is gone"
            now = after["secrets"][model][record]
            assert {f: now[f] for f in values} == values, f"the secrets of {model} {record}"
    assert any(v["api_key"] == "tok-owner-4" for v in before["secrets"]["mcp.server"].values())
    assert any(v["env_vars"] and "env-upgrade-5" in v["env_vars"] for v in before["secrets"]["mcp.server"].values())


def test_the_modules_settings_are_kept(upgraded) -> None:
    before, after, _log = upgraded
    assert before["settings"]["ai_mcp.allow_stdio"] == "True"
    assert {key: after["settings"].get(key) for key in before["settings"]} == before["settings"]


def test_a_portal_user_never_becomes_internal(upgraded) -> None:
    before, after, _log = upgraded
    assert before["portal"]["portal"]
    assert after["portal"]["portal"] and not after["portal"]["internal"]


def test_every_server_has_call_limits_after_the_update(upgraded) -> None:
    """Servers made before the call time cap and the question timeout existed get their defaults;
    later ones keep what was set."""
    before, after, _log = upgraded
    assert before["records"]["mcp.server"], "no server to compare"
    was = {server["id"]: server for server in before["records"]["mcp.server"]}
    for server in (server for server in after["records"]["mcp.server"] if server["id"] in was):
        for name in ("call_time_cap", "question_timeout"):
            assert server[name] == was[server["id"]].get(name, 600.0), (server["name"], name)


def test_tool_calls_audited_before_apps_are_the_models(upgraded) -> None:
    """Audit rows made before an app could call a tool are the model's calls after the update."""
    before, after, _log = upgraded
    was = {call["id"]: call for call in before["records"]["ai.tool.call"]}
    assert was, "no tool call to compare"
    for call in after["records"]["ai.tool.call"]:
        assert call["origin"] == was[call["id"]].get("origin", "model"), call["id"]


def test_providers_keep_their_kind_and_every_turn_calls_what_it_called(upgraded) -> None:
    """A provider keeps its kind (OpenAI, Azure or OpenAI-compatible; the classification of one made
    before kinds, by its URL, is tests/test_provider_kind_migration.py), speaks Chat Completions as
    before, and each assistant's turn calls the same URL, key, model and temperature as before."""
    before, after, _log = upgraded
    providers = after["records"]["ai.provider"]
    kinds = {provider["name"]: provider["kind"] for provider in providers}
    assert kinds == {"Upgrade LLM": "compatible", "Upgrade OpenAI": "openai", "Upgrade Azure": "azure"}
    assert all(p["api_style"] == "chat_completions" and not p["api_version"] for p in providers)
    assert all(a["custom_temperature"] and not a["model_id"] for a in after["records"]["ai.assistant"])
    assert before["turn_settings"], "no assistant to compare"
    assert after["turn_settings"] == before["turn_settings"]


def test_answers_given_before_usage_rows_are_in_the_usage_reports(upgraded) -> None:
    """Each answer with usage gets one ai.usage row (its tokens, no cost), unless its turn already
    left its own; the answers keep their usage."""
    before, after, _log = upgraded
    conversations = {c["name"]: c["id"] for c in after["records"]["ai.conversation"]}
    rows = after["records"]["ai.usage"]
    kept = {row["id"] for row in before["records"].get("ai.usage", [])}
    made = [row for row in rows if row["id"] not in kept]
    if "ai.usage" in before["records"]:
        # a version with usage rows recorded its answers as they ran: the update adds none
        assert made == []
        return
    assert [(r["conversation_id"][0], r["input_tokens"], r["output_tokens"], r["total_tokens"]) for r in made] == [
        (conversations["Orders"], 120, 9, 129)
    ]
    [orders] = made
    answer = next(
        m for m in after["records"]["ai.message"] if m["conversation_id"][0] == conversations["Orders"] and m["usage"]
    )
    assert orders["date"] == answer["create_date"]
    assert (orders["cost"], orders["round"], orders["model_name"]) == (0.0, 1, "gpt-upgrade")
    if "ai.provider.model" in before["records"]:
        [model] = [m for m in after["records"]["ai.provider.model"] if m["name"] == "gpt-upgrade"]
        assert orders["model_id"][0] == model["id"]
    assert orders["user_id"][1] == "Owner" and orders["assistant_id"] and orders["provider_id"]
    assert orders["cloud_service_id"], "the conversation's cloud service"
    if "Recorded" in conversations:
        recorded = [r for r in rows if r["conversation_id"] and r["conversation_id"][0] == conversations["Recorded"]]
        assert len(recorded) == 1, "a turn recorded as it ran is not counted again"


def test_usage_rows_get_their_cost_in_the_reports_one_currency(upgraded) -> None:
    """Every usage row, kept or made by the update, gets its cost in the main company's currency
    (here the rows' own): the reports add up one currency."""
    _before, after, _log = upgraded
    rows = after["records"]["ai.usage"]
    assert rows, "no usage row to check"
    for row in rows:
        assert row["report_currency_id"] == row["currency_id"], row
        assert row["report_cost"] == row["cost"], row


def test_records_made_before_companies_stay_shared(upgraded) -> None:
    """Providers, assistants, servers, tools, cloud services, presets and conversations made before
    they had a company are shared by every company after the update, as they were."""
    before, after, _log = upgraded
    records = after["records"]
    models = ("ai.provider", "ai.assistant", "mcp.server", "mcp.tool", "cloud.service", "ai.conversation")
    for model in models:
        assert records[model], f"no {model} to check"
        # made by a version with companies: each keeps the company it had
        was = {r["id"]: r.get("company_id", False) for r in before["records"][model]}
        kept = [r for r in records[model] if r["id"] in was]
        assert [r["company_id"] for r in kept] == [was[r["id"]] for r in kept], model


def test_query_parameters_become_secrets_that_are_still_sent(upgraded) -> None:
    """Query parameters stored in clear before 1.10.0, or already secret since, are a secret after
    the update and still sent."""
    before, after, _log = upgraded
    clear = {p["id"]: p["extra_query"] for p in before["records"]["ai.provider"] if p.get("extra_query")}
    secret = {
        int(i): s["extra_query"] for i, s in before["secrets"].get("ai.provider", {}).items() if s.get("extra_query")
    }
    ((provider_id, query),) = (clear or secret).items()
    assert json.loads(query) == {"gateway_key": "upgrade-query-12"}
    provider = {"id": provider_id}
    now = next(p for p in after["records"]["ai.provider"] if p["id"] == provider["id"])
    assert "extra_query" not in now, "no longer stored in clear"
    assert now["extra_query_names"] == "gateway_key"
    secret = after["secrets"]["ai.provider"][str(provider["id"])]["extra_query"]
    assert json.loads(secret) == {"gateway_key": "upgrade-query-12"}
    sent = [s["extra_query"] for s in after["turn_settings"].values()]
    assert {"gateway_key": "upgrade-query-12"} in sent
