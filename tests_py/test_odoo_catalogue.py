"""This Odoo's catalogue: every tool has a schema a model can be offered, writes are marked
destructive (so they ask for approval by default), and a result stays within 16 KB for the model
with how to get the rest, each record a link to its form."""

from __future__ import annotations

from services import json_schema
from services.odoo_catalogue import CATALOGUE, RESULT_BYTES, catalogue_infos, records_result


def test_every_tool_is_offerable_and_writes_are_destructive():
    infos = {info.name: info for info in catalogue_infos()}
    assert len(infos) == len(CATALOGUE) == 12
    for info in infos.values():
        assert info.schema_problem() is None, info.name
        json_schema.validator(info.input_schema)
    assert infos["odoo_search"].annotations.read_only
    for name in ("odoo_create", "odoo_update", "odoo_archive", "odoo_delete", "odoo_call_button"):
        assert infos[name].annotations.destructive and not infos[name].annotations.read_only


def test_a_large_table_is_cut_at_16_kb_with_the_next_offset():
    records = [
        {"id": i, "display_name": f"Partner {i}", "url": f"/odoo/res.partner/{i}", "name": "x" * 180}
        for i in range(1, 501)
    ]
    result = records_result("res.partner", "Contact", records, [("name", "Name")], count=100_000)
    text = result.text_for_model()
    assert len(text.encode()) <= RESULT_BYTES
    data = result.parts[1].data
    assert data["count"] == 100_000 and data["returned"] < 500
    assert f"offset={data['returned']}" in text
    assert "| [Partner 1](/odoo/res.partner/1) |" in text


def test_a_cell_cannot_break_the_table_nor_the_link():
    records = [{"id": 7, "display_name": "a|b] (x)\nc", "url": "/odoo/res.partner/7", "note": "1|2"}]
    text = records_result("res.partner", "Contact", records, [("note", "Note")], count=1).text_for_model()
    row = text.splitlines()[3]
    assert row == "| [a\\|b\\] (x) c](/odoo/res.partner/7) | 1\\|2 |"
