"""`scripts/run` on a machine where it finds no Odoo: it makes one from AI_MCP_ODOO_SOURCE, installs
the module, serves the login page, and the demo assistant answers with a tool of the example server.

The source is an archive laid out as Odoo's nightly source archive (one top folder, no odoo-bin,
the addons inside the odoo package), made from the Odoo tree of the series (AI_MCP_ODOO_SERIES, 18 by
default; 19 the same way) the scripts find (scripts/lib.sh find_odoo: ODOO_BIN, /opt/odoo18 or
/opt/odoo19, or the one .ci/run made in the cache, which is CI's; all its
addons: installing base needs every addon's manifest for the module categories), or from
AI_MCP_TEST_ODOO_TREE. Minutes long: pip installs Odoo's requirements into a new venv. Skipped, with
the reason, where there is no Odoo tree of the series to make it from or no PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.mcp_servers import free_port
from testing.odoo_http import WebClient, wait_until_serving
from testing.script_env import script_env
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn

ROOT = Path(__file__).resolve().parents[1]
MAKE_TIMEOUT = 1500.0
SERIES = os.environ.get("AI_MCP_ODOO_SERIES") or "18"


def found_odoo_tree() -> Path | None:
    """AI_MCP_TEST_ODOO_TREE, else the source tree of the Odoo of the series that find_odoo finds here."""
    if os.environ.get("AI_MCP_TEST_ODOO_TREE"):
        return Path(os.environ["AI_MCP_TEST_ODOO_TREE"])
    found = subprocess.run(
        ["bash", "-c", f'source "{ROOT}/scripts/lib.sh" && find_odoo && printf %s "$ODOO_ROOT"'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return Path(found.stdout) if found.returncode == 0 and found.stdout else None


ODOO_TREE = found_odoo_tree()

pytestmark = [
    pytest.mark.timeout(MAKE_TIMEOUT + 300),
    pytest.mark.skipif(
        ODOO_TREE is None or not (ODOO_TREE / "odoo" / "release.py").is_file(),
        reason=f"no Odoo {SERIES} source tree to make an archive from (found: {ODOO_TREE or 'none'})",
    ),
    pytest.mark.skipif(shutil.which("pg_isready") is None, reason="no PostgreSQL (pg_isready) on this machine"),
]


def nightly_archive(tree: Path, into: Path) -> Path:
    """`tree` (either layout) as Odoo's nightly archive lays it out."""
    top = f"odoo-{SERIES}.0.post20261122"
    archive = into / f"odoo_{SERIES}.0.latest.tar"
    with tarfile.open(archive, "w") as tar:
        for name in ("odoo", "setup", "requirements.txt", "setup.py", "setup.cfg", "LICENSE"):
            if (tree / name).exists():
                tar.add(
                    tree / name,
                    arcname=f"{top}/{name}",
                    filter=lambda info: None if "__pycache__" in info.name else info,
                )
        # a git checkout's addons; a tree made from the nightly archive has them inside odoo/ already
        for addon in sorted((tree / "addons").iterdir()) if (tree / "addons").is_dir() else ():
            tar.add(
                addon,
                arcname=f"{top}/odoo/addons/{addon.name}",
                filter=lambda info: None if "__pycache__" in info.name else info,
            )
    return archive


def demo_model(body: dict) -> Turn:
    """Calls the example server's calculator, then says what it returned."""
    results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
    if results:
        return Turn(text=f"The calculator says {results[-1]}.")
    calculate = next(t["function"]["name"] for t in body.get("tools", []) if "calculate" in t["function"]["name"])
    return Turn(tool_calls=(ToolCall(calculate, {"expression": "6 * 7"}),))


