"""Import MCP servers from the `mcpServers` JSON that Claude Desktop, Cline and Claude Code share.

"Preview" reads every entry on its own (services/mcp/servers_json.import_mcp_servers): one that
cannot be imported gets its error, the others are ready. "Create" makes system servers of the
selected entries, each in a savepoint so that one refused by the server model's rules (stdio
not allowed, a bad URL) is reported on its line and the others are still created. Secrets go
through the server's write-only fields, and the pasted text is cleared once the servers exist.
"""

import json
import shlex

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError

from ..services.errors import ConfigError
from ..services.mcp import import_mcp_servers
from ..services.server_spec import AuthType, Transport
from ..window_actions import reopen_wizard


class McpServerImportWizard(models.TransientModel):
    _name = "mcp.server.import.wizard"
    _description = "Import MCP servers"

    config_text = fields.Text(
        "mcpServers JSON",
        help="Paste the configuration of another MCP client, e.g. "
        '{"mcpServers": {"files": {"command": "npx", '
        '"args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]}}}',
    )
    state = fields.Selection(
        [("paste", "Paste"), ("preview", "Preview"), ("done", "Done")], default="paste", readonly=True
    )
    error = fields.Text(readonly=True)
    line_ids = fields.One2many("mcp.server.import.line", "wizard_id", string="Servers")
    ready_count = fields.Integer("Servers to create", compute="_compute_counts")
    created_count = fields.Integer("Servers created", compute="_compute_counts")
    failed_count = fields.Integer("Not imported", compute="_compute_counts")

    @api.depends("line_ids.status", "line_ids.selected")
    def _compute_counts(self):
        for wizard in self:
            lines = wizard.line_ids
            wizard.ready_count = len(lines.filtered(lambda line: line.status == "ready" and line.selected))
            wizard.created_count = len(lines.filtered(lambda line: line.status == "created"))
            wizard.failed_count = len(lines.filtered(lambda line: line.status in ("invalid", "failed")))

    # -- actions -----------------------------------------------------------------------------------
    def action_preview(self):
        self.ensure_one()
        self.line_ids.unlink()
        try:
            entries = self._entries()
        except ConfigError as exc:
            self.write({"state": "paste", "error": exc.message})
            return self._reopen()
        existing = set(
            self.env["mcp.server"].with_context(active_test=False).search([("scope", "=", "system")]).mapped("name")
        )
        lines = [self._line_values(seq, entry, existing) for seq, entry in enumerate(entries)]
        self.write(
            {
                "state": "preview",
                "error": False if lines else self.env._("The configuration lists no server."),
                "line_ids": [(0, 0, values) for values in lines],
            }
        )
        return self._reopen()

    def action_back(self):
        self.ensure_one()
        self.line_ids.unlink()
        self.write({"state": "paste", "error": False})
        return self._reopen()

    def action_create(self):
        self.ensure_one()
        if self.state != "preview":
            raise UserError(self.env._("Preview the servers before creating them."))
        try:
            entries = {entry.name: entry for entry in self._entries()}
        except ConfigError as exc:
            raise UserError(exc.message) from None
        Server = self.env["mcp.server"]
        for line in self.line_ids.filtered(lambda line: line.status == "ready" and line.selected):
            entry = entries.get(line.name)
            if entry is None or entry.spec is None:
                line.write({"status": "failed", "error": self.env._("The entry is no longer in the pasted text.")})
                continue
            try:
                with self.env.cr.savepoint():
                    server = Server.create(_server_values(entry))
            except (ValidationError, UserError, AccessError, ValueError) as exc:
                line.write({"status": "failed", "error": _message(exc)})
                continue
            line.write({"status": "created", "server_id": server.id, "error": False})
        # the pasted text holds the secrets in clear: keep it no longer than needed
        self.write({"state": "done", "config_text": False})
        return self._reopen()

    def action_open_servers(self):
        self.ensure_one()
        servers = self.line_ids.server_id
        return {
            "type": "ir.actions.act_window",
            "name": self.env._("Imported MCP servers"),
            "res_model": "mcp.server",
            "view_mode": "list,form",
            "views": [(False, "list"), (False, "form")],
            "domain": [("id", "in", servers.ids)],
            "context": {"active_test": False},
        }

    # -- helpers -----------------------------------------------------------------------------------
    def _entries(self):
        text = (self.config_text or "").strip()
        if not text:
            raise ConfigError("mcpServers", self.env._("paste the JSON configuration first"))
        return import_mcp_servers(text)

    def _line_values(self, sequence, entry, existing):
        values = {
            "sequence": sequence,
            "name": entry.name,
            "disabled": entry.disabled,
            "always_allow": ", ".join(entry.always_allow),
            "ignored_keys": ", ".join(entry.ignored_keys),
        }
        if entry.spec is None:
            values.update(status="invalid", selected=False, error=entry.error)
            return values
        spec = entry.spec
        values.update(
            status="ready",
            transport=spec.transport.value,
            target=_target(spec),
            secrets=_secrets_summary(spec),
        )
        if entry.name in existing:
            values.update(
                selected=False,
                note=self.env._("A server with this name exists already; select the line to add another."),
            )
        return values

    def _reopen(self):
        return reopen_wizard(self, self.env._("Import MCP servers"))


def _target(spec):
    if spec.transport is Transport.STDIO:
        return shlex.join([spec.command or "", *spec.args])
    return spec.url or ""


def _secrets_summary(spec):
    parts = []
    if spec.token:
        parts.append("Bearer token" if spec.auth_type is AuthType.BEARER else "API key")
    if spec.headers:
        parts.append("headers: " + ", ".join(sorted(spec.headers)))
    if spec.env:
        parts.append("env: " + ", ".join(sorted(spec.env)))
    return "; ".join(parts)


def _server_values(entry):
    """mcp.server values for one imported entry: a system server, secrets through the write-only
    fields (api_key, headers, env), which encrypt them."""
    spec = entry.spec
    values = {
        "name": spec.name,
        "scope": "system",
        "transport": spec.transport.value,
        "active": not entry.disabled,
        "connect_timeout": spec.connect_timeout,
        "call_timeout": spec.call_timeout,
    }
    if spec.transport is Transport.STDIO:
        values.update(command=spec.command, args="\n".join(spec.args), cwd=spec.cwd or False)
        if spec.env:
            values["env_vars"] = json.dumps(spec.process_env())
        return values
    values["url"] = spec.url
    if spec.headers:
        # a server sends either its token or its custom headers: a bearer token that came with
        # other headers travels as one of them
        values.update(auth_type=AuthType.HEADERS.value, headers=json.dumps(spec.http_headers()))
        return values
    values["auth_type"] = spec.auth_type.value
    if spec.token:
        values["api_key"] = spec.token.get_secret_value()
    if spec.auth_type is AuthType.API_KEY:
        values["api_key_header"] = spec.api_key_header
    return values


def _message(exc):
    if isinstance(exc, (UserError, ValidationError, AccessError)):
        return exc.args[0] if exc.args else str(exc)
    return str(exc)
