"""The tools of "This Odoo", the built-in tool source: their typed inputs (JSON Schemas the model
fills), their descriptions, and how their results are written for the model (a bounded Markdown
table whose rows link to the records, plus the structured content the chat renders). Pure: the
Odoo side (odoo_tools/) runs them as the conversation's user."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .tool_info import ToolAnnotations, ToolInfo
from .tool_result import StructuredPart, TextPart, ToolResult

# what one result may weigh for the model, whatever the table's size: rows beyond it are left
# for the next page, with how to get them
RESULT_BYTES = 16_000
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
CELL_CHARS = 200
ODOO_VERSION = "1"

Domain = list[Any]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoInput(_Input):
    pass


class ModelInput(_Input):
    model: str = Field(description="Technical model name, e.g. res.partner (see odoo_list_models).")


class NameSearchInput(ModelInput):
    name: str = Field("", description="Text to look for in the records' names.")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)


class SearchInput(ModelInput):
    domain: Domain = Field(
        default_factory=list,
        description='Odoo domain, e.g. [["is_company", "=", true], ["country_id.code", "=", "BE"]]; '
        '"&", "|", "!" in prefix notation.',
    )
    fields: list[str] = Field(default_factory=list, description="Fields to return; empty: a few main fields.")
    order: str = Field("", description='e.g. "name asc, id desc"')
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


class ReadInput(ModelInput):
    ids: list[int] = Field(min_length=1, max_length=MAX_LIMIT)
    fields: list[str] = Field(default_factory=list, description="Fields to return; empty: every readable field.")


class AggregateInput(ModelInput):
    domain: Domain = Field(default_factory=list)
    groupby: list[str] = Field(
        default_factory=list,
        description='Fields to group by; a date by period as "date:month" (day, week, month, quarter, year).',
    )
    aggregates: list[str] = Field(
        default_factory=lambda: ["__count"],
        description='e.g. ["__count", "amount:sum", "price:avg"] (sum, avg, min, max, count, count_distinct).',
    )
    order: str = Field("", description='e.g. "amount:sum desc"')
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


class CreateInput(ModelInput):
    values: dict[str, Any] = Field(description="Field values of the new record.")


class UpdateInput(ModelInput):
    ids: list[int] = Field(min_length=1, max_length=MAX_LIMIT)
    values: dict[str, Any] = Field(description="Field values to write on every record of ids.")


class IdsInput(ModelInput):
    ids: list[int] = Field(min_length=1, max_length=MAX_LIMIT)


class ArchiveInput(IdsInput):
    archive: bool = Field(True, description="false restores archived records.")


class ButtonInput(ModelInput):
    ids: list[int] = Field(min_length=1, max_length=MAX_LIMIT)
    method: str = Field(description="The button's method, as odoo_describe_model lists it.")


class ServerActionInput(_Input):
    action_id: int = Field(description="Id of the server action, as odoo_list_models lists it.")
    model: str
    ids: list[int] = Field(min_length=1, max_length=MAX_LIMIT)


Kind = Literal["read", "write"]


class OdooTool(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    input: type[_Input]
    kind: Kind

    def info(self) -> ToolInfo:
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return ToolInfo(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schema,
            annotations=ToolAnnotations(
                read_only=self.kind == "read", destructive=self.kind == "write", idempotent=self.kind == "read"
            ),
        )


CATALOGUE: tuple[OdooTool, ...] = (
    OdooTool(
        name="odoo_list_models",
        title="List Odoo models",
        description="The Odoo models you may use here, with whether you may change them, their buttons and "
        "server actions. Call it first.",
        input=NoInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_describe_model",
        title="Describe an Odoo model",
        description="The fields of a model the user may read: label, type, selection values, relation.",
        input=ModelInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_name_search",
        title="Find Odoo records by name",
        description="Records of a model whose name matches, with their ids.",
        input=NameSearchInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_search",
        title="Search Odoo records",
        description="Records of a model matching a domain, as the user sees them, with their total count.",
        input=SearchInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_read",
        title="Read Odoo records",
        description="Fields of records given by id.",
        input=ReadInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_aggregate",
        title="Aggregate Odoo records",
        description="Counts, sums, averages of a model's records, grouped by fields (computed in the database).",
        input=AggregateInput,
        kind="read",
    ),
    OdooTool(
        name="odoo_create",
        title="Create an Odoo record",
        description="Create one record; the user approves it first.",
        input=CreateInput,
        kind="write",
    ),
    OdooTool(
        name="odoo_update",
        title="Update Odoo records",
        description="Write field values on records; the user approves it first.",
        input=UpdateInput,
        kind="write",
    ),
    OdooTool(
        name="odoo_archive",
        title="Archive Odoo records",
        description="Archive (or restore) records; the user approves it first.",
        input=ArchiveInput,
        kind="write",
    ),
    OdooTool(
        name="odoo_delete",
        title="Delete Odoo records",
        description="Delete records for good; the user approves it first.",
        input=IdsInput,
        kind="write",
    ),
    OdooTool(
        name="odoo_call_button",
        title="Press a button of an Odoo form",
        description="Run a button of the records' form, as the user would click it; the user approves it first.",
        input=ButtonInput,
        kind="write",
    ),
    OdooTool(
        name="odoo_run_server_action",
        title="Run an Odoo server action",
        description="Run a server action the administrator allowed for assistants; the user approves it first.",
        input=ServerActionInput,
        kind="write",
    ),
)
TOOLS = {tool.name: tool for tool in CATALOGUE}


def catalogue_infos() -> list[ToolInfo]:
    return [tool.info() for tool in CATALOGUE]


def record_url(model: str, record_id: int) -> str:
    """The web client's link to a record; both series route /odoo/<model>/<id>."""
    return f"/odoo/{model}/{record_id}"


