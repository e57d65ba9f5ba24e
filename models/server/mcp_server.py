"""mcp.server: an MCP server Odoo connects to, and how: its transport (streamable HTTP, SSE or a
stdio process), authentication and write-only secrets (ai.secret.mixin), timeouts, and the outcome
of its last connection. A system server is configured by AI managers and given to assistants
(ai.assistant.mcp_server_ids); a user server belongs to a cloud service (cloud.service) and serves
only that service's conversations. The tools it offers are mcp.tool records.

This file holds the configuration and its checks; the other aspects of the model are the files
next to it (see this package's __init__.py): the spec the hub connects with, the sync of its
tools, OAuth sign-in, its MCP Apps' permissions."""

import json
import logging
import os
import shlex

from odoo import api, fields, models
from odoo.exceptions import AccessError, ValidationError
from odoo.tools import str2bool

from ...companies import linked_from_elsewhere, named_with_company
from ...hub_process import running_hub
from ...notify import config_error_text
from ...selections import AUTH_TYPES, LOG_LEVELS, TRANSPORTS
from ...services.env_vars import parse_env_json
from ...services.errors import AiMcpError, ConfigError, _lt
from ...services.http_validation import check_url, parse_headers_json
from ...services.limits import CALL_TIME_CAP, CALL_TIMEOUT, CONNECT_TIMEOUT, QUESTION_TIMEOUT, LimitedField
from ...services.mcp import MODERN_PROTOCOL_VERSIONS, stderr_tail
from ...services.url_guard import ALLOWED_HOSTS_PARAM, check_public_url
from ...window_actions import related_list

_logger = logging.getLogger(__name__)

ALLOW_STDIO_PARAM = "ai_mcp.allow_stdio"
# a change to one of these makes "connected" stale: the server must be tested again
CONNECTION_FIELDS = frozenset(
    {
        "transport",
        "url",
        "auth_type",
        "api_key_header",
        "api_key",
        "headers",
        "command",
        "args",
        "env_vars",
        "cwd",
        "oauth_token_scope",
        "oauth_flow",
        "oauth_client_id",
        "oauth_client_auth",
        "oauth_client_secret",
        "oauth_private_key",
        "oauth_scopes",
        "oauth_workload_token",
    }
)

# what makes a server run a program, or which program: only system administrators set these on a
# stdio server (the fields of _check_transport, and the environment the program gets)
STDIO_FIELDS = frozenset({"transport", "command", "args", "env_vars", "cwd", "scope", "memory_limit_mb"})

# each limited setting, its bounds and the message of its constraint
LIMITS = (
    LimitedField(
        "connect_timeout",
        CONNECT_TIMEOUT,
        _lt("%(server)s: the connect timeout must be between %(low)s and %(high)s seconds."),
    ),
    LimitedField(
        "call_timeout", CALL_TIMEOUT, _lt("%(server)s: the call timeout must be between %(low)s and %(high)s seconds.")
    ),
    LimitedField(
        "call_time_cap",
        CALL_TIME_CAP,
        _lt("%(server)s: the call time cap must be between %(low)s and %(high)s seconds (a day)."),
    ),
    LimitedField(
        "question_timeout",
        QUESTION_TIMEOUT,
        _lt("%(server)s: the question timeout must be between %(low)s and %(high)s seconds (a day)."),
    ),
)


