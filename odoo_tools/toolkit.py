"""The tools of This Odoo over one environment of the conversation's user. What the assistant may
use is the administrator's (ai.assistant.odoo.access); what the user may see and change is Odoo's:
access rights, record rules, field groups and companies apply to every call as they apply to her in
the web client, since the environment is hers and never superuser. Names the model sends (models,
fields, operators, methods) are checked before Odoo reads them, so that a refusal says what to fix."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from odoo import Command
from odoo.exceptions import AccessError

from ..services.events import RecordChange
from ..services.odoo_catalogue import (
    AggregateInput,
    ArchiveInput,
    ButtonInput,
    CreateInput,
    IdsInput,
    ModelInput,
    NameSearchInput,
    OdooTool,
    ReadInput,
    SearchInput,
    ServerActionInput,
    UpdateInput,
    groups_result,
    record_url,
    records_result,
    text_result,
)
from ..services.tool_result import ToolResult
from .values import group_value, shown, shown_value

OPERATORS = frozenset(
    {
        "=",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        "in",
        "not in",
        "like",
        "ilike",
        "not like",
        "not ilike",
        "=like",
        "=ilike",
        "child_of",
        "parent_of",
    }
)
AGGREGATORS = frozenset({"sum", "avg", "min", "max", "count", "count_distinct", "bool_and", "bool_or"})
GRANULARITIES = frozenset({"day", "week", "month", "quarter", "year"})
DEFAULT_COLUMNS = 6
MAX_CHANGES = 60
FIELD_ATTRIBUTES = ["string", "type", "selection", "relation", "readonly", "required", "store", "help"]
_ORDER_TERM = re.compile(r"^\s*([\w.:]+)(?:\s+(asc|desc))?\s*$", re.IGNORECASE)


class Refused(Exception):
    """A call this user or assistant may not make, or made wrongly: the model reads `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Access:
    """One Odoo Models line of the assistant, as plain data: `line_id` reads its server actions."""

    line_id: int
    label: str  # the model's name in the user's language
    access: str
    button_names: str


@dataclass
class TurnReads:
    """What a turn read once for all its calls (executor.py keeps it; plain data, so one call's
    thread hands it to the next). The user's groups, language and the assistant's lines do not
    change within a turn as she sees it; the next turn reads them again."""

    # the fields this user may read of each model, as fields_get said at the turn's first call of
    # them (None: a field she may not read, or none of that name)
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the models whose every field `fields` holds
    described: set[str] = field(default_factory=set)
    # the assistant's Odoo Models lines by model, read at the turn's first call
    accesses: dict[str, Access] | None = None


class Toolkit:
    """This Odoo's tools on one cursor, as one user. `turn`: what the turn read so far, so that each
    call does not read the assistant's lines nor describe a model again; `fresh`: read the lines
    again (a change, which may run long after the turn's first call, once approved)."""

    def __init__(self, env: Any, assistant_id: int, turn: TurnReads | None = None, fresh: bool = False) -> None:
        self.env = env
        self._turn = TurnReads() if turn is None else turn
        if fresh or self._turn.accesses is None:
            self._turn.accesses = _accesses(env, assistant_id)
        self.accesses = self._turn.accesses
        self._fields = self._turn.fields

    def run(self, tool: OdooTool, arguments: Any) -> ToolResult:
        return getattr(self, f"_{tool.name}")(arguments)

    # -- what may be used ------------------------------------------------------------------------

    def _model(self, name: str, write: bool = False) -> Any:
        """The model `name` of the user's environment, when the assistant may use it (and change
        it, with `write`) and the user may read it (and change it)."""
        access = self.accesses.get(name)
        if access is None or name not in self.env:
            raise Refused(f"The model {name!r} is not available to this assistant: see odoo_list_models.")
        if write and access.access != "write":
            raise Refused(f"This assistant may read {self._label(name)} but not change it.")
        model = self.env[name]
        model.browse().check_access("read")
        if write:
            model.browse().check_access("write")
        return model

    def _label(self, name: str) -> str:
        if name in self.accesses:
            return self.accesses[name].label
        # the model's name in the user's language; sudo: ir.model is read for its label only
        return self.env["ir.model"].sudo()._get(name).name or name

    def _line(self, access: Access) -> Any:
        # sudo: the assistant's configuration is read to restrict the user, never to widen her rights
        return self.env["ai.assistant.odoo.access"].sudo().browse(access.line_id)

    def readable(self, model: Any) -> dict[str, dict[str, Any]]:
        """The fields this user may read on `model` (fields_get leaves out those of groups she is not in)."""
        if model._name not in self._turn.described:
            self._fields[model._name] = model.fields_get(attributes=FIELD_ATTRIBUTES)
            self._turn.described.add(model._name)
        return self._fields[model._name]

    def _described(self, model: Any, names: list[str]) -> dict[str, dict[str, Any] | None]:
        """`model`'s fields described so far this turn, `names` among them: fields_get of the names
        alone, as describing a whole model costs more than many a search."""
        known = self._fields.setdefault(model._name, {})
        missing = [name for name in names if name not in known]
        if missing and model._name not in self._turn.described:
            found = model.fields_get(missing, attributes=FIELD_ATTRIBUTES)
            known.update({name: found.get(name) for name in missing})
        return known

    def _field(self, model: Any, fname: str) -> dict[str, Any]:
        described = self._described(model, [fname]).get(fname)
        if described is None:
            raise Refused(f"{self._label(model._name)} has no field {fname!r} you may read: see odoo_describe_model.")
        return described

    def _path(self, model: Any, path: str) -> None:
        """A field path of a domain or a group (partner_id.country_id.code): every step readable."""
        parts = path.split(".")
        for index, part in enumerate(parts):
            if part == "id":
                continue
            described = self._field(model, part)
            if index + 1 < len(parts):
                relation = described.get("relation")
                if not relation:
                    raise Refused(f"{part!r} of {self._label(model._name)} links to no record: {path!r} is wrong.")
                model = self.env[relation]
                model.browse().check_access("read")

    def _domain(self, model: Any, domain: list[Any]) -> list[Any]:
        for term in domain:
            if term in ("&", "|", "!"):
                continue
            if not isinstance(term, (list, tuple)) or len(term) != 3 or not isinstance(term[0], str):
                raise Refused(f"Domain term {term!r} is not [field, operator, value] nor '&', '|', '!'.")
            if term[1] not in OPERATORS:
                raise Refused(f"Operator {term[1]!r} is not allowed; use one of {', '.join(sorted(OPERATORS))}.")
            self._path(model, term[0])
        return [tuple(term) if isinstance(term, list) else term for term in domain]

    def _order(self, model: Any, order: str, allowed: set[str] | None = None) -> str | None:
        terms = []
        for term in filter(None, (t.strip() for t in (order or "").split(","))):
            match = _ORDER_TERM.match(term)
            if not match:
                raise Refused(f"Order {term!r} is not 'field asc' or 'field desc'.")
            name = match.group(1)
            if allowed is not None:
                if name not in allowed:
                    raise Refused(f"Order by {name!r}: order by a group or an aggregate of this call.")
            elif name != "id" and not self._field(model, name).get("store"):
                raise Refused(f"{name!r} is not stored: order by a stored field.")
            terms.append(f"{name} {(match.group(2) or 'asc').lower()}")
        return ", ".join(terms) or None

    def _columns(self, model: Any, names: list[str]) -> list[tuple[str, str]]:
        if names:
            self._described(model, names)
            return [(name, self._field(model, name)["string"]) for name in names if name != "display_name"]
        readable = self.readable(model)
        try:
            arch = model.get_views([(False, "list")])["views"]["list"]["arch"]
            listed = [
                node.get("name")
                for node in etree.fromstring(arch).iter("field")
                if node.get("column_invisible") not in ("1", "True") and node.get("invisible") not in ("1", "True")
            ]
        except (KeyError, ValueError, etree.XMLSyntaxError):
            listed = []
        names = [n for n in dict.fromkeys(listed) if n in readable and n not in ("display_name", "name")]
        return [(name, readable[name]["string"]) for name in names[:DEFAULT_COLUMNS]]

    def _records(self, records: Any, columns: list[tuple[str, str]]) -> list[dict[str, Any]]:
        readable = self._described(records, [name for name, _label in columns])
        rows = []
        for record in records:
            row = {"id": record.id, "display_name": record.display_name, "url": record_url(record._name, record.id)}
            for name, _label in columns:
                try:
                    row[name] = shown(record, name, readable[name])
                except AccessError:
                    row[name] = "(not yours to read)"  # e.g. a linked record of a company she is not in
            rows.append(row)
        return rows

    def _browse(self, model: Any, ids: list[int], operation: str = "read") -> Any:
        records = model.browse(ids)
        existing = records.exists()
        missing = sorted(set(ids) - set(existing.ids))
        if missing:
            raise Refused(
                f"No {self._label(model._name)} with id {', '.join(map(str, missing))} (or not yours to see)."
            )
        existing.check_access(operation)
        return existing

    # -- reads -----------------------------------------------------------------------------------

    def _odoo_list_models(self, _arguments: Any) -> ToolResult:
        lines = ["| model | name | access | buttons | server actions |", "| --- | --- | --- | --- | --- |"]
        models = []
        for name, access in sorted(self.accesses.items()):
            if name not in self.env or not self.env[name].browse().has_access("read"):
                continue
            allowed = self._line(access).server_action_ids.filtered("ai_assistant_allowed")
            actions = ", ".join(f"{a.name} (id {a.id})" for a in allowed)
            lines.append(
                f"| {name} | {self._label(name)} | {access.access} | {access.button_names or ''} | {actions} |"
            )
            models.append({"model": name, "model_name": self._label(name), "access": access.access})
        if not models:
            return text_result("No Odoo model is available to this assistant for this user.", {"models": []})
        return text_result("\n".join(lines), {"models": models})

    def _odoo_describe_model(self, arguments: ModelInput) -> ToolResult:
        model = self._model(arguments.model)
        fields = []
        lines = [
            f"{self._label(model._name)} ({model._name}) fields:",
            "| field | label | type | details |",
            "| --- | --- | --- | --- |",
        ]
        for name, described in sorted(self.readable(model).items()):
            details = []
            if described.get("relation"):
                details.append(f"-> {described['relation']}")
            if described.get("selection"):
                details.append(", ".join(f"{key}={label}" for key, label in described["selection"]))
            if described.get("required"):
                details.append("required")
            if described.get("readonly"):
                details.append("read-only")
            lines.append(f"| {name} | {described.get('string')} | {described.get('type')} | {'; '.join(details)} |")
            fields.append({"name": name, **{k: described.get(k) for k in ("string", "type", "relation", "selection")}})
        access = self.accesses[model._name]
        if access.button_names:
            lines.append(f"Buttons (odoo_call_button): {access.button_names}")
        return text_result(
            "\n".join(lines), {"model": model._name, "model_name": self._label(model._name), "fields": fields}
        )

    def _odoo_name_search(self, arguments: NameSearchInput) -> ToolResult:
        model = self._model(arguments.model)
        found = model.name_search(arguments.name, limit=arguments.limit)
        records = model.browse([record_id for record_id, _name in found])
        return records_result(model._name, self._label(model._name), self._records(records, []), [], len(found))

    def _odoo_search(self, arguments: SearchInput) -> ToolResult:
        model = self._model(arguments.model)
        domain = self._domain(model, arguments.domain)
        columns = self._columns(model, arguments.fields)
        records = model.search_fetch(
            domain,
            [name for name, _label in columns],
            offset=arguments.offset,
            limit=arguments.limit,
            order=self._order(model, arguments.order),
        )
        if len(records) < arguments.limit:
            count = arguments.offset + len(records)
        else:
            count = model.search_count(domain)
        return records_result(
            model._name, self._label(model._name), self._records(records, columns), columns, count, arguments.offset
        )

    def _odoo_read(self, arguments: ReadInput) -> ToolResult:
        model = self._model(arguments.model)
        columns = (
            self._columns(model, arguments.fields)
            if arguments.fields
            else [
                (name, d["string"]) for name, d in self.readable(model).items() if d["type"] not in ("binary", "image")
            ]
        )
        records = self._browse(model, arguments.ids)
        rows = self._records(records, columns)
        return records_result(model._name, self._label(model._name), rows, columns, len(records))

    def _odoo_aggregate(self, arguments: AggregateInput) -> ToolResult:
        model = self._model(arguments.model)
        domain = self._domain(model, arguments.domain)
        for spec in arguments.groupby:
            fname, _sep, granularity = spec.partition(":")
            self._path(model, fname)
            if granularity and granularity not in GRANULARITIES:
                raise Refused(f"Group {spec!r}: a period is one of {', '.join(sorted(GRANULARITIES))}.")
        for spec in arguments.aggregates:
            if spec == "__count":
                continue
            fname, _sep, function = spec.partition(":")
            self._field(model, fname)
            if function not in AGGREGATORS:
                raise Refused(
                    f"Aggregate {spec!r}: write field:function, function one of {', '.join(sorted(AGGREGATORS))}."
                )
        order = self._order(model, arguments.order, set(arguments.groupby) | set(arguments.aggregates))
        rows = model._read_group(
            domain,
            arguments.groupby,
            arguments.aggregates,
            offset=arguments.offset,
            limit=arguments.limit,
            order=order,
        )
        readable = self._described(model, [spec.partition(":")[0] for spec in arguments.groupby])
        columns = [*arguments.groupby, *arguments.aggregates]
        groups = []
        for row in rows:
            group = {}
            for column, value in zip(columns, row, strict=True):
                if column in arguments.groupby:
                    group[column] = group_value(value, readable.get(column.partition(":")[0]))
                else:
                    group[column] = value if isinstance(value, (int, float)) else group_value(value, None)
            groups.append(group)
        return groups_result(self._label(model._name), groups, columns)

    # -- writes ----------------------------------------------------------------------------------

    def _values(self, model: Any, values: dict[str, Any]) -> dict[str, Any]:
        """`values` checked field by field (readable, not read-only) and in Odoo's write form."""
        written = {}
        for fname, value in values.items():
            described = self._field(model, fname)
            if described.get("readonly"):
                raise Refused(f"{described['string']} ({fname}) is read-only.")
            if described["type"] in ("one2many", "many2many"):
                if not (isinstance(value, list) and all(isinstance(v, int) for v in value)):
                    raise Refused(f"{described['string']} ({fname}): give the list of the linked records' ids.")
                value = [Command.set(value)]
            written[fname] = value
        return written

    def _odoo_create(self, arguments: CreateInput) -> ToolResult:
        model = self._model(arguments.model, write=True)
        record = model.create(self._values(model, arguments.values))
        return self._done(f"Created {self._label(model._name)}", record)

    def _odoo_update(self, arguments: UpdateInput) -> ToolResult:
        model = self._model(arguments.model, write=True)
        records = self._browse(model, arguments.ids, "write")
        records.write(self._values(model, arguments.values))
        return self._done(f"Updated {self._label(model._name)}", records)

    def _odoo_archive(self, arguments: ArchiveInput) -> ToolResult:
        model = self._model(arguments.model, write=True)
        if "active" not in model._fields:
            raise Refused(f"{self._label(model._name)} cannot be archived: delete instead.")
        records = self._browse(model, arguments.ids, "write")
        records.write({"active": not arguments.archive})
        return self._done("Archived" if arguments.archive else "Restored", records)

    def _odoo_delete(self, arguments: IdsInput) -> ToolResult:
        model = self._model(arguments.model, write=True)
        records = self._browse(model, arguments.ids, "unlink")
        names = ", ".join(records.mapped("display_name"))
        records.unlink()
        return text_result(f"Deleted {len(arguments.ids)} {self._label(model._name)}: {names}.")

    def _button(self, arguments: ButtonInput) -> tuple[Any, str]:
        model = self._model(arguments.model, write=True)
        method = arguments.method
        allowed = [name.strip() for name in (self.accesses[model._name].button_names or "").split(",") if name.strip()]
        if method.startswith("_") or method not in allowed:
            raise Refused(f"{method!r} is not a button this assistant may press on {self._label(model._name)}.")
        arch = model.get_views([(False, "form")])["views"]["form"]["arch"]
        buttons = {
            node.get("name"): node.get("string") or node.get("name")
            for node in etree.fromstring(arch).iter("button")
            if node.get("type") == "object"
        }
        if method not in buttons:
            raise Refused(f"{method!r} is not a button of the {self._label(model._name)} form you see.")
        return model, buttons[method]

    def _odoo_call_button(self, arguments: ButtonInput) -> ToolResult:
        model, label = self._button(arguments)
        records = self._browse(model, arguments.ids, "write")
        outcome = getattr(records, arguments.method)()
        said = f" It opens {outcome.get('name') or outcome.get('res_model')}." if isinstance(outcome, dict) else ""
        return self._done(f"Pressed {label}", records, said)

    def _server_action(self, arguments: ServerActionInput) -> tuple[Any, Any]:
        model = self._model(arguments.model, write=True)
        action = self._line(self.accesses[model._name]).server_action_ids.filtered(
            lambda a: a.id == arguments.action_id and a.ai_assistant_allowed and a.model_id.model == model._name
        )
        if not action:
            raise Refused(f"Server action {arguments.action_id} is not one this assistant may run on {model._name}.")
        return model, self.env["ir.actions.server"].browse(action.id)

    def _odoo_run_server_action(self, arguments: ServerActionInput) -> ToolResult:
        model, action = self._server_action(arguments)
        records = self._browse(model, arguments.ids, "write")
        action.with_context(active_model=model._name, active_ids=records.ids, active_id=records[:1].id).run()
        return self._done(f"Ran {action.name}", records)

    def _done(self, what: str, records: Any, more: str = "") -> ToolResult:
        links = ", ".join(f"[{r.display_name}]({record_url(r._name, r.id)})" for r in records)
        data = {
            "model": records._name,
            "model_name": self._label(records._name),
            "records": [
                {"id": r.id, "display_name": r.display_name, "url": record_url(r._name, r.id)} for r in records
            ],
            "count": len(records),
            "returned": len(records),
            "more": "",
        }
        return text_result(f"{what}: {links}.{more}", data)

    # -- what a write would change (the approval) ------------------------------------------------

    def changes(self, tool: OdooTool, arguments: Any) -> list[RecordChange]:
        changes = getattr(self, f"_changes_{tool.name}")(arguments)
        return changes[:MAX_CHANGES]

    def _changes_odoo_create(self, arguments: CreateInput) -> list[RecordChange]:
        model = self._model(arguments.model, write=True)
        self._values(model, arguments.values)
        record = f"New {self._label(model._name)}"
        return [
            RecordChange(
                record=record,
                field=self._field(model, f)["string"],
                new=shown_value(self.env, self._field(model, f), v),
            )
            for f, v in arguments.values.items()
        ]

    def _changes_odoo_update(self, arguments: UpdateInput) -> list[RecordChange]:
        model = self._model(arguments.model, write=True)
        self._values(model, arguments.values)
        records = self._browse(model, arguments.ids, "write")
        changes = []
        for record in records:
            for fname, value in arguments.values.items():
                described = self._field(model, fname)
                old, new = shown(record, fname, described), shown_value(self.env, described, value)
                if old != new:
                    changes.append(
                        RecordChange(record=record.display_name, field=described["string"], old=old, new=new)
                    )
        return changes

    def _changes_odoo_archive(self, arguments: ArchiveInput) -> list[RecordChange]:
        model = self._model(arguments.model, write=True)
        records = self._browse(model, arguments.ids, "write")
        label = self.readable(model).get("active", {}).get("string", "Active")
        old, new = ("yes", "no") if arguments.archive else ("no", "yes")
        return [RecordChange(record=r.display_name, field=label, old=old, new=new) for r in records]

    def _changes_odoo_delete(self, arguments: IdsInput) -> list[RecordChange]:
        model = self._model(arguments.model, write=True)
        records = self._browse(model, arguments.ids, "unlink")
        return [RecordChange(record=r.display_name, field="", old="", new="deleted") for r in records]

    def _changes_odoo_call_button(self, arguments: ButtonInput) -> list[RecordChange]:
        model, label = self._button(arguments)
        records = self._browse(model, arguments.ids, "write")
        return [RecordChange(record=r.display_name, field=label, new="pressed") for r in records]

    def _changes_odoo_run_server_action(self, arguments: ServerActionInput) -> list[RecordChange]:
        model, action = self._server_action(arguments)
        records = self._browse(model, arguments.ids, "write")
        return [RecordChange(record=r.display_name, field=action.name, new="run") for r in records]


def _accesses(env: Any, assistant_id: int) -> dict[str, Access]:
    """The assistant's Odoo Models lines by model, in two queries (the lines, their models)."""
    # sudo: the assistant's configuration is read to restrict the user, never to widen her rights
    lines = (
        env["ai.assistant.odoo.access"]
        .sudo()
        .search_fetch([("assistant_id", "=", assistant_id)], ["model_id", "access", "button_names"])
    )
    return {
        line.model_id.model: Access(line.id, line.model_id.name, line.access, line.button_names or "") for line in lines
    }