def _cell(value: Any) -> str:
    text = "" if value is None or value is False else str(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _link(record: dict[str, Any]) -> str:
    name = _cell(record.get("display_name") or f"#{record['id']}").replace("[", "\\[").replace("]", "\\]")
    return f"[{name}]({record['url']})"


def records_result(
    model: str,
    model_name: str,
    records: list[dict[str, Any]],
    columns: list[tuple[str, str]],
    count: int,
    offset: int = 0,
    limit_bytes: int = RESULT_BYTES,
) -> ToolResult:
    """A list of records for the model: a Markdown table (first cell: the record's link), cut at
    `limit_bytes` with how many more there are and how to get them; `records` carry id,
    display_name, url and the values of `columns` ([(field, label)]) as the user reads them."""
    header = "| " + " | ".join([model_name, *(_cell(label) for _f, label in columns)]) + " |"
    lines = [header, "|" + " --- |" * (len(columns) + 1)]
    size = sum(len(line.encode()) + 1 for line in lines)
    kept: list[dict[str, Any]] = []
    for record in records:
        row = "| " + " | ".join([_link(record), *(_cell(record.get(f)) for f, _label in columns)]) + " |"
        if size + len(row.encode()) + 1 > limit_bytes - 400:
            break
        lines.append(row)
        size += len(row.encode()) + 1
        kept.append(record)
    shown_to = offset + len(kept)
    more = ""
    if shown_to < count:
        more = f"{count - shown_to} more: call again with offset={shown_to}"
        if len(kept) < len(records):
            more += " (or ask for fewer fields)"
    summary = f"{count} {model_name} record(s) match; showing {offset + 1 if kept else 0}-{shown_to}."
    text = "\n".join([summary, *lines] + ([more + "."] if more else []))
    structured = {
        "model": model,
        "model_name": model_name,
        "records": kept,
        "count": count,
        "returned": len(kept),
        "more": more,
    }
    return ToolResult(parts=[TextPart(text=text), StructuredPart(data=structured)])


def groups_result(
    model_name: str, groups: list[dict[str, Any]], columns: list[str], limit_bytes: int = RESULT_BYTES
) -> ToolResult:
    """Aggregated groups as a Markdown table, bounded like records_result."""
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + " --- |" * len(columns)]
    size = sum(len(line.encode()) + 1 for line in lines)
    kept = []
    for group in groups:
        row = "| " + " | ".join(_cell(group.get(c)) for c in columns) + " |"
        if size + len(row.encode()) + 1 > limit_bytes - 400:
            break
        lines.append(row)
        size += len(row.encode()) + 1
        kept.append(group)
    text = "\n".join([f"{len(groups)} group(s) of {model_name}:", *lines])
    if len(kept) < len(groups):
        text += f"\n{len(groups) - len(kept)} more groups not shown: narrow the domain or use offset."
    return ToolResult(parts=[TextPart(text=text), StructuredPart(data={"model_name": model_name, "groups": kept})])


def text_result(text: str, data: dict[str, Any] | None = None, limit_bytes: int = RESULT_BYTES) -> ToolResult:
    """A plain answer, cut at `limit_bytes`."""
    encoded = text.encode()
    if len(encoded) > limit_bytes:
        text = encoded[: limit_bytes - 100].decode(errors="ignore") + "\n[... cut: ask for less ...]"
    parts: list[Any] = [TextPart(text=text)]
    if data is not None and len(json.dumps(data)) <= limit_bytes * 4:
        parts.append(StructuredPart(data=data))
    return ToolResult(parts=parts)


def error_result(message: str) -> ToolResult:
    return ToolResult(parts=[TextPart(text=message)], is_error=True)