class McpServer(models.Model):
    _name = "mcp.server"
    _description = "MCP Server"
    _inherit = ["mail.thread", "ai.secret.mixin"]
    _order = "sequence, name, id"
    _secret_fields = ("api_key", "headers", "env_vars")
    _check_company_auto = True

    # -- identity --------------------------------------------------------------------------------
    name = fields.Char(required=True, tracking=True)
    description = fields.Text()
    active = fields.Boolean(default=True, tracking=True)
    sequence = fields.Integer(default=10)

    # -- scope and ownership ---------------------------------------------------------------------
    scope = fields.Selection(
        [("system", "System"), ("user", "User")],
        default=lambda self: self._default_scope(),
        required=True,
        tracking=True,
        help="System servers are configured by AI managers and given to assistants; user servers belong to "
        "the owner of a cloud service and serve only that service's conversations.",
    )
    company_id = fields.Many2one(
        "res.company",
        default=lambda self: self._default_company_id(),
        index=True,
        tracking=True,
        help="Only assistants and cloud services of this company use the server, and only users working in it "
        "sign in to it; a user server has its cloud service's. Empty: shared by every company.",
    )
    cloud_service_id = fields.Many2one(
        "cloud.service", string="Cloud Service", ondelete="cascade", index=True, check_company=True
    )
    owner_id = fields.Many2one(
        "res.users",
        string="Owner",
        compute="_compute_owner_id",
        store=True,
        readonly=False,
        precompute=True,
        index=True,
        ondelete="cascade",
        help="For user servers, the owner of their cloud service.",
    )

    # -- transport -------------------------------------------------------------------------------
    transport = fields.Selection(
        TRANSPORTS,
        default="streamable_http",
        required=True,
        tracking=True,
    )
    url = fields.Char(string="URL", tracking=True, help="The MCP endpoint, e.g. https://mcp.example.com/mcp")
    auth_type = fields.Selection(
        AUTH_TYPES,
        string="Authentication",
        default="none",
        required=True,
        tracking=True,
    )
    api_key_header = fields.Char(string="API Key Header", default="X-API-Key")
    api_key = fields.Char(
        string="Token / API Key",
        compute="_compute_api_key",
        inverse="_inverse_api_key",
        copy=False,
        help="Write-only: the bearer token or API key. Leave empty to keep the stored one.",
    )
    api_key_set = fields.Boolean(string="Token Set", compute="_compute_secrets_set")
    headers = fields.Text(
        string="Headers",
        compute="_compute_headers",
        inverse="_inverse_headers",
        copy=False,
        help='Write-only: a JSON object of header names and values, e.g. {"X-Org": "acme"}. '
        "Leave empty to keep the stored headers.",
    )
    headers_set = fields.Boolean(string="Headers Set", compute="_compute_secrets_set")

    # -- stdio -----------------------------------------------------------------------------------
    command = fields.Char(tracking=True, help="The program to run, e.g. npx or /usr/bin/python3")
    args = fields.Text(string="Arguments", help="One argument per line; nothing is expanded by a shell.")
    # not "env": that name is the recordset's Environment
    env_vars = fields.Text(
        string="Environment",
        compute="_compute_env_vars",
        inverse="_inverse_env_vars",
        copy=False,
        help='Write-only: a JSON object of environment variables, e.g. {"API_TOKEN": "..."}. The process '
        "gets only these plus PATH. Leave empty to keep the stored ones.",
    )
    env_vars_set = fields.Boolean(string="Environment Set", compute="_compute_secrets_set")
    cwd = fields.Char(string="Working Directory")
    memory_limit_mb = fields.Integer(
        string="Memory Limit (MB)",
        help="The most memory the server process may write to, in megabytes. 0: no limit of its own (Odoo's "
        "worker memory limit never applies to it).",
    )
    command_preview = fields.Char(compute="_compute_command_preview", help="The exact command line that will run.")

    # -- limits ----------------------------------------------------------------------------------
    connect_timeout = fields.Float(default=CONNECT_TIMEOUT.default, help="Seconds to connect and initialize.")
    call_timeout = fields.Float(
        default=CALL_TIMEOUT.default,
        help="Seconds a tool call may go without a sign of life: its result, or a progress report, each of which "
        "starts it again. Time spent waiting for the user's answer to the server's question never counts.",
    )
    call_time_cap = fields.Float(
        string="Call Time Cap",
        default=CALL_TIME_CAP.default,
        help="Seconds a tool call may run in all, however often it reports progress. Time spent waiting for the user's "
        "answer to the server's question never counts.",
    )
    question_timeout = fields.Float(
        default=QUESTION_TIMEOUT.default,
        help="Seconds a question of the server (a form to fill in, a page to visit) waits for the user's answer; "
        "then it is cancelled, the server is told, and the tool call says so.",
    )
    log_level = fields.Selection(
        LOG_LEVELS,
        string="Server Log Level",
        default="info",
        help="The server's log messages at this level or above are shown in the tool call that sent them and written "
        "to Odoo's log. Empty: whatever the server sends.",
    )

    # -- tools -----------------------------------------------------------------------------------
    tool_ids = fields.One2many("mcp.tool", "server_id", string="Tools")
    tool_count = fields.Integer(compute="_compute_tool_count")
    tool_call_count = fields.Integer(string="Tool Calls", compute="_compute_tool_call_count")

    # -- status ----------------------------------------------------------------------------------
    state = fields.Selection(
        [("draft", "Not connected"), ("connected", "Connected"), ("error", "Error")],
        default="draft",
        required=True,
        readonly=True,
        copy=False,
        tracking=True,
    )
    last_error = fields.Text(readonly=True, copy=False)
    last_error_code = fields.Char(readonly=True, copy=False)
    last_sync = fields.Datetime(readonly=True, copy=False)
    last_latency_ms = fields.Integer(string="Latency (ms)", readonly=True, copy=False)
    server_name = fields.Char(readonly=True, copy=False)
    server_version = fields.Char(readonly=True, copy=False)
    protocol_version = fields.Char(readonly=True, copy=False)
    protocol_stateless = fields.Boolean(
        string="Stateless",
        compute="_compute_protocol_stateless",
        help="The server speaks MCP 2026-07-28 or later: no session is kept on it, every request stands alone.",
    )
    server_icon = fields.Char(readonly=True, copy=False, help="The server's icon as it gives it (inline images only).")
    last_stderr = fields.Text(string="Last Output", readonly=True, copy=False)
    stderr_tail = fields.Text(string="Output (stderr)", compute="_compute_stderr_tail")

    # -- defaults and computes -------------------------------------------------------------------

    @api.model
    def _default_scope(self):
        if self.env.context.get("default_cloud_service_id") or not self.env.user.has_group("ai_mcp.group_ai_manager"):
            return "user"
        return "system"

    @api.model
    def _default_company_id(self):
        service = self.env["cloud.service"].browse(self.env.context.get("default_cloud_service_id"))
        return service.company_id if service else self.env.company

    @api.depends("scope", "cloud_service_id.owner_id")
    def _compute_owner_id(self):
        for server in self:
            if server.scope == "user" and server.cloud_service_id:
                server.owner_id = server.cloud_service_id.owner_id
            elif not server.owner_id:
                server.owner_id = self.env.user

    def _compute_api_key(self):
        self._secret_compute("api_key")

    def _inverse_api_key(self):
        self._secret_inverse("api_key")

    def _compute_headers(self):
        self._secret_compute("headers")

    def _inverse_headers(self):
        self._secret_inverse("headers")

    def _compute_env_vars(self):
        self._secret_compute("env_vars")

    def _inverse_env_vars(self):
        self._check_stdio_allowed(self.filtered(lambda s: s.transport == "stdio"))
        self._secret_inverse("env_vars")

    def _secret_normalize(self, fname, value):
        if fname == "headers":
            return json.dumps(parse_headers_json(value, field="headers"))
        if fname == "env_vars":
            return json.dumps(parse_env_json(value))
        return super()._secret_normalize(fname, value)

    @api.depends("transport", "command", "args", "cwd")
    def _compute_command_preview(self):
        for server in self:
            if server.transport != "stdio" or not server.command:
                server.command_preview = False
                continue
            names = sorted(server._env_names())
            env = " ".join(f"{shlex.quote(name)}=***" for name in names)
            preview = " ".join(filter(None, [env, shlex.join([server.command.strip(), *server._arg_list()])]))
            if server.cwd:
                preview = f"cd {shlex.quote(server.cwd)} && {preview}"
            server.command_preview = preview

    def _env_names(self):
        """Names of the stored environment variables (never their values)."""
        self.ensure_one()
        if not isinstance(self._origin.id, int) or not self._origin.env_vars_set:
            return []
        try:
            return list(json.loads(self._origin.sudo()._secret_value("env_vars")))
        except (ConfigError, ValueError):
            return ["?"]

    def _arg_list(self):
        return [line.strip() for line in (self.args or "").splitlines() if line.strip()]

    @api.depends("tool_ids")
    def _compute_tool_count(self):
        groups = self.env["mcp.tool"]._read_group([("server_id", "in", self.ids)], ["server_id"], ["__count"])
        counts = {server.id: count for server, count in groups}
        for server in self:
            server.tool_count = counts.get(server.id, 0)

    @api.depends("transport", "last_stderr")
    def _compute_tool_call_count(self):
        counts = self.env["ai.tool.call"]._counts_by("server_id", self.ids)
        for server in self:
            server.tool_call_count = counts.get(server.id, 0)

    @api.depends("protocol_version")
    def _compute_protocol_stateless(self):
        for server in self:
            server.protocol_stateless = server.protocol_version in MODERN_PROTOCOL_VERSIONS

    def _compute_stderr_tail(self):
        hub = running_hub()  # never start the hub just to show a form
        for server in self:
            lines = []
            if server.transport == "stdio" and isinstance(server.id, int) and hub is not None:
                lines = hub.stderr_tail(server._server_key()) if hub.pid == os.getpid() else []
            server.stderr_tail = stderr_tail(lines) if lines else server.last_stderr

    # -- constraints -----------------------------------------------------------------------------

    @api.constrains("transport", "command", "args", "cwd", "scope", "memory_limit_mb")
    def _check_transport(self):
        stdio = self.filtered(lambda s: s.transport == "stdio")
        self._check_stdio_allowed(stdio)
        for server in stdio:
            if server.scope != "system":
                raise ValidationError(
                    self.env._(
                        "%s: stdio servers run on the Odoo server, so only system servers may use them.", server.name
                    )
                )
            if not (server.command or "").strip():
                raise ValidationError(
                    self.env._("%s: a stdio server needs a command, e.g. npx or /usr/bin/python3.", server.name)
                )
            if server.memory_limit_mb < 0:
                raise ValidationError(
                    self.env._("%s: the memory limit is a number of megabytes, or 0 for none.", server.name)
                )

    @api.model
    def _check_stdio_allowed(self, stdio_servers):
        if stdio_servers and not self._stdio_enabled():
            raise ValidationError(
                self.env._(
                    "stdio MCP servers are turned off. "
                    "A system administrator can allow them with the system parameter %s.",
                    ALLOW_STDIO_PARAM,
                )
            )

    @api.constrains("url", "transport", "scope")
    def _check_url(self):
        for server in self:
            if server.transport in ("stdio", "odoo"):
                continue
            try:
                if server.scope == "user":
                    check_public_url(server.url, self._allowed_hosts())
                else:
                    check_url(server.url)
            except ConfigError as exc:
                raise ValidationError(
                    self.env._("%(server)s: %(problem)s", server=server.name, problem=config_error_text(server, exc))
                ) from None

    @api.constrains("scope", "cloud_service_id", "owner_id")
    def _check_scope(self):
        for server in self:
            if server.scope == "user":
                if not server.cloud_service_id:
                    raise ValidationError(
                        self.env._("%s: a user server belongs to a cloud service; choose one.", server.name)
                    )
                if server.owner_id != server.cloud_service_id.owner_id:
                    raise ValidationError(
                        self.env._("%s: a user server is owned by the owner of its cloud service.", server.name)
                    )
            elif server.cloud_service_id:
                raise ValidationError(self.env._("%s: only user servers belong to a cloud service.", server.name))

    @api.constrains(*(fname for fname, _limit, _message in LIMITS))
    def _check_timeouts(self):
        for server in self:
            for fname, limit, message in LIMITS:
                if not limit.allows(server[fname]):
                    raise ValidationError(self.env._(message, server=server.name, **limit.bounds))

    # -- CRUD ------------------------------------------------------------------------------------

    @api.model_create_multi
    def create(self, vals_list):
        self._check_scope_change(vals_list)
        servers = super().create([self._with_service_company(vals) for vals in vals_list])
        servers._check_stdio_author()
        return servers

    def write(self, vals):
        self._check_scope_change([vals])
        if vals.get("company_id"):
            self._check_assistants_fit(self.env["res.company"].browse(vals["company_id"]))
        changed = self._fields_changed_by(vals, CONNECTION_FIELDS)
        reset = bool(changed) and not self.env.context.get("ai_mcp_keep_state")
        result = super().write(vals)
        if STDIO_FIELDS & vals.keys():
            self._check_stdio_author()
        if not self.env.su:
            # record rules are checked before a write; check again so nobody moves a record out of their reach
            self.check_access("write")
        if reset or "active" in vals:
            self._close_sessions()
            if reset:
                self.filtered(lambda s: s.state != "draft").with_context(ai_mcp_keep_state=True).write(
                    {"state": "draft", "last_error": False, "last_error_code": False}
                )
        return result

    def _check_assistants_fit(self, company):
        """A server moved to `company` would leave the assistants of another company using it, and
        lend shared ones its tools in that company only: refused, naming them (Odoo checks the links
        from the assistant's side only)."""
        for server in self:
            assistants = linked_from_elsewhere(
                company,
                "ai.assistant",
                [
                    "|",
                    "|",
                    ("mcp_server_ids", "=", server.id),
                    ("mcp_tool_disabled_ids.server_id", "=", server.id),
                    ("mcp_tool_always_ids.server_id", "=", server.id),
                ],
            )
            if assistants:
                raise ValidationError(
                    self.env._(
                        "%(server)s cannot belong to %(company)s while assistants of another company, or shared "
                        "ones, use it: %(assistants)s. Take the server out of them first, or leave it shared.",
                        server=server.name,
                        company=company.sudo().name,
                        assistants=named_with_company(assistants),
                    )
                )

    @api.model
    def _with_service_company(self, vals):
        """`vals` of a server made in a cloud service, with the service's company unless one is given."""
        if vals.get("cloud_service_id") and "company_id" not in vals:
            # sudo: only the service's company is read, for a member who cannot read the service itself
            service = self.env["cloud.service"].sudo().browse(vals["cloud_service_id"])
            return {**vals, "company_id": service.company_id.id}
        return vals

    def unlink(self):
        self._close_sessions()
        return super().unlink()

    def _check_stdio_author(self):
        """Only system administrators create or change stdio servers: they run programs on the Odoo
        server. Checked here rather than in a constraint, which Odoo 19 runs as superuser."""
        if self.env.su or self.env.user.has_group("base.group_system"):
            return
        if any(server.transport == "stdio" for server in self):
            raise AccessError(
                self.env._(
                    "Only system administrators may configure stdio MCP servers: they run programs on the Odoo server."
                )
            )

    @api.model
    def _check_scope_change(self, vals_list):
        if self.env.su or self.env.user.has_group("ai_mcp.group_ai_manager"):
            return
        for vals in vals_list:
            if vals.get("scope") == "system":
                raise AccessError(self.env._("Only AI managers may add or change system MCP servers."))

    def _close_sessions(self, owner=None):
        """Drop the pooled sessions of these servers once the transaction is committed: with
        `owner` (an OAuth token owner), only those opened with that owner's grant."""
        keys = [server._server_key() for server in self if isinstance(server.id, int)]
        if not keys:
            return

        def close():
            hub = running_hub()
            if hub is None or hub.pid != os.getpid():
                return
            for key in keys:
                try:
                    hub.run(hub.aclose_server(key, owner))
                except AiMcpError:
                    _logger.info("MCP session of %s did not close cleanly", key)

        self.env.cr.postcommit.add(close)

    # -- policies set by system parameters ------------------------------------------------------

    @api.model
    def _stdio_enabled(self):
        return str2bool(self.env["ir.config_parameter"].sudo().get_param(ALLOW_STDIO_PARAM) or "", default=False)

    @api.model
    def _allowed_hosts(self):
        return (
            (self.env["ir.config_parameter"].sudo().get_param(ALLOWED_HOSTS_PARAM) or "").replace(";", ",").split(",")
        )

    # -- actions ---------------------------------------------------------------------------------

    def action_clear_api_key(self):
        self._secret_clear("api_key")
        return self._after_clear()

    def action_clear_headers(self):
        self._secret_clear("headers")
        return self._after_clear()

    def action_clear_env_vars(self):
        self._secret_clear("env_vars")
        return self._after_clear()

    def _after_clear(self):
        self._close_sessions()
        self.filtered(lambda s: s.state != "draft").with_context(ai_mcp_keep_state=True).write({"state": "draft"})
        return True

    def action_open_tools(self):
        return related_list(self, self.env._("Tools of %s", self.name), "mcp.tool", "server_id")

    def action_open_tool_calls(self):
        self.ensure_one()
        return self.env["ai.tool.call"]._action_for(
            self.env._("Tool calls of %s", self.name), [("server_id", "=", self.id)]
        )