@pytest.fixture
def bare_machine(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a machine where find_odoo sees no Odoo but the one get_odoo makes."""
    cache = tmp_path / "cache"
    (tmp_path / "no-odoo-here").mkdir()
    db = f"ai_mcp_get_odoo_{os.getpid()}"
    # the series under test stays the caller's choice; every other variable of the scripts is set here
    env = script_env(AI_MCP_ODOO_SERIES=SERIES)
    env.update(
        {
            "AI_MCP_ODOO_SOURCE": str(nightly_archive(ODOO_TREE or Path(), tmp_path)),
            "AI_MCP_CACHE_DIR": str(cache),
            # the README's "no Odoo": folders without one, so what scripts/run makes is found only because it made it
            "AI_MCP_ODOO_SEARCH": str(tmp_path / "no-odoo-here"),
            "AI_MCP_DB": db,
            "AI_MCP_PORT": str(free_port()),
            "AI_MCP_EXAMPLE_PORT": str(free_port()),
            "AI_MCP_DATA_DIR": str(tmp_path / "data"),
        }
    )
    yield env
    subprocess.run(["dropdb", "--if-exists", db], capture_output=True, check=False)


def start_and_chat(env: dict[str, str], log_path: Path, timeout: float) -> tuple[dict, str, float]:
    """scripts/run with `env` until it serves, then one demo chat as admin: (turn, output, seconds to serve)."""
    port = int(env["AI_MCP_PORT"])
    with log_path.open("wb") as log:
        started = time.monotonic()
        run = subprocess.Popen(
            [str(ROOT / "scripts" / "run")],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_until_serving(run, port, str(log_path), timeout)
            served_in = time.monotonic() - started
            user = WebClient(f"http://127.0.0.1:{port}", env["AI_MCP_DB"], "admin", "admin")
            assistant = user.call("ai.assistant", "search", [("name", "=", "Demo Assistant")])
            turn = user.stream({"assistant_id": assistant[0], "message": "What is 6 times 7?"}, timeout=120)
        finally:
            os.killpg(run.pid, signal.SIGTERM)
            run.wait(60)
    return turn, log_path.read_text(errors="replace"), served_in


def test_scripts_run_makes_odoo_from_a_local_archive_and_the_demo_chat_works(
    bare_machine: dict[str, str], tmp_path: Path
) -> None:
    with ScriptedLLM(responder=demo_model) as llm:
        env = {
            **bare_machine,
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test-key",
            "OPENAI_MODEL": "scripted-model",
        }
        turn, output, made_in = start_and_chat(env, tmp_path / "run.log", MAKE_TIMEOUT)
    print(f"scripts/run made Odoo {SERIES} and served /web/login in {made_in:.0f} s")  # pylint: disable=print-used

    cache = Path(bare_machine["AI_MCP_CACHE_DIR"]) / f"odoo{SERIES}"
    assert f"Odoo {SERIES}: unpacking {bare_machine['AI_MCP_ODOO_SOURCE']}" in output
    assert f"Odoo {SERIES}: ready in {cache}/src" in output
    assert f"Odoo {SERIES}: {cache}/src/odoo-bin (Python {cache}/src/.venv/bin/python)" in output
    # the address is said once Odoo serves it: after the install, once the login page answers
    db = bare_machine["AI_MCP_DB"]
    serving = output.index("serving on http://")
    assert output.index(f"database {db}: installing ai_mcp") < output.index("Example MCP server synced") < serving
    assert output.index("HTTP service (werkzeug) running") < serving
    assert output.count("example MCP server") == 1, "the example server is announced once"
    assert (Path(bare_machine["AI_MCP_CACHE_DIR"]) / "addons" / "ai_mcp").resolve() == ROOT
    # nothing asks Odoo's IAP service to enrich the demo company at the first login
    enrich = subprocess.run(
        ["psql", "-d", db, "-Atqc", "SELECT bool_and(iap_enrich_auto_done) FROM res_company"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert enrich.stdout.strip() == "t", enrich.stderr
    assert turn["error"] is None, turn["error"]
    events = [event for _, event in turn["events"]]
    results = [e.data for e in events if e.event == "tool_result"]
    assert [(r["ok"], r["model_text"]) for r in results] == [(True, "42")]
    assert "The calculator says 42." in "".join(e.data["delta"] for e in events if e.event == "text")

    # the next run reuses it, and its Python can start the gevent worker (the pins are in)
    check = f'source {ROOT}/scripts/lib.sh && get_odoo && use_made_odoo && odoo_gevent_check "$ODOO_PY"'
    again = subprocess.run(["bash", "-c", check], env=bare_machine, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert (
        again.stdout.strip() == f"Odoo {SERIES}: reusing {cache}/src (made from {bare_machine['AI_MCP_ODOO_SOURCE']})"
    )

    # a second start with another provider (a key set after the first start): the demo uses it
    with ScriptedLLM(responder=demo_model, api_key="second-key") as second:
        env = {
            **bare_machine,
            "OPENAI_BASE_URL": second.base_url,
            "OPENAI_API_KEY": "second-key",
            "OPENAI_MODEL": "second-model",
        }
        turn, output, _served_in = start_and_chat(env, tmp_path / "run-again.log", 300)
        assert "database " + bare_machine["AI_MCP_DB"] + ": updating ai_mcp" in output
        assert turn["error"] is None, turn["error"]
        assert second.requests and {r["model"] for r in second.requests} == {"second-model"}
