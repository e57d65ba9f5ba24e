"""Field values as the user reads them in the web client: names of linked records, selection
labels, dates in her language, date-times in her time zone, amounts with their currency."""

from __future__ import annotations

from typing import Any

from odoo.tools import format_date, format_datetime, formatLang, html2plaintext

MANY_SHOWN = 5


def shown(record: Any, fname: str, description: dict[str, Any]) -> str:
    """`record`'s value of `fname` as text; `description` is the field's fields_get entry."""
    value = record[fname]
    kind = description.get("type")
    if kind == "many2one":
        return value.display_name or ""
    if kind in ("one2many", "many2many"):
        names = value[:MANY_SHOWN].mapped("display_name")
        extra = f" (+{len(value) - MANY_SHOWN})" if len(value) > MANY_SHOWN else ""
        return ", ".join(names) + extra
    if value is False or value is None:
        return "" if kind != "boolean" else "no"
    if kind == "boolean":
        return "yes"
    if kind == "selection":
        return dict(description.get("selection") or []).get(value, str(value))
    if kind == "date":
        return format_date(record.env, value)
    if kind == "datetime":
        return format_datetime(record.env, value)
    if kind == "monetary":
        currency = record._fields[fname].get_currency_field(record)
        return formatLang(record.env, value, currency_obj=record[currency] if currency else None)
    if kind == "float":
        return formatLang(record.env, value)
    if kind in ("binary", "image"):
        return "(file)"
    if kind == "html":
        return html2plaintext(value or "")
    return str(value)


def shown_value(env: Any, description: dict[str, Any], value: Any) -> str:
    """A value the model sent for a field of `description`, as the user reads it (the approval)."""
    kind = description.get("type")
    if value is None or value is False:
        return "" if kind != "boolean" else "no"
    relation = description.get("relation")
    if kind == "many2one" and isinstance(value, int):
        return env[relation].browse(value).exists().display_name or f"#{value}"
    if kind in ("one2many", "many2many") and isinstance(value, list) and all(isinstance(v, int) for v in value):
        return ", ".join(env[relation].browse(value).exists().mapped("display_name"))
    if kind == "selection":
        return dict(description.get("selection") or []).get(value, str(value))
    if kind == "boolean":
        return "yes" if value else "no"
    return str(value)


def group_value(value: Any, description: dict[str, Any] | None) -> str:
    """A group's key from _read_group as text (a record, a date of a period, a value)."""
    if hasattr(value, "_name"):
        return value.display_name or ""
    if value is False or value is None:
        return "None"
    if description and description.get("type") == "selection":
        return dict(description.get("selection") or []).get(value, str(value))
    return str(value)
