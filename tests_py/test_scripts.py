"""The decisions of scripts/lib.sh, scripts/test and scripts/run: which Odoo is chosen, where Odoo
comes from when there is none, when the pins are applied, what a run without Odoo reports.

Each test sources scripts/lib.sh in a bash of its own, on fake Odoo trees (an odoo/release.py of a
chosen version) and fake interpreters (scripts that log how they were called), so the choices are
seen without installing anything.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from testing.script_env import script_env

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "scripts" / "odoo18" / "pins.txt"


def clean_env() -> dict[str, str]:
    """This process's environment without any variable the scripts read (the caller's Odoo, source,
    cache folder or series, a CI's AI_MCP_REQUIRE_ODOO=1): each test sets what it depends on."""
    return script_env()


def bash(script: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ROOT}/scripts/lib.sh\n{script}"],
        env={**clean_env(), **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def odoo_tree(path: Path, major: int = 18, venv: bool = True, layout: str = "git") -> Path:
    """A folder that looks like an Odoo source tree to the scripts (nothing of Odoo in it)."""
    (path / "odoo").mkdir(parents=True)
    (path / "odoo" / "release.py").write_text(f"version_info = ({major}, 0, 0, 'final', 0, '')\n")
    (path / "requirements.txt").write_text("")
    if layout == "git":
        (path / "odoo-bin").write_text("#!/usr/bin/env python3\n")
        (path / "addons" / "web").mkdir(parents=True)
    else:  # Odoo's nightly archive: setup/odoo, the addons inside the odoo package
        (path / "setup").mkdir()
        (path / "setup" / "odoo").write_text("#!/usr/bin/env python3\nimport odoo\n")
        (path / "odoo" / "addons" / "web").mkdir(parents=True)
    if venv:
        (path / ".venv" / "bin").mkdir(parents=True)
        (path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    return path


def fake_python(path: Path, script: str) -> Path:
    """An interpreter that logs its arguments to <path>.log, then runs `script` (bash)."""
    path.write_text(f'#!/usr/bin/env bash\necho "$*" >> "{path}.log"\n{script}\n')
    path.chmod(0o755)
    return path


def found(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


# -- which Odoo ---------------------------------------------------------------------------------

FIND = 'if find_odoo; then echo "found ${ODOO_CMD[*]} | $ODOO_ADDONS"; else echo "none: $ODOO_NOT_FOUND"; fi'


def test_the_first_search_folder_with_an_odoo_bin_wins_run_by_its_venv(tmp_path: Path) -> None:
    first, second = odoo_tree(tmp_path / "first"), odoo_tree(tmp_path / "second")
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": f"{tmp_path}/missing:{first}:{second}"}))
    assert out == f"found {first}/.venv/bin/python {first}/odoo-bin | {first}/addons"


def test_odoo_bin_overrides_the_search_and_a_missing_one_finds_nothing(tmp_path: Path) -> None:
    searched, chosen = odoo_tree(tmp_path / "searched"), odoo_tree(tmp_path / "chosen")
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": str(searched), "ODOO_BIN": f"{chosen}/odoo-bin"}))
    assert out.startswith(f"found {chosen}/.venv/bin/python {chosen}/odoo-bin")
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": str(searched), "ODOO_BIN": f"{tmp_path}/gone/odoo-bin"}))
    assert out == f"none: ODOO_BIN={tmp_path}/gone/odoo-bin does not exist"


def test_another_odoo_version_is_refused_with_its_version(tmp_path: Path) -> None:
    odoo17 = odoo_tree(tmp_path / "odoo17", major=17)
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": str(odoo17)}))
    assert out == f"none: {odoo17}/odoo-bin is not Odoo 18 (version: 17)"


def test_the_cache_is_searched_after_opt_odoo18_by_default(tmp_path: Path) -> None:
    out = found(bash("odoo_search_dirs", {"AI_MCP_CACHE_DIR": str(tmp_path)}))
    assert out == f"/opt/odoo18:{tmp_path}/odoo18/src"


def test_the_series_setting_finds_odoo_19_where_odoo_18_is_found_and_refuses_the_other(tmp_path: Path) -> None:
    odoo18, odoo19 = odoo_tree(tmp_path / "odoo18"), odoo_tree(tmp_path / "odoo19", major=19)
    search = {"AI_MCP_ODOO_SEARCH": f"{odoo18}:{odoo19}"}
    assert found(bash(FIND, search)).startswith(f"found {odoo18}/.venv/bin/python {odoo18}/odoo-bin")
    assert found(bash(FIND, {**search, "AI_MCP_ODOO_SERIES": "19"})).startswith(
        f"found {odoo19}/.venv/bin/python {odoo19}/odoo-bin"
    )
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": str(odoo18), "AI_MCP_ODOO_SERIES": "19"}))
    assert out == f"none: {odoo18}/odoo-bin is not Odoo 19 (version: 18)"
    # what scripts/test does for each series in turn
    both = 'for s in 18 19; do use_odoo_series "$s" && find_odoo && echo "$s: $ODOO_ROOT"; done'
    assert found(bash(both, search)).splitlines() == [f"18: {odoo18}", f"19: {odoo19}"]


def test_odoo_bin_of_one_series_leaves_the_other_to_the_search(tmp_path: Path) -> None:
    odoo18, odoo19 = odoo_tree(tmp_path / "odoo18"), odoo_tree(tmp_path / "odoo19", major=19)
    env = {"ODOO_BIN": f"{odoo18}/odoo-bin", "AI_MCP_ODOO_SEARCH": str(odoo19)}
    both = 'for s in 18 19; do use_odoo_series "$s" && find_odoo && echo "$s: $ODOO_ROOT"; done'
    assert found(bash(both, env)).splitlines() == [f"18: {odoo18}", f"19: {odoo19}"]


def test_odoo_19_is_looked_for_in_opt_odoo19_then_its_own_cache_and_made_from_the_19_nightly(tmp_path: Path) -> None:
    env = {"AI_MCP_CACHE_DIR": str(tmp_path), "AI_MCP_ODOO_SERIES": "19"}
    assert found(bash("odoo_search_dirs", env)) == f"/opt/odoo19:{tmp_path}/odoo19/src"
    assert found(bash("odoo_source", env)) == "https://nightly.odoo.com/19.0/nightly/src/odoo_19.0.latest.tar.gz"
    assert found(bash("odoo_demo_args", env)) == "--with-demo", "19 makes demo data only when asked"
    assert found(bash("odoo_demo_args", {"AI_MCP_CACHE_DIR": str(tmp_path)})) == ""


def test_an_unknown_series_is_refused_naming_the_known_ones() -> None:
    result = bash("echo loaded", {"AI_MCP_ODOO_SERIES": "17"})
    assert result.returncode != 0 and "loaded" not in result.stdout
    assert "AI_MCP_ODOO_SERIES=17: the addon runs on Odoo 18 19" in result.stderr


def test_get_odoo_makes_19_from_its_own_source_and_refuses_an_18_archive(tmp_path: Path) -> None:
    odoo_tree(tmp_path / "odoo18", venv=False)
    archive = tmp_path / "odoo_18.0.latest.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(tmp_path), "odoo18"], check=True)
    env = {
        "AI_MCP_ODOO_SERIES": "19",
        "AI_MCP_ODOO_SOURCE": "ftp://example.org/for-18.tgz",
        "AI_MCP_ODOO19_SOURCE": str(archive),
        "AI_MCP_CACHE_DIR": str(tmp_path / "cache"),
    }
    assert found(bash("odoo_source", env)) == str(archive), "the series' own source first"
    result = bash("get_odoo", env)
    assert result.returncode == 1
    assert f"Odoo 19: unpacking {archive}" in result.stdout
    assert f"{archive} holds Odoo 18, not 19" in result.stderr
    assert list((tmp_path / "cache" / "odoo19").iterdir()) == []


def test_without_any_tree_an_importable_odoo_package_is_run_as_a_module(tmp_path: Path) -> None:
    package = odoo_tree(tmp_path / "site", venv=False)
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": "", "ODOO_PYTHON": sys.executable, "PYTHONPATH": str(package)}))
    assert out == f"found {sys.executable} -m odoo | {package}/addons"
    out = found(bash(FIND, {"AI_MCP_ODOO_SEARCH": f"{tmp_path}/none", "ODOO_PYTHON": sys.executable}))
    assert (
        out == f"none: no ODOO_BIN, no odoo-bin in {tmp_path}/none, no odoo 18 package importable by {sys.executable}"
    )


# -- where Odoo comes from --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("https://nightly.odoo.com/18.0/nightly/src/odoo_18.0.latest.tar.gz", "url"),
        ("https://github.com/odoo/odoo.git", "git"),
        ("git+https://example.org/odoo", "git"),
        ("git@github.com:odoo/odoo.git", "git"),
        ("{tmp}/odoo.tar.gz", "archive"),
        ("{tmp}/odoo.zip", "archive"),
        ("{tmp}", "dir"),
        ("{tmp}/missing.tar.gz", ""),
        ("ftp://example.org/odoo.tar.gz", ""),
    ],
)
def test_what_kind_of_source_ai_mcp_odoo_source_names(tmp_path: Path, source: str, kind: str) -> None:
    (tmp_path / "odoo.tar.gz").write_bytes(b"")
    (tmp_path / "odoo.zip").write_bytes(b"")
    assert found(bash(f'_odoo_source_kind "{source.format(tmp=tmp_path)}"')) == kind


def test_the_tree_is_found_in_a_git_checkout_and_one_folder_down_in_a_nightly_archive(tmp_path: Path) -> None:
    git = odoo_tree(tmp_path / "git", venv=False)
    nightly = odoo_tree(tmp_path / "nightly" / "odoo-18.0.post20261122", venv=False, layout="nightly")
    assert found(bash(f'_odoo_tree_in "{git}"')) == str(git)
    assert found(bash(f'_odoo_tree_in "{tmp_path / "nightly"}"')) == str(nightly)


def test_get_odoo_refuses_a_source_of_another_version_and_keeps_nothing(tmp_path: Path) -> None:
    odoo17 = odoo_tree(tmp_path / "odoo17", major=17, venv=False)
    result = bash("get_odoo", {"AI_MCP_ODOO_SOURCE": str(odoo17), "AI_MCP_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 1
    assert f"{odoo17} holds Odoo 17, not 18" in result.stderr
    assert list((tmp_path / "cache" / "odoo18").iterdir()) == []


def test_get_odoo_says_what_a_source_it_cannot_use_should_be(tmp_path: Path) -> None:
    result = bash("get_odoo", {"AI_MCP_ODOO_SOURCE": "ftp://example.org/odoo.tgz", "AI_MCP_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 1
    assert (
        "is not a folder, an archive (.tar.gz, .tgz, .tar, .tar.xz, .zip), an http(s) URL or a git URL" in result.stderr
    )


def test_get_odoo_reuses_what_it_made_until_the_source_or_pins_change(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    odoo_tree(cache / "odoo18" / "src")
    env = {"AI_MCP_ODOO_SOURCE": "ftp://example.org/odoo.tgz", "AI_MCP_CACHE_DIR": str(cache)}
    found(bash('_odoo_stamp "$AI_MCP_ODOO_SOURCE" > "$(odoo_cache_dir)/stamp"', env))
    result = bash("get_odoo", env)
    assert (result.returncode, result.stdout.strip()) == (
        0,
        f"Odoo 18: reusing {cache}/odoo18/src (made from ftp://example.org/odoo.tgz)",
    )
    result = bash("get_odoo", {**env, "AI_MCP_ODOO_SOURCE": "ftp://example.org/other.tgz"})
    assert result.returncode == 1 and "reusing" not in result.stdout
    assert (cache / "odoo18" / "src" / "odoo-bin").exists(), "a failed attempt must not remove the working Odoo"


@pytest.mark.parametrize("setting", ["ODOO_BIN", "AI_MCP_ODOO_SEARCH"])
def test_the_odoo_just_made_is_used_whatever_named_none(tmp_path: Path, setting: str) -> None:
    cache = tmp_path / "cache"
    made = odoo_tree(cache / "odoo18" / "src")
    (tmp_path / "empty").mkdir()
    env = {
        "AI_MCP_ODOO_SOURCE": "ftp://example.org/odoo.tgz",
        "AI_MCP_CACHE_DIR": str(cache),
        # the README's "no Odoo": a missing odoo-bin, or folders without one
        setting: str(tmp_path / "missing" / "odoo-bin") if setting == "ODOO_BIN" else str(tmp_path / "empty"),
    }
    found(bash('_odoo_stamp "$AI_MCP_ODOO_SOURCE" > "$(odoo_cache_dir)/stamp"', env))
    result = bash('odoo_or_make && echo "uses ${ODOO_CMD[*]}" && bash -c \'echo "then $ODOO_BIN"\'', env)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("Odoo 18: none found (")
    assert lines[-2:] == [f"uses {made}/.venv/bin/python {made}/odoo-bin", f"then {made}/odoo-bin"]


def test_an_unreachable_default_source_fails_within_seconds_and_names_the_setting(tmp_path: Path) -> None:
    result = bash(
        "get_odoo",
        {
            "AI_MCP_ODOO_SOURCE": "https://odoo-nightly.invalid/odoo_18.0.latest.tar.gz",
            "AI_MCP_CACHE_DIR": str(tmp_path),
        },
    )
    assert result.returncode == 1
    assert "set AI_MCP_ODOO_SOURCE to an Odoo 18.0 archive, folder or git URL you can reach" in result.stderr
    assert list((tmp_path / "odoo18").iterdir()) == []


# -- pins and the gevent worker ----------------------------------------------------------------


def test_pins_are_installed_only_when_they_are_not_satisfied(tmp_path: Path) -> None:
    # the requirement check reads its program from stdin ("-"): it fails there, pip succeeds
    unpinned = fake_python(tmp_path / "unpinned", "[[ $1 == - ]] && exit 1; exit 0")
    found(bash(f"apply_odoo_pins {unpinned}"))
    assert f"-m pip install --quiet --disable-pip-version-check -r {PINS}" in (tmp_path / "unpinned.log").read_text()
    pinned = fake_python(tmp_path / "pinned", "exit 0")
    found(bash(f"apply_odoo_pins {pinned}"))
    assert "pip install" not in (tmp_path / "pinned.log").read_text()


def test_the_pins_are_the_ones_odoo_18_needs_on_current_packaging() -> None:
    lines = [line for line in PINS.read_text().splitlines() if line and not line.startswith("#")]
    assert lines == ["zope.interface<7", "zope.event<5", "websocket-client"]


def test_a_gevent_worker_that_cannot_start_is_reported_with_its_reason_and_fix(tmp_path: Path) -> None:
    broken = fake_python(
        tmp_path / "broken",
        "echo \"pkg_resources.DistributionNotFound: The 'zope.event' distribution was not found\" >&2; exit 1",
    )
    result = bash(f"odoo_gevent_check {broken}")
    assert result.returncode == 1
    assert (
        f"the gevent worker cannot start in {broken}: pkg_resources.DistributionNotFound: The 'zope.event'"
        in result.stderr
    )
    assert f"fix: {broken} -m pip install -r {PINS}" in result.stderr
    assert "gevent.monkey.patch_all()" in (tmp_path / "broken.log").read_text()


@pytest.mark.parametrize(
    ("args", "prefork"),
    [
        ("--workers=2", True),
        ("--workers 3 --dev=xml", True),
        ("--workers=0", False),
        ("--workers 0", False),
        ("--dev=xml", False),
        ("", False),
    ],
)
def test_scripts_run_checks_the_gevent_worker_only_when_workers_are_asked_for(args: str, prefork: bool) -> None:
    result = bash(f"odoo_args_prefork {args}")
    assert (result.returncode == 0) is prefork


@pytest.mark.parametrize(
    ("max_connections", "args", "pools"),
    [
        (100, "--workers=2", ["--db_maxconn=6", "--db_maxconn_gevent=63"]),
        (100, "--workers 4 --max-cron-threads=1 --dev=xml", ["--db_maxconn=6", "--db_maxconn_gevent=57"]),
        (300, "--workers=2", ["--db_maxconn=6", "--db_maxconn_gevent=263"]),
        (100, "", []),  # threaded: Odoo's own pool of 64 fits
        (50, "--dev=xml", ["--db_maxconn=37"]),
        (100, "--workers=2 -c /etc/odoo/odoo.conf", []),  # the operator's file sizes them
        (100, "--workers=2 --db_maxconn_gevent=240", []),
    ],
)
def test_scripts_run_sizes_the_pools_to_fit_postgresql(max_connections: int, args: str, pools: list[str]) -> None:
    result = bash(f"odoo_pool_args {max_connections} {args}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == pools
    sizes = dict(option.lstrip("-").split("=") for option in pools)
    if "db_maxconn_gevent" in sizes:
        workers = int(re.search(r"--workers[= ](\d+)", args).group(1))
        crons = int(m.group(1)) if (m := re.search(r"--max-cron-threads=(\d+)", args)) else 2
        opened = (workers + crons) * int(sizes["db_maxconn"]) + int(sizes["db_maxconn_gevent"])
        assert opened < max_connections, "every pool full at once still fits PostgreSQL"


def test_too_few_postgresql_connections_for_the_workers_is_said_with_the_fix() -> None:
    result = bash("odoo_pool_args 100 --workers=14")
    assert result.stdout == ""
    assert "max_connections=100 is too few for 14 HTTP and 2 cron workers" in result.stderr
    assert "ALTER SYSTEM SET max_connections" in result.stderr


# -- scripts/run's start -----------------------------------------------------------------------


def test_the_cache_folder_is_ai_mcp_cache_dir_for_the_addons_link_too(tmp_path: Path) -> None:
    assert found(bash("ai_mcp_cache_dir", {"AI_MCP_CACHE_DIR": str(tmp_path)})) == str(tmp_path)
    assert found(bash("ai_mcp_cache_dir", {"XDG_CACHE_HOME": str(tmp_path)})) == f"{tmp_path}/ai_mcp"
    run = (ROOT / "scripts" / "run").read_text()
    assert "CACHE_DIR=$(ai_mcp_cache_dir)" in run and 'link_addon "$CACHE_DIR/addons"' in run


def start(
    folder: Path, option: str, install_rc: int = 0, serve: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """install_then_serve with a fake Odoo and a fake psql that log each call, in order, to one file;
    the fake Odoo, once told to serve, runs `serve` (bash)."""
    folder.mkdir(exist_ok=True)
    calls = folder / "calls"
    odoo = fake_python(
        folder / "odoo-python",
        f'echo "odoo $*" >> {calls}; if [[ "$*" == *--stop-after-init* ]]; then exit {install_rc}; fi\n{serve}',
    )
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    fake_python(bin_dir / "psql", f'echo "psql $*" >> {calls}')
    port = free_port()
    result = bash(
        f'ODOO_CMD=("{odoo}" odoo-bin); install_then_serve demo {port} {option} --database=demo --dev=xml',
        {"PATH": f"{bin_dir}:{os.environ['PATH']}", "ODOO_PY": sys.executable, "FAKE_PORT": str(port)},
    )
    return result, calls.read_text().splitlines() if calls.exists() else []


# Odoo opens its port seconds after it starts: the fake one waits, says so, then serves for a moment
SLOW_ODOO = f"""sleep 1.5; echo "fake odoo: answering on $FAKE_PORT"
timeout 4 {sys.executable} -m http.server --bind 127.0.0.1 "$FAKE_PORT" >/dev/null 2>&1; exit 0"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_scripts_run_says_where_it_serves_only_once_the_login_page_answers(tmp_path: Path) -> None:
    result, calls = start(tmp_path / "new", "-i", serve=SLOW_ODOO)
    assert result.returncode == 0, result.stderr
    install, quiet, serve = calls
    assert install == "odoo odoo-bin --database=demo --dev=xml -i ai_mcp --stop-after-init"
    assert quiet.startswith("psql -d demo") and "iap_enrich_auto_done = true" in quiet
    assert serve == "odoo odoo-bin --database=demo --dev=xml", "it serves without installing again"
    answering, serving = result.stdout.splitlines()
    assert answering.startswith("fake odoo: answering on"), "not said before Odoo answers"
    port = answering.rsplit(" ", 1)[1]
    assert serving == f"serving on http://127.0.0.1:{port} (new databases: log in as admin / admin); Ctrl-C stops"


def test_an_updated_database_is_left_as_it_is_and_a_failed_install_is_not_served(tmp_path: Path) -> None:
    result, calls = start(tmp_path / "update", "-u")
    assert result.returncode == 0, result.stderr
    assert calls == [
        "odoo odoo-bin --database=demo --dev=xml -u ai_mcp --stop-after-init",
        "odoo odoo-bin --database=demo --dev=xml",
    ], "an existing database keeps its settings: no psql"
    assert "serving on" not in result.stdout, "an Odoo that stopped before it answered is not announced"
    result, calls = start(tmp_path / "failed", "-i", install_rc=1)
    assert result.returncode != 0 and "serving on" not in result.stdout
    assert calls == ["odoo odoo-bin --database=demo --dev=xml -i ai_mcp --stop-after-init"]
    assert "could not install ai_mcp in database demo" in result.stderr


# -- a test run without Odoo -------------------------------------------------------------------


def test_without_odoo_the_summary_says_in_capitals_how_many_odoo_tests_were_skipped(tmp_path: Path) -> None:
    env = {**clean_env(), "AI_MCP_ODOO_SEARCH": str(tmp_path), "ODOO_PYTHON": sys.executable}
    result = subprocess.run(
        [str(ROOT / "scripts" / "test"), "odoo"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    count = found(bash("odoo_test_count"))
    assert int(count) > 100
    assert result.returncode == 0, result.stdout
    assert f"odoo: SKIPPED {count} ODOO TESTS: no Odoo 18/19 found" in result.stdout

    # in CI a run without Odoo fails by default: it would otherwise be green without testing Odoo
    required = subprocess.run(
        [str(ROOT / "scripts" / "test"), "odoo"],
        env={**env, "CI": "true"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert required.returncode == 1
    assert "CI=true and AI_MCP_REQUIRE_ODOO=1: a run without Odoo 18/19 fails" in required.stdout
    assert "FAILED: odoo" in required.stdout
    waived = subprocess.run(
        [str(ROOT / "scripts" / "test"), "odoo"],
        env={**env, "CI": "true", "AI_MCP_REQUIRE_ODOO": "0"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert waived.returncode == 0, "AI_MCP_REQUIRE_ODOO=0 waives it on purpose"
    assert f"odoo: SKIPPED {count} ODOO TESTS" in waived.stdout


def test_ci_requires_both_series_and_counts_a_skipped_prerequisite_as_a_failure(tmp_path: Path) -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "export AI_MCP_REQUIRE_ODOO=${AI_MCP_REQUIRE_ODOO:-1}" in ci
    test = tmp_path / "test_needs_nginx.py"
    test.write_text(
        "from testing.prerequisites import missing\n\n\n"
        "def test_two_nodes():\n    missing('no nginx on this machine')\n"
    )
    for ci_value, outcome in (("true", "1 failed"), ("", "1 skipped")):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
            env={**clean_env(), "CI": ci_value, "PYTHONPATH": str(ROOT)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert outcome in result.stdout, result.stdout
        if ci_value:
            assert "CI=true and a prerequisite is missing: no nginx on this machine" in result.stdout


# -- requirements beside Odoo's pins -----------------------------------------------------------

LIFTED = ROOT / "scripts" / "odoo18" / "lifted.txt"
PYTHON_VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"

# Odoo's requirements.txt as Odoo writes it: markers per Python, comments after the requirements
ODOO_REQUIREMENTS = f"""\
# The officially supported versions of the following packages are their
cryptography==3.4.8; python_version == '{PYTHON_VERSION}'  # incompatibility between pyopenssl ...
cryptography==42.0.8 ; python_version != '{PYTHON_VERSION}'  # (Noble)
idna==2.10 ; python_version == '{PYTHON_VERSION}'  # requests 2.25.1 depends on idna<3 and >=2.5
idna==3.6 ; python_version != '{PYTHON_VERSION}'
pypiwin32 ; sys_platform == 'win32'
pytz  # no version pinning to avoid OS perturbations
requests==2.31.0 ; python_version >= '3.10' # (Noble)
urllib3==1.26.5 ; python_version == '{PYTHON_VERSION}' # indirect
urllib3==2.0.7  ; python_version != '{PYTHON_VERSION}'  # (Noble) Compatibility with cryptography
ai-mcp-test-not-installed==1.0
"""

# what the Odoo venv of a machine that ran an earlier ai_mcp holds; cryptography is not at Odoo's pin
INSTALLED = {
    "cryptography": "41.0.7",
    "idna": "2.10",
    "pytz": "2024.1",
    "requests": "2.31.0",
    "urllib3": "1.26.5",
    "mcp": "1.30.0",
    "httpx2": "2.3.0",
    "langchain-mcp-adapters": "0.3.2",
}


def fake_site(path: Path, installed: dict[str, str]) -> dict[str, str]:
    """A folder of distributions (metadata only) that shadow the real ones on PYTHONPATH: what
    `pip freeze` would list in a fake Odoo venv."""
    for name, version in installed.items():
        info = path / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return {"PYTHONPATH": str(path)}


def odoo_requirements(tmp_path: Path, text: str = ODOO_REQUIREMENTS) -> Path:
    path = tmp_path / "odoo" / "requirements.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def constraint_lines(path: Path) -> list[str]:
    """The constraints of a constraints file, without the comments that say where each comes from."""
    return [line.split("  #")[0] for line in path.read_text().splitlines() if line and not line.startswith("#")]


def test_the_constraints_hold_odoos_pins_as_installed_lift_idna_and_leave_the_rest_free(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", INSTALLED)
    out = tmp_path / "constraints.txt"
    found(bash(f"odoo_constraints {sys.executable} {out} {odoo_requirements(tmp_path)}", env))
    assert constraint_lines(out) == [
        "cryptography==41.0.7",  # the version installed, not Odoo's 3.4.8: the machine's own
        "pytz==2024.1",  # listed by Odoo without a version: held where it is
        "requests==2.31.0",
        "urllib3==1.26.5",  # the line for this Python; the one for the others is left out
        "ai-mcp-test-not-installed==1.0",  # not installed: Odoo's pin
        "zope.interface<7",  # scripts/odoo18/pins.txt
        "zope.event<5",
    ]
    text = out.read_text()
    assert "# idna: lifted (lifted.txt); Odoo pins idna==2.10" in text
    # what Odoo does not pin moves freely, whatever an earlier ai_mcp installed
    assert not re.search(r"^(mcp|httpx2|langchain-mcp-adapters|pypiwin32)\b", text, re.MULTILINE)


def test_the_declared_constraints_are_odoos_pins_for_this_python_as_written(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", INSTALLED)
    out = tmp_path / "constraints.txt"
    found(bash(f"odoo_constraints {sys.executable} {out} {odoo_requirements(tmp_path)} --declared", env))
    assert constraint_lines(out) == [
        "cryptography==3.4.8",
        "requests==2.31.0",
        "urllib3==1.26.5",
        "ai-mcp-test-not-installed==1.0",
        "zope.interface<7",
        "zope.event<5",
    ]


def test_without_odoos_requirements_txt_an_installed_odoo_distribution_is_read(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", {"urllib3": "1.26.5", "idna": "2.10"})
    info = tmp_path / "site" / "odoo-18.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: odoo\nVersion: 18.0\nRequires-Dist: idna\nRequires-Dist: urllib3\n"
    )
    out = tmp_path / "constraints.txt"
    found(bash(f"odoo_constraints {sys.executable} {out} ''", env))
    assert constraint_lines(out)[0] == "urllib3==1.26.5"
    assert "from the requirements of the installed odoo 18.0" in out.read_text()
    result = bash(f"odoo_constraints {sys.executable} {out} ''", {"PYTHONPATH": ""})
    assert result.returncode == 1
    assert "set ODOO_REQUIREMENTS to the requirements.txt of the Odoo 18 source tree" in result.stderr


def test_odoos_requirements_txt_is_the_one_of_the_tree_find_odoo_found(tmp_path: Path) -> None:
    tree = odoo_tree(tmp_path / "odoo")
    env = {"AI_MCP_ODOO_SEARCH": str(tree)}
    assert found(bash("find_odoo && odoo_requirements_file", env)) == f"{tree}/requirements.txt"
    assert found(bash("find_odoo && odoo_requirements_file", {**env, "ODOO_REQUIREMENTS": "/elsewhere/r.txt"})) == (
        "/elsewhere/r.txt"
    )


def test_idna_is_the_one_pin_lifted_and_the_file_says_why() -> None:
    text = LIFTED.read_text()
    assert [line for line in text.splitlines() if line and not line.startswith("#")] == ["idna"]
    assert "idna >= 3.18" in text and "idna.core.InvalidCodepoint" in text


def test_an_installed_mcp_1_is_not_taken_for_mcp_2(tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("# the client\nmcp>=2.3,<3\nhttpx2>=2.10,<3\n")
    old = fake_site(tmp_path / "old", {"mcp": "1.30.0", "httpx2": "2.16.2"})
    new = fake_site(tmp_path / "new", {"mcp": "2.3.0", "httpx2": "2.16.2"})
    assert bash(f"_requirements_satisfied {sys.executable} {req}", old).returncode == 1
    assert bash(f"_requirements_satisfied {sys.executable} {req}", new).returncode == 0


def fake_odoo_python(path: Path, dry_run: str = "Would install idna-3.20 mcp-2.3.0", dry_run_rc: int = 0) -> Path:
    """An Odoo Python whose pip logs each call (and keeps the constraints it is given) and answers as
    told; anything else (the scripts' Python programs) runs in this test's interpreter."""
    path.write_text(
        f"""#!/usr/bin/env bash
if [[ $1 == -m && $2 == pip ]]; then
    shift 2
    echo "pip $*" >> "{path}.log"
    [[ $1 == --version ]] && exit 0
    [[ $1 == install && $2 == --help ]] && {{ echo "  --dry-run   Don't actually install anything"; exit 0; }}
    prev="" kind=install
    [[ " $* " == *" --dry-run "* ]] && kind=dry-run
    for arg in "$@"; do [[ $prev == -c ]] && cp "$arg" "{path}.$kind.constraints"; prev=$arg; done
    if [[ $kind == dry-run ]]; then
        cat <<'EOF'
{dry_run}
EOF
        exit {dry_run_rc}
    fi
    exit 0
fi
exec {sys.executable} "$@"
"""
    )
    path.chmod(0o755)
    return path


def pip_calls(path: Path) -> list[str]:
    log = Path(f"{path}.log")
    return [" ".join(line.split()[:2]) for line in log.read_text().splitlines()] if log.exists() else []


def test_install_resolves_first_uninstalls_the_adapters_then_installs_beside_odoos_pins(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", INSTALLED)
    python = fake_odoo_python(tmp_path / "python")
    req = tmp_path / "requirements.txt"
    req.write_text("mcp>=2.3,<3\nhttpx2>=2.10,<3\n")
    result = bash(f"install_into_odoo_python {python} {req} {odoo_requirements(tmp_path)}", env)
    assert result.returncode == 0, result.stderr
    assert pip_calls(python) == [
        "pip --version",
        "pip install",  # --help: does this pip have --dry-run
        "pip install",  # --dry-run
        "pip uninstall",
        "pip install",
        "pip check",
    ]
    log = Path(f"{python}.log").read_text().splitlines()
    assert "--dry-run" in log[2] and "--yes" in log[3] and log[3].endswith("langchain-mcp-adapters")
    assert f"-r {req}" in log[4] and "--dry-run" not in log[4]
    assert "requirements: pip installs: idna-3.20 mcp-2.3.0" in result.stdout
    assert (
        f"uninstalling langchain-mcp-adapters 0.3.2 from {python}: ai_mcp no longer uses it, and it requires mcp<2"
        in result.stdout
    )
    assert "but idna (" in result.stdout and "lifted.txt says why" in result.stdout
    held = constraint_lines(Path(f"{python}.install.constraints"))
    assert "cryptography==41.0.7" in held and "urllib3==1.26.5" in held
    assert not [line for line in held if line.startswith(("idna", "mcp", "httpx2"))]


def test_nothing_is_installed_when_satisfied_and_no_retired_package_is_left(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", {**INSTALLED, "mcp": "2.3.0", "httpx2": "2.16.2"})
    req = tmp_path / "requirements.txt"
    req.write_text("mcp>=2.3,<3\nhttpx2>=2.10,<3\n")
    python = fake_odoo_python(tmp_path / "python")
    found(bash(f"install_into_odoo_python {python} {req} {odoo_requirements(tmp_path)}", env))
    # mcp 2.3 is there, but so is the adapter that pins mcp<2: it goes
    assert "pip uninstall" in pip_calls(python)

    satisfied = {k: v for k, v in INSTALLED.items() if k != "langchain-mcp-adapters"}
    env = fake_site(tmp_path / "site2", {**satisfied, "mcp": "2.3.0", "httpx2": "2.16.2"})
    python = fake_odoo_python(tmp_path / "python2")
    out = found(bash(f"install_into_odoo_python {python} {req} {odoo_requirements(tmp_path)}", env))
    assert out == f"requirements: {req.name} already satisfied in {python}"
    assert pip_calls(python) == []


# pip 23's answer when a requirement needs more than one of Odoo's pins allows
CONFLICT = """\
Collecting authlib<2,>=1.9.5 (from -r requirements.txt (line 3))
ERROR: Cannot install -r requirements.txt (line 3) because these package versions have conflicting dependencies.

The conflict is caused by:
    authlib 1.9.10 depends on cryptography>=45.0.1
    authlib 1.9.6 depends on cryptography>=45.0.1
    authlib 1.9.5 depends on cryptography>=45.0.1
    The user requested (constraint) cryptography==41.0.7

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/"""


def test_a_requirement_that_would_move_an_odoo_pin_is_named_with_the_fix_and_nothing_changes(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", INSTALLED)
    python = fake_odoo_python(tmp_path / "python", dry_run=CONFLICT, dry_run_rc=1)
    req = tmp_path / "requirements.txt"
    req.write_text("mcp>=2.3,<3\nauthlib>=1.9.5,<2\n")
    result = bash(f"install_into_odoo_python {python} {req} {odoo_requirements(tmp_path)}", env)
    assert result.returncode == 1
    assert (
        f"requirements: requirements.txt cannot be installed into {python} without moving the pin "
        "cryptography==41.0.7 (Odoo pins cryptography==3.4.8):\n"
        "    authlib 1.9.10 depends on cryptography>=45.0.1 (and 2 earlier versions)\n"
        "    The user requested (constraint) cryptography==41.0.7\n"
        f"  fix: if Odoo 18 works with the version asked for, add cryptography to {LIFTED} with the reason;"
    ) in result.stderr
    assert pip_calls(python) == ["pip --version", "pip install", "pip install"], "no uninstall, no install"


def test_the_pins_check_resolves_afresh_against_odoos_declared_pins(tmp_path: Path) -> None:
    env = fake_site(tmp_path / "site", INSTALLED)
    python = fake_odoo_python(tmp_path / "python")
    req = tmp_path / "requirements.txt"
    req.write_text("mcp>=2.3,<3\n")
    result = bash(f"odoo_pins_check {python} {req} {odoo_requirements(tmp_path)}", env)
    assert result.returncode == 0, result.stderr
    assert "requirements.txt resolves beside Odoo's declared pins" in result.stdout
    dry_run = Path(f"{python}.log").read_text().splitlines()[-1]
    assert "--dry-run --ignore-installed" in dry_run
    assert "cryptography==3.4.8" in constraint_lines(Path(f"{python}.dry-run.constraints"))

    python = fake_odoo_python(tmp_path / "conflict", dry_run=CONFLICT.replace("41.0.7", "3.4.8"), dry_run_rc=1)
    result = bash(f"odoo_pins_check {python} {req} {odoo_requirements(tmp_path)}", env)
    assert result.returncode == 1
    assert (
        f"cannot be installed beside the pins of a new Odoo 18 venv for {python} without moving the pin "
        "cryptography==3.4.8 (Odoo pins cryptography==3.4.8)"
    ) in result.stderr


# -- scripts/run's PostgreSQL steps follow odoo-bin's --db_* options ---------------------------


def test_the_scripts_postgresql_steps_go_where_odoo_bins_db_options_point() -> None:
    said = found(
        bash(
            "postgres_env_from_odoo_args --dev=xml --db_host=db.internal --db_port 5433 -r odoo -w s3cret\n"
            'echo "$PGHOST $PGPORT $PGUSER $PGPASSWORD"'
        )
    )
    assert said == "db.internal 5433 odoo s3cret"
    assert found(bash('postgres_env_from_odoo_args --db_user=alice --db_password=pw; echo "$PGUSER $PGPASSWORD"')) == (
        "alice pw"
    )


def postgres_tools(folder: Path, ready: bool) -> dict[str, str]:
    """PATH with PostgreSQL's client tools, su and sudo faked: each logs its call; none connects."""
    calls = folder / "calls"
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("pg_isready", "psql", "pg_lsclusters", "pg_ctlcluster", "su", "sudo", "createuser", "service"):
        rc = 0 if tool == "pg_isready" and ready else 1
        fake_python(bin_dir / tool, f'echo "{tool} $*" >> {calls}; exit {rc}')
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls)}


@pytest.mark.parametrize(
    ("options", "ready", "said"),
    [
        ("--db_host=db.internal", False, "PostgreSQL at db.internal (--db_host) does not answer"),
        ("--db_host=db.internal", True, "cannot connect to PostgreSQL at db.internal as"),
        ("--db_user=odoo", True, "cannot connect to PostgreSQL at the local socket as odoo"),
    ],
)
def test_a_postgresql_named_by_odoo_options_is_never_started_nor_given_a_role(
    tmp_path: Path, options: str, ready: bool, said: str
) -> None:
    env = postgres_tools(tmp_path, ready)
    result = bash(f"postgres_env_from_odoo_args {options}; ensure_postgres", env)
    assert result.returncode == 1
    assert said in result.stderr
    calls = Path(env["CALLS"]).read_text()
    for starts_or_creates in ("pg_ctlcluster", "su ", "sudo ", "createuser", "service "):
        assert starts_or_creates not in calls, calls


def serving(port: int) -> subprocess.Popen[bytes]:
    """A server on 127.0.0.1:port, once it answers."""
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.05)
    server.kill()
    raise AssertionError(f"nothing answers on port {port}")


def test_a_restart_does_not_adopt_the_example_server_of_an_odoo_that_just_died() -> None:
    """The example server of a killed run exits within a second of its Odoo: scripts/run waits to see
    whether the port it finds answering is released before it uses it, and starts its own if so."""
    run = (ROOT / "scripts" / "run").read_text()
    assert 'port_open "$EXAMPLE_PORT" && ! port_released "$EXAMPLE_PORT"' in run
    define = run[run.index("port_open() {") : run.index("# The example MCP server")]
    check = f"ODOO_PY={sys.executable}\n{define}\n"

    port = free_port()
    leaving = serving(port)
    threading.Timer(0.5, leaving.kill).start()  # its Odoo died: it goes within a second
    try:
        assert bash(check + f"port_open {port} && port_released {port}").returncode == 0
    finally:
        leaving.kill()
        leaving.wait()

    port = free_port()
    staying = serving(port)
    try:
        assert bash(check + f"port_open {port} && ! port_released {port}").returncode == 0, "one that stays is used"
    finally:
        staying.kill()
        staying.wait()
