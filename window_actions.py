"""The window actions that the forms' buttons return, built in one place so that every smart
button opens its list alike."""

from __future__ import annotations


def related_list(record, name: str, res_model: str, field: str, context: dict | None = None) -> dict:
    """The list of the `res_model` rows whose `field` is `record` (one record), titled `name`; a row
    created there belongs to `record` unless `context` replaces that default."""
    record.ensure_one()
    return {
        "type": "ir.actions.act_window",
        "name": name,
        "res_model": res_model,
        "view_mode": "list,form",
        "domain": [(field, "=", record.id)],
        "context": {f"default_{field}": record.id} if context is None else context,
    }
