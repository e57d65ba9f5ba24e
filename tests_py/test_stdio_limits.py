"""A stdio server's process: the limits it runs under, and what it said when it could not start.

Odoo limits its own worker's address space (`limit_memory_hard`, RLIMIT_AS, 2.5 GiB by default) and
CPU time (`limit_time_cpu`): a child inherits both, and a Node server dies at its first WebAssembly
memory, which reserves about 10 GiB of address space. The hub below runs in a process limited as an
Odoo worker is, and starts testing/limits_server.py, a real MCP server that reports its limits and
takes 3 GiB of address space.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST_RETRY

from services.errors import ErrorCode, McpError
from services.mcp import McpHub, stderr_tail, telling_line
from services.mcp.transport import STDERR_TAIL_BYTES, STDERR_TAIL_LINES
from services.server_spec import build_server_spec

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "testing" / "limits_server.py"
ODOO_LIMIT_MEMORY_HARD = 2684354560  # Odoo 18's default limit_memory_hard, in bytes
ODOO_LIMIT_TIME_CPU = 600
MIB = 1024 * 1024

# The hub in a process of its own, limited as Odoo limits a worker (soft limits only, as Odoo sets
# them): it calls the server's tools and prints what they answered.
HUB_UNDER_ODOO_LIMITS = """
import json, sys
from services.mcp.hub import get_hub
from services.server_spec import build_server_spec

spec = build_server_spec(**json.loads(sys.argv[1]))
hub = get_hub()
answers = {
    "limits": hub.run(hub.acall_tool(spec, "limits", {})).parts[-1].data,
    "reserve": hub.run(hub.acall_tool(spec, "reserve", {"mib": int(sys.argv[2])})).text_for_model(),
}
print(json.dumps(answers))
"""


def limits_spec(key: str, *extra: str, **fields: Any) -> dict[str, Any]:
    return {
        "key": key,
        "name": fields.pop("name", key),
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVER), *extra],
        **fields,
    }


def limit_as_odoo_does() -> None:
    for limit, soft in ((resource.RLIMIT_AS, ODOO_LIMIT_MEMORY_HARD), (resource.RLIMIT_CPU, ODOO_LIMIT_TIME_CPU)):
        _soft, hard = resource.getrlimit(limit)
        resource.setrlimit(limit, (soft, hard))


def call_under_odoo_limits(spec: dict[str, Any], reserve_mib: int) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", HUB_UNDER_ODOO_LIMITS, json.dumps(spec), str(reserve_mib)],
        preexec_fn=limit_as_odoo_does,  # noqa: PLW1509 - the limits must be set in the child, before it starts
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def hard_limit(which: int) -> int | None:
    hard = resource.getrlimit(which)[1]
    return None if hard == resource.RLIM_INFINITY else hard


def test_a_stdio_server_is_not_held_to_the_memory_and_cpu_limits_of_odoos_worker() -> None:
    answers = call_under_odoo_limits(limits_spec("free"), reserve_mib=3072)
    assert answers["limits"]["address_space"] == hard_limit(resource.RLIMIT_AS)
    assert answers["limits"]["cpu"] == hard_limit(resource.RLIMIT_CPU)
    # 3 GiB of address space, more than the worker may have: what Node's WebAssembly needs
    assert answers["reserve"] == "took 3072 MiB"


def test_the_memory_limit_set_on_a_server_bounds_what_it_writes_not_what_it_reserves() -> None:
    answers = call_under_odoo_limits(limits_spec("bounded", memory_limit_mb=512), reserve_mib=1024)
    assert answers["limits"]["data"] == 512 * MIB
    assert answers["limits"]["address_space"] == hard_limit(resource.RLIMIT_AS)
    assert answers["reserve"] == "out of memory for 1024 MiB"
    # the limit is the launcher's, never an environment variable the server sees
    assert "AI_MCP_MEMORY_LIMIT" not in json.dumps(answers)


def test_a_server_that_crashes_at_start_shows_its_stack_trace_to_the_admin_and_the_log(
    hub: McpHub, caplog: pytest.LogCaptureFixture
) -> None:
    spec = build_server_spec(**limits_spec("crashy", "--crash", name="sheet-music"), retry=FAST_RETRY)
    with caplog.at_level(logging.WARNING, logger="services"), pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(spec))
    error = info.value
    assert error.code is ErrorCode.MCP_UNREACHABLE
    assert "limits-server" not in error.message, "the output is the admin's, the message reaches users"
    # the line that says why, not the version Node (and this server) ends a crash's report with
    assert telling_line(error.output.splitlines()) == (
        "RuntimeError: cannot load the configuration from /etc/limits-server.json: out of memory"
    )
    # a command has no URL to check; and no memory limit was set, so none is blamed
    assert "URL" not in error.advice and "command" in error.advice
    assert "memory limit" not in error.message
    output = (error.output or "").splitlines()
    assert output[0] == "limits-server: starting" and output[-1] == "limits-server v1.0.0"
    assert "Traceback (most recent call last):" in output
    assert "RuntimeError: cannot load the configuration from /etc/limits-server.json: out of memory" in output
    assert sum('limits_server.py", line' in line for line in output) == 3  # the whole stack
    logged = [r.getMessage() for r in caplog.records if "sheet-music" in r.getMessage()]
    assert len(logged) == 1, "logged once, when given up on, not at each try"
    assert "RuntimeError: cannot load the configuration" in logged[0]
    assert "Traceback (most recent call last):" in logged[0]


def test_a_server_stopped_by_its_memory_limit_at_start_says_so(hub: McpHub) -> None:
    spec = build_server_spec(
        **limits_spec("greedy", "--exhaust", name="Heatmap", memory_limit_mb=256), retry=FAST_RETRY
    )
    with pytest.raises(McpError) as info:
        hub.run(hub.atest_connection(spec))
    error = info.value
    assert error.message == "Heatmap ran out of memory at the memory limit of 256 MB set on it."
    assert telling_line(error.output.splitlines()) == "MemoryError"
    assert "memory limit" in error.advice and "URL" not in error.advice
    assert "MemoryError" in (error.output or "").splitlines()


def test_the_tail_holds_the_last_lines_within_its_bounds() -> None:
    lines = [f"line {n}" for n in range(100)]
    assert stderr_tail(lines).splitlines() == lines[-STDERR_TAIL_LINES:]
    wide = ["x" * 1000 for _ in range(STDERR_TAIL_LINES)]
    kept = stderr_tail(wide)
    assert len(kept.encode()) <= STDERR_TAIL_BYTES and kept.splitlines() == wide[-len(kept.splitlines()) :]
    endless = stderr_tail(["a", "é" * STDERR_TAIL_BYTES + "the end"])
    assert len(endless.encode()) <= STDERR_TAIL_BYTES and endless.endswith("the end")
