"""Runs in place of a stdio MCP server's command, then becomes it.

mcp's `stdio_client` always merges its default environment (HOME, USER, SHELL, ...) of the Odoo
process into the child's. A stdio server must get only what the admin configured plus PATH, so
the hub starts this file with the configured variables and the list of names to keep; it drops
everything else and execs the real command. exec keeps the pid, so ending the session still ends
the server, and no shell is involved, so nothing like ${VAR} is ever expanded.
"""

from __future__ import annotations

import json
import os
import sys

KEEP_VAR = "AI_MCP_KEEP_ENV"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("ai_mcp stdio launcher: no command given\n")
        return 2
    keep = set(json.loads(os.environ.get(KEEP_VAR, "[]"))) | {"PATH"}
    env = {name: os.environ[name] for name in keep if name in os.environ}
    try:
        os.execvpe(argv[1], argv[1:], env)
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[1]!r}: {exc.strerror}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
