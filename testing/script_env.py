"""The environment a test gives the project's scripts: the caller's, less every variable the scripts read.

The scripts (scripts/lib.sh, scripts/run, scripts/test) read `AI_MCP_*` and `ODOO_*` variables (an
Odoo source, a cache folder, which series, which Odoo) and `CI`. A developer or CI may have any of
them set as the README documents; a test that inherits them checks that machine's choices instead of
the decision it names. Each test therefore starts from this environment and sets what it depends on.
"""

from __future__ import annotations

import os

READ_BY_SCRIPTS = ("AI_MCP_", "ODOO_")
ALSO_READ = frozenset({"CI"})


def script_env(**values: str) -> dict[str, str]:
    """os.environ without the scripts' variables, then `values`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(READ_BY_SCRIPTS) and name not in ALSO_READ
    }
    env.update(values)
    return env
