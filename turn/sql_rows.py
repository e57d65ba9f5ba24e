"""Rows a running turn writes several times a round, in SQL instead of through the ORM.

The ORM's create and write cost about 1 ms of CPU each (defaults, computes, the flush), paid by
every turn of the process several times a round (as profiled with bench_load). These
helpers write plain stored fields only, converted as the ORM converts them, with the log columns
the ORM would set; the model's cache for the record is dropped so a later read sees the row.
"""

from __future__ import annotations

from typing import Any

from odoo import fields
from odoo.tools import SQL


def insert_row(model, values: dict[str, Any]) -> int:
    """Inserts one row of `model` with `values` (plain stored fields); returns its id."""
    row = _columns(model, values)
    row.update(create_uid=model.env.uid, create_date=row["write_date"])
    model.env.cr.execute(
        SQL(
            "INSERT INTO %s (%s) VALUES (%s) RETURNING id",
            SQL.identifier(model._table),
            SQL(", ").join(map(SQL.identifier, row)),
            SQL(", ").join(row.values()),
        )
    )
    return model.env.cr.fetchone()[0]


def update_row(model, record_id: int, values: dict[str, Any]) -> None:
    """Writes `values` (plain stored fields) on the row `record_id` of `model`."""
    # an ORM write of the same transaction must not land after this one
    model.flush_model()
    row = _columns(model, values)
    model.env.cr.execute(
        SQL(
            "UPDATE %s SET %s WHERE id = %s",
            SQL.identifier(model._table),
            SQL(", ").join(SQL("%s = %s", SQL.identifier(name), value) for name, value in row.items()),
            record_id,
        )
    )
    model.browse(record_id).invalidate_recordset([*values, "write_uid", "write_date"])


def _columns(model, values: dict[str, Any]) -> dict[str, Any]:
    row = {name: model._fields[name].convert_to_column_insert(value, model) for name, value in values.items()}
    row.update(write_uid=model.env.uid, write_date=fields.Datetime.now())
    return row
