"""A script of migrations/ loaded as Odoo loads it when updating, for tests that run it on their own
database: the script's module, named after its folder and file (the logger it logs through)."""

import importlib.util
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


def migration_module(version: str, script: str):
    """migrations/<version>/<script>.py as a module."""
    name = "ai_mcp_migration_" + f"{version}_{script}".replace(".", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, MIGRATIONS / version / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
