"""Tool and server icons (MCP 2025-11-25), as the chat may show them.

Only inline data URIs of a raster image type are kept: a remote icon URL would be fetched by every
reader's browser, telling the icon's host who reads which conversation, and an SVG may carry
script. The first acceptable icon wins; larger ones are dropped rather than stored.
"""

from __future__ import annotations

import base64
import binascii
import re

from mcp import types as mcp_types

ICON_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_ICON_CHARS = 64 * 1024
_DATA_URI = re.compile(r"data:(?P<mime>[\w/+.-]+);base64,(?P<data>[A-Za-z0-9+/=\s]+)", re.IGNORECASE)


def display_icon(icons: list[mcp_types.Icon] | None) -> str | None:
    for icon in icons or ():
        found = _DATA_URI.fullmatch(icon.src.strip()) if len(icon.src) <= MAX_ICON_CHARS else None
        if found is None or found["mime"].lower() not in ICON_TYPES:
            continue
        data = re.sub(r"\s+", "", found["data"])
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            continue
        return f"data:{found['mime'].lower()};base64,{data}"
    return None
