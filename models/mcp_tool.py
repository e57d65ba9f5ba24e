"""mcp.tool: one tool an MCP server (mcp.server) offers, as its last sync found it (name,
description, schemas, the server's hints, its MCP App), with the choices an administrator keeps
across syncs: enabled, requires approval, checked read-only, free for apps. A tool whose
description or schemas changed since it was approved is given to no model until reviewed.
Assistants (ai.assistant) offer the enabled, approved tools of their servers to the model; tool
calls are audited in ai.tool.call."""

import json

from odoo import api, fields, models

from ..odoo_compat import Constraint
from ..selections import TOOL_VISIBILITIES
from ..services.tool_info import ToolAnnotations, ToolInfo

# what a turn reads of a tool it may offer (ai.assistant._system_tools, _tool_bindings, _tool_info)
TURN_FIELDS = [
    "name",
    "title",
    "description",
    "server_id",
    "enabled",
    "review_state",
    "requires_approval",
    "marked_read_only",
    "app_approval_free",
    "input_schema",
    "output_schema",
    "read_only_hint",
    "destructive_hint",
    "idempotent_hint",
    "open_world_hint",
    "icon",
    "app_uri",
    "visibility",
]


class McpTool(models.Model):
    _name = "mcp.tool"
    _description = "MCP Tool"
    _order = "server_id, name, id"

    # -- identity (from discovery) ---------------------------------------------------------------
    name = fields.Char(required=True, readonly=True, help="The tool's name on its MCP server.")
    title = fields.Char(readonly=True)
    description = fields.Text(readonly=True, help="What the model is told about the tool.")
    server_id = fields.Many2one("mcp.server", string="Server", required=True, ondelete="cascade", index=True)
    active = fields.Boolean(default=True, help="Cleared when the server no longer offers the tool.")
    scope = fields.Selection(related="server_id.scope", store=True, index=True)
    owner_id = fields.Many2one(related="server_id.owner_id", store=True, index=True)
    company_id = fields.Many2one(related="server_id.company_id", store=True, index=True)

    # -- the admin's choices (kept across syncs) -------------------------------------------------
    enabled = fields.Boolean(default=True, help="Disabled tools are never given to a model.")
    requires_approval = fields.Boolean(
        help="The user must allow each call before it runs (once, or for the rest of the conversation). On by "
        "default unless the server marks the tool read-only or explicitly non-destructive.",
    )
    marked_read_only = fields.Boolean(
        string="Read-only (checked)",
        help="An administrator checked that this tool only reads: no call of it asks for approval, whoever makes "
        "it, and the audit says it ran as read-only. The server's own read-only hint only picks the default of "
        "Requires Approval.",
    )
    app_approval_free = fields.Boolean(
        string="Apps Call Without Asking",
        help="The calls its server's apps make (an app polling for fresh data, say) run without asking, even "
        "when the model's calls need approval.",
    )

    # -- schemas ---------------------------------------------------------------------------------
    input_schema = fields.Text(readonly=True, help="JSON Schema of the arguments.")
    output_schema = fields.Text(readonly=True, help="JSON Schema of the structured result, if any.")
    input_schema_pretty = fields.Text(string="Input Schema (formatted)", compute="_compute_schema_pretty")
    output_schema_pretty = fields.Text(string="Output Schema (formatted)", compute="_compute_schema_pretty")
    schema_problem = fields.Char(
        string="Schema problem",
        compute="_compute_schema_problem",
        help="Why no model is given this tool: its input schema cannot be used as it is (invalid, or referring "
        "outside itself, which is never fetched) until its server fixes it.",
    )

    # -- annotations (hints from the server: untrusted, they only pick defaults) ------------------
    read_only_hint = fields.Boolean(string="Read-only Hint", readonly=True)
    destructive_hint = fields.Boolean(string="Destructive", readonly=True)
    idempotent_hint = fields.Boolean(string="Idempotent", readonly=True)
    open_world_hint = fields.Boolean(string="Open World", readonly=True)
    icon = fields.Char(readonly=True, help="The tool's icon as its server gives it (inline images only).")

    # -- MCP Apps (from discovery) -----------------------------------------------------------------
    app_uri = fields.Char(
        string="App",
        readonly=True,
        help="The ui:// resource of the tool's interactive app, shown in the tool's block in the chat.",
    )
    visibility = fields.Selection(
        TOOL_VISIBILITIES,
        default="model_app",
        required=True,
        readonly=True,
        help="Who may call the tool, as its server declares: an app-only tool is never offered to a model "
        "and is called only by its server's apps.",
    )

    # -- rug-pull guard --------------------------------------------------------------------------
    content_hash = fields.Char(readonly=True, copy=False, help="Digest of the description and schemas as last synced.")
    approved_hash = fields.Char(readonly=True, copy=False, help="Digest of the description and schemas last approved.")
    review_state = fields.Selection(
        [("approved", "Approved"), ("changed", "Changed — review needed")],
        compute="_compute_review_state",
        store=True,
        index=True,
        help="A tool whose description or schemas changed since approval is given to no model until an "
        "administrator reviews and accepts the change.",
    )

    _server_name_uniq = Constraint("unique(server_id, name)", "A server offers each tool name once.")

    @api.depends("name", "title", "server_id.name")
    def _compute_display_name(self):
        for tool in self:
            tool.display_name = f"{tool.server_id.name} / {tool.name}" if tool.server_id else tool.name

    @api.depends("input_schema", "output_schema")
    def _compute_schema_pretty(self):
        for tool in self:
            tool.input_schema_pretty = _pretty(tool.input_schema)
            tool.output_schema_pretty = _pretty(tool.output_schema)

    @api.depends("input_schema")
    def _compute_schema_problem(self):
        for tool in self:
            schema = json.loads(tool.input_schema) if tool.input_schema else {"type": "object"}
            tool.schema_problem = ToolInfo(name=tool.name or "", input_schema=schema).schema_problem() or False

    @api.depends("content_hash", "approved_hash")
    def _compute_review_state(self):
        for tool in self:
            tool.review_state = "approved" if (tool.content_hash or "") == (tool.approved_hash or "") else "changed"

    # -- CRUD ------------------------------------------------------------------------------------

    @api.model_create_multi
    def create(self, vals_list):
        for vals in vals_list:
            if "requires_approval" not in vals:
                vals["requires_approval"] = self._default_requires_approval(
                    ToolAnnotations(read_only=vals.get("read_only_hint"), destructive=vals.get("destructive_hint"))
                )
        return super().create(vals_list)

    def write(self, vals):
        result = super().write(vals)
        if not self.env.su:
            # record rules are checked before a write; check again so nobody moves a tool out of their reach
            self.check_access("write")
        return result

    # -- discovery -------------------------------------------------------------------------------

    @api.model
    def _default_requires_approval(self, annotations):
        """Approval unless the server says the tool only reads or explicitly does no harm (MCP's own
        default for a tool without hints is 'may be destructive')."""
        if annotations.read_only:
            return False
        if annotations.destructive is not None:
            return bool(annotations.destructive)
        return True

    @api.model
    def _values_from_info(self, info):
        """Field values for a discovered ToolInfo (everything but the admin's choices)."""
        hints = info.annotations
        return {
            "title": info.title or False,
            "description": info.description or False,
            "input_schema": json.dumps(info.input_schema),
            "output_schema": json.dumps(info.output_schema) if info.output_schema is not None else False,
            "read_only_hint": bool(hints.read_only),
            "destructive_hint": bool(hints.destructive),
            "idempotent_hint": bool(hints.idempotent),
            "open_world_hint": bool(hints.open_world),
            "content_hash": info.content_hash(),
            "icon": info.icon or False,
            "app_uri": info.app_uri or False,
            "visibility": info.visibility,
        }

    def _tool_info(self):
        """The ToolInfo the model is given: what was stored at the last sync."""
        self.ensure_one()
        return ToolInfo(
            name=self.name,
            title=self.title or None,
            description=self.description or "",
            input_schema=json.loads(self.input_schema) if self.input_schema else {"type": "object", "properties": {}},
            output_schema=json.loads(self.output_schema) if self.output_schema else None,
            annotations=ToolAnnotations(
                read_only=self.read_only_hint,
                destructive=self.destructive_hint,
                idempotent=self.idempotent_hint,
                open_world=self.open_world_hint,
            ),
            icon=self.icon or self.server_id.server_icon or None,
            app_uri=self.app_uri or None,
            visibility=self.visibility or "model_app",
        )

    @api.model
    def _enabled_on(self, servers, excluded_ids=()):
        """{server: its active, enabled tools but `excluded_ids`, by name} for each of `servers`.

        A turn reads these of every tool it may offer; fetched in one query, for the tools it may
        offer only, instead of every tool of every server field by field."""
        tools = self.sudo().search_fetch(
            [("server_id", "in", servers._origin.ids), ("enabled", "=", True), ("id", "not in", list(excluded_ids))],
            TURN_FIELDS,
        )
        by_server = tools.grouped("server_id")
        return {server: by_server.get(server._origin, tools.browse()).sorted("name") for server in servers}

    # -- actions ---------------------------------------------------------------------------------

    def action_accept_change(self):
        """The admin reviewed the current description and schemas: the tool may be used again."""
        for server, tools in self.grouped("server_id").items():
            pending = tools.filtered(lambda t: t.review_state == "changed")
            for tool in pending:
                tool.approved_hash = tool.content_hash
            if pending:
                server.message_post(
                    body=self.env._(
                        "%(user)s accepted the current description and schemas of: %(tools)s",
                        user=self.env.user.name,
                        tools=", ".join(pending.mapped("name")),
                    )
                )
        return True

    def action_try(self):
        self.ensure_one()
        return {
            "type": "ir.actions.act_window",
            "name": self.env._("Try %s", self.name),
            "res_model": "mcp.tool.try.wizard",
            "view_mode": "form",
            "target": "new",
            "context": {"default_tool_id": self.id},
        }


def _pretty(text):
    if not text:
        return False
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text
