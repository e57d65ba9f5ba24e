"""The addon's own manifest, read without Odoo: services/ must not import odoo."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from mcp import types as mcp_types

MANIFEST = Path(__file__).resolve().parent.parent / "__manifest__.py"


@functools.cache
def manifest() -> dict[str, Any]:
    """The addon's `__manifest__.py`, a Python literal, as Odoo reads it."""
    return ast.literal_eval(MANIFEST.read_text(encoding="utf-8"))


def addon_version() -> str:
    """The manifest's version, e.g. 18.0.1.3.0."""
    return manifest()["version"]


# how the client introduces itself to servers: the addon's name and its manifest version
CLIENT_INFO = mcp_types.Implementation(name="odoo-ai_mcp", version=addon_version())
