"""Runs in place of a stdio MCP server's command, then becomes it.

mcp's `stdio_client` always merges its default environment (HOME, USER, SHELL, ...) of the Odoo
process into the child's. A stdio server must get only what the admin configured plus PATH, so
the hub starts this file with the configured variables and the list of names to keep; it drops
everything else and execs the real command. exec keeps the pid, so ending the session still ends
the server, and no shell is involved, so nothing like ${VAR} is ever expanded.

The child would also inherit the limits Odoo sets on its own worker: `limit_memory_hard` as the
address-space limit (RLIMIT_AS, 2.5 GiB by default) and `limit_time_cpu` as the CPU-time limit.
Address space is not memory: Node reserves about 10 GiB of it for each WebAssembly memory, so a
Node server under Odoo's limit dies at its first WebAssembly use. The server gets the limits of a
process of its own instead (each soft limit back up to its hard limit, which Odoo leaves as it
found it), and, when the admin set one, a memory limit as RLIMIT_DATA: it counts the memory a
process writes to, not the address space it reserves.
"""

from __future__ import annotations

import json
import os
import resource
import sys

KEEP_VAR = "AI_MCP_KEEP_ENV"
# the server's memory limit in bytes, when the admin set one; never passed on to the server
MEMORY_VAR = "AI_MCP_MEMORY_LIMIT"
# the limits an Odoo worker sets on itself, which are not the server's
WORKER_LIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU)


def release_worker_limits() -> None:
    for limit in WORKER_LIMITS:
        _soft, hard = resource.getrlimit(limit)
        resource.setrlimit(limit, (hard, hard))


def apply_memory_limit(limit_bytes: int) -> None:
    """RLIMIT_DATA at `limit_bytes`, or at the hard limit when that is lower."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("ai_mcp stdio launcher: no command given\n")
        return 2
    keep = set(json.loads(os.environ.get(KEEP_VAR, "[]"))) | {"PATH"}
    env = {name: os.environ[name] for name in keep - {MEMORY_VAR} if name in os.environ}
    try:
        release_worker_limits()
        if os.environ.get(MEMORY_VAR):
            apply_memory_limit(int(os.environ[MEMORY_VAR]))
        os.execvpe(argv[1], argv[1:], env)
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[1]!r}: {exc.strerror}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
