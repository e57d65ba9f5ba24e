"""The window actions that the forms' buttons and the wizards' steps return, built in one place so
that every smart button opens its list alike and every wizard step keeps its dialog alike."""

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


def reopen_wizard(wizard, name: str) -> dict:
    """`wizard` (one transient record) shown again in its dialog, titled `name`, after a step that
    changed it: the dialog stays open on the same record with the same context."""
    return {
        "type": "ir.actions.act_window",
        "name": name,
        "res_model": wizard._name,
        "res_id": wizard.id,
        "view_mode": "form",
        "views": [(False, "form")],
        "target": "new",
        "context": dict(wizard.env.context),
    }
