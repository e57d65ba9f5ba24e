"""ai.assistant: what a user chats with. An assistant names its model (an ai.provider and a
model name), its system prompt and its limits (tool rounds, calls per round, timeouts), who may
chat with it (groups), and the system MCP servers (mcp.server) whose tools (mcp.tool) it may use,
minus the tools it disables. Its conversations (ai.conversation) ask it for the settings of the
agent loop and for the tools a turn may offer: those of its connected servers, plus the user
servers of the conversation's cloud service, with their presets (ai.tool.preset) and the
approvals remembered in the conversation. As a Discuss chat partner: ai_assistant_discuss.py."""

import logging

from pydantic import ValidationError as PydanticValidationError

from odoo import api, fields, models
from odoo.exceptions import UserError, ValidationError

from ..companies import company_allows, company_to_switch_to
from ..odoo_compat import user_groups
from ..services.errors import AiMcpError, _lt
from ..services.limits import (
    MAX_CALLS_PER_ROUND,
    MAX_ROUNDS,
    TEMPERATURE,
    TOOL_CALL_TIMEOUT,
    TOOL_SEARCH_THRESHOLD,
    TURN_TIMEOUT,
    LimitedField,
)
from ..services.loop import AssistantSettings, LoopLimits, ToolBinding, ToolNameMap, ToolRef
from ..services.server_spec import config_error_from
from .conversation.ai_conversation_approval import approval_of

_logger = logging.getLogger(__name__)

MAX_SERVERS = 10  # MCP servers one assistant may use

# each limited setting, its bounds and the message of its constraint
LIMITS = (
    LimitedField(
        "temperature", TEMPERATURE, _lt("%(assistant)s: the temperature must be between %(low)s and %(high)s.")
    ),
    LimitedField("max_rounds", MAX_ROUNDS, _lt("%(assistant)s: the tool rounds must be between %(low)s and %(high)s.")),
    LimitedField(
        "max_calls_per_round",
        MAX_CALLS_PER_ROUND,
        _lt("%(assistant)s: the tool calls per round must be between %(low)s and %(high)s."),
    ),
    LimitedField(
        "call_timeout",
        TOOL_CALL_TIMEOUT,
        _lt("%(assistant)s: the tool call timeout must be between %(low)s and %(high)s seconds."),
    ),
    LimitedField(
        "turn_timeout",
        TURN_TIMEOUT,
        _lt("%(assistant)s: the answer timeout must be between %(low)s and %(high)s seconds."),
    ),
    LimitedField(
        "tool_search_threshold",
        TOOL_SEARCH_THRESHOLD,
        _lt("%(assistant)s: the tools offered up front must be between %(low)s and %(high)s."),
    ),
)


class AiAssistant(models.Model):
    _name = "ai.assistant"
    _description = "AI Assistant"
    _inherit = ["mail.thread"]
    _order = "name, id"
    _check_company_auto = True

    # -- identity and model ----------------------------------------------------------------------
    name = fields.Char(required=True, tracking=True)
    active = fields.Boolean(default=True, tracking=True)
    company_id = fields.Many2one(
        "res.company",
        default=lambda self: self.env.company,
        index=True,
        tracking=True,
        help="Only users working in this company chat with the assistant; empty: shared by every company.",
    )
    provider_id = fields.Many2one(
        "ai.provider", string="Provider", required=True, ondelete="restrict", tracking=True, check_company=True
    )
    model = fields.Char(tracking=True, help="The model to use; empty means the provider's default model.")
    model_id = fields.Many2one(
        "ai.provider.model",
        string="Model Record",
        ondelete="set null",
        tracking=True,
        check_company=True,
        domain="[('provider_id', '=', provider_id)]",
        help="A model of the provider's list (Refresh models on the provider), or a new one typed in; empty: "
        "the model named below, else the provider's default model.",
    )
    system_prompt = fields.Text()
    custom_temperature = fields.Boolean(
        string="Set Temperature",
        default=True,
        help="Off: requests carry no temperature, so the provider's default applies.",
    )
    temperature = fields.Float(default=TEMPERATURE.default, help="From 0 (focused) to 2 (creative).")
    prompted_tools = fields.Boolean(
        string="Tools in the Prompt",
        help="For models without native function calling: tools are described in the system prompt and the "
        "model's calls are read from its text.",
    )

    # -- limits ----------------------------------------------------------------------------------
    max_rounds = fields.Integer(
        string="Max Tool Rounds", default=MAX_ROUNDS.default, help="Model calls with tools per answer."
    )
    max_calls_per_round = fields.Integer(
        default=MAX_CALLS_PER_ROUND.default, help="Tool calls run per round; the rest get an error result."
    )
    call_timeout = fields.Float(
        string="Tool Call Timeout", default=TOOL_CALL_TIMEOUT.default, help="Seconds one tool call may take."
    )
    turn_timeout = fields.Float(
        string="Answer Timeout", default=TURN_TIMEOUT.default, help="Seconds a whole answer may take."
    )

    # -- who may chat ----------------------------------------------------------------------------
    group_ids = fields.Many2many(
        "res.groups",
        "ai_assistant_res_groups_rel",
        "assistant_id",
        "group_id",
        string="Allowed Groups",
        help="Only members of these groups may chat with the assistant; empty means every AI user.",
    )

    # -- tools -----------------------------------------------------------------------------------
    mcp_server_ids = fields.Many2many(
        "mcp.server",
        "ai_assistant_mcp_server_rel",
        "assistant_id",
        "server_id",
        string="MCP Servers",
        check_company=True,
        domain=[("scope", "=", "system")],
        help=f"System MCP servers whose tools the assistant may use (at most {MAX_SERVERS}).",
    )
    mcp_tool_disabled_ids = fields.Many2many(
        "mcp.tool",
        "ai_assistant_mcp_tool_disabled_rel",
        "assistant_id",
        "tool_id",
        string="Disabled Tools",
        check_company=True,
        domain="[('server_id', 'in', mcp_server_ids)]",
        help="Tools of the chosen servers this assistant must not use.",
    )
    mcp_tool_always_ids = fields.Many2many(
        "mcp.tool",
        "ai_assistant_mcp_tool_always_rel",
        "assistant_id",
        "tool_id",
        string="Always Offered Tools",
        check_company=True,
        domain="[('server_id', 'in', mcp_server_ids)]",
        help="When the model searches the assistant's tools (more of them than Tools Offered Up Front), these are "
        "offered in every answer all the same.",
    )
    odoo_access_ids = fields.One2many(
        "ai.assistant.odoo.access",
        "assistant_id",
        string="Odoo Models",
        groups="ai_mcp.group_ai_manager",
        help="The models of this Odoo the assistant may use through This Odoo's tools, and how; none by default. "
        "Users reach only what their own rights allow.",
    )
    tool_search_threshold = fields.Integer(
        string="Tools Offered Up Front",
        default=int(TOOL_SEARCH_THRESHOLD.default),
        help="With more tools than this (or their descriptions heavier than about 10,000 tokens), the model is "
        "given a search over them instead: it finds the tools it needs, which stay offered for the rest of the "
        "conversation, up to this many.",
    )
    tool_preview = fields.Text(
        string="Tools the Model Sees",
        compute="_compute_tool_preview",
        groups="ai_mcp.group_ai_manager",
        help="One line per tool the model is given, with the function name it sees; user servers of a cloud "
        "service add theirs in that service's conversations.",
    )
    tool_count = fields.Integer(compute="_compute_tool_preview")
    tool_call_count = fields.Integer(string="Tool Calls", compute="_compute_tool_call_count")
    preset_ids = fields.One2many(
        "ai.tool.preset",
        "assistant_id",
        string="Parameter Presets",
        groups="ai_mcp.group_ai_manager",
        help="Arguments fixed per tool: the model neither sees them nor can change them.",
    )

    @api.depends(
        "mcp_server_ids",
        "mcp_server_ids.name",
        "mcp_server_ids.state",
        "mcp_server_ids.active",
        "mcp_server_ids.tool_ids",
        "mcp_server_ids.tool_ids.enabled",
        "mcp_server_ids.tool_ids.review_state",
        "mcp_tool_disabled_ids",
        "tool_search_threshold",
    )
    def _compute_tool_preview(self):
        for assistant in self:
            refs, notes = assistant._system_tools()
            names = ToolNameMap.build([ref for ref, _tool in refs])
            lines = [f"{name}  <- {ref.server_name} / {ref.tool}" for name, ref in names.items()]
            if len(lines) > assistant.tool_search_threshold:
                notes.append(
                    self.env._(
                        "(%(count)s tools, more than %(threshold)s: the model is given search_tools, the always "
                        "offered tools and those its searches find.)",
                        count=len(lines),
                        threshold=assistant.tool_search_threshold,
                    )
                )
            assistant.tool_preview = "\n".join(lines + notes) or self.env._("No tool: choose connected MCP servers.")
            assistant.tool_count = len(lines)

    def _compute_tool_call_count(self):
        counts = self.env["ai.tool.call"]._counts_by("assistant_id", self.ids)
        for assistant in self:
            assistant.tool_call_count = counts.get(assistant.id, 0)

    # -- constraints -----------------------------------------------------------------------------

    @api.constrains("mcp_server_ids")
    def _check_mcp_servers(self):
        for assistant in self:
            servers = assistant.sudo().with_context(active_test=False).mcp_server_ids
            if len(servers) > MAX_SERVERS:
                raise ValidationError(
                    self.env._(
                        "%(assistant)s: at most %(max)s MCP servers per assistant (%(count)s chosen).",
                        assistant=assistant.name,
                        max=MAX_SERVERS,
                        count=len(servers),
                    )
                )
            if any(server.scope != "system" for server in servers):
                raise ValidationError(
                    self.env._(
                        "%s: assistants use system MCP servers only; user servers come with a cloud service.",
                        assistant.name,
                    )
                )

    def _check_company(self, fnames=None):
        """Odoo's check passes a many2many when any of its records fits the company; each of an
        assistant's servers and tools must."""
        result = super()._check_company(fnames)
        names = self._fields if fnames is None or "company_id" in fnames else fnames
        many = [name for name in names if self._fields[name].type == "many2many" and self._fields[name].check_company]
        for assistant in self.sudo():
            for name in many:
                linked = assistant[name].with_context(active_test=False)
                foreign = linked - linked.filtered_domain(linked._check_company_domain(assistant.company_id))
                if foreign:
                    raise UserError(
                        self.env._(
                            "%(assistant)s belongs to %(company)s, but %(field)s (%(fname)s: %(values)s) belong to "
                            "another company.",
                            assistant=assistant.name,
                            company=assistant.company_id.name or self.env._("every company"),
                            field=self._fields[name]._description_string(self.env),
                            fname=name,
                            values=", ".join(foreign.mapped("display_name")),
                        )
                    )
        return result

    @api.constrains("model_id", "provider_id")
    def _check_model_provider(self):
        for assistant in self.sudo():
            if assistant.model_id and assistant.model_id.provider_id != assistant.provider_id:
                raise ValidationError(
                    self.env._(
                        "%(assistant)s: %(model)s is a model of %(other)s, not of %(provider)s.",
                        assistant=assistant.name,
                        model=assistant.model_id.name,
                        other=assistant.model_id.provider_id.name,
                        provider=assistant.provider_id.name,
                    )
                )

    @api.constrains(*(fname for fname, _limit, _message in LIMITS))
    def _check_limits(self):
        for assistant in self:
            for fname, limit, message in LIMITS:
                if not limit.allows(assistant[fname]):
                    raise ValidationError(self.env._(message, assistant=assistant.name, **limit.bounds))

    # -- the model record and the model's name ---------------------------------------------------

    @api.model_create_multi
    def create(self, vals_list):
        return super().create([self._with_model_name(vals) for vals in vals_list])

    def write(self, vals):
        return super().write(self._with_model_name(vals))

    @api.model
    def _with_model_name(self, vals):
        """`vals` naming the model of the model record it picks, so `model` always names what a turn uses."""
        if vals.get("model_id"):
            return {**vals, "model": self.env["ai.provider.model"].sudo().browse(vals["model_id"]).name}
        return vals

    @api.onchange("model_id")
    def _onchange_model_id(self):
        if self.model_id:
            self.model = self.model_id.name

    @api.onchange("provider_id")
    def _onchange_provider_id(self):
        if self.model_id and self.model_id.provider_id != self.provider_id:
            self.model_id = False

    # -- what the chat uses ----------------------------------------------------------------------

    def _user_may_use(self, user=None):
        """Whether `user` (default: the current user) may chat with this assistant."""
        self.ensure_one()
        user = user or self.env.user
        assistant = self.sudo()
        if not assistant.active or not user.has_group("ai_mcp.group_ai_user") or not company_allows(assistant, user):
            return False
        return not assistant.group_ids or bool(assistant.group_ids & user_groups(user))

    def _other_company_refusal(self, user):
        """Why `user` may not chat with this assistant now when it belongs to another of their
        companies than those they are working in, and is theirs there; None otherwise."""
        company = company_to_switch_to(self, user, lambda there: there._user_may_use(user))
        if company is None:
            return None
        return self.env._(
            "%(assistant)s belongs to %(company)s: switch to %(company)s to chat with it.",
            assistant=self.sudo().name,
            company=company.name,
        )

    def _assistant_settings(self):
        """AssistantSettings for the agent loop; the provider's key is decrypted here."""
        self.ensure_one()
        assistant = self.sudo()
        llm = assistant.provider_id._llm_settings(model=assistant.model, temperature=assistant._temperature())
        try:
            return AssistantSettings(
                name=assistant.name,
                llm=llm,
                system_prompt=assistant.system_prompt or "",
                limits=LoopLimits(
                    max_rounds=assistant.max_rounds,
                    max_calls_per_round=assistant.max_calls_per_round,
                    call_timeout=assistant.call_timeout,
                    turn_timeout=assistant.turn_timeout,
                    tool_search_threshold=assistant.tool_search_threshold,
                ),
                prompted_tools=assistant.prompted_tools or not llm.capabilities.native_tools,
            )
        except PydanticValidationError as exc:
            raise config_error_from(exc) from None

    def _temperature(self):
        """The temperature requests carry; None: the provider's default."""
        return self.temperature if self.custom_temperature else None

    def _tool_bindings(self, cloud_service=None, warnings=None, conversation=None, audience="model"):
        """The tools a turn may offer (`audience` "model"), or an app may call ("app"): _usable_tools,
        as the tool's visibility allows. Each carries its parameter preset resolved for the current
        user, `cloud_service` and `conversation` (ai.tool.preset).

        A server whose configuration cannot be used now (e.g. its URL resolves to a forbidden
        address), or that failed when last connected (a stdio server that could not start, say), is
        left out; why is appended to `warnings` when a list is given."""
        self.ensure_one()
        bindings = []
        selected = self._usable_tools(cloud_service, warnings)
        # the approvals the user remembered in the conversation (an app's own: conversation/app_call.py)
        remembered = self.env["ai.conversation.approval"]._remembered(conversation) if conversation else {}
        presets = self.env["ai.tool.preset"]._for_turn(
            self, [tool.id for tool in selected], cloud_service, conversation, warnings
        )
        specs = {}
        always = set(self.sudo().with_context(active_test=False).mcp_tool_always_ids._origin.ids)
        for tool in selected:
            if tool.id in presets.left_out or not _seen_by(tool, audience):
                continue
            server = tool.server_id
            if server.id not in specs:
                try:
                    specs[server.id] = server._server_spec()
                except AiMcpError as exc:
                    specs[server.id] = None
                    _logger.info("MCP server left out of a turn: server=%s error=%s", server.name, exc)
                    if warnings is not None:
                        warnings.append(
                            self.env._("%(server)s is left out: %(error)s", server=server.name, error=exc.message)
                        )
            if specs[server.id] is not None:
                approval = approval_of(tool, remembered, audience)
                bindings.append(
                    ToolBinding(
                        server=specs[server.id],
                        tool=tool._tool_info(),
                        requires_approval=approval is None,
                        approval=approval,
                        fixed_arguments=presets.arguments.get(tool.id, {}),
                        always_offered=tool.id in always,
                    )
                )
        if warnings is not None and audience == "model":
            warnings.extend(self._failed_servers_notice())
        return bindings

    def _failed_servers_notice(self):
        """A warning for each of the assistant's system servers whose last connection failed, with
        its error: their tools are not offered, and the user learns why in the chat."""
        failed = self._system_servers().filtered(lambda s: s.state == "error")
        return [self._failed_server_notice(server) for server in failed]

    def _failed_server_notice(self, server):
        """Why `server` is left out. What a stdio server wrote to its standard error is for the admin
        (it may hold the secrets of its environment): the user only learns where it can be read."""
        if server.transport == "stdio" and server.last_stderr:
            return self.env._(
                "%s could not start, so its tools are left out of this answer; an administrator can see why on the "
                "server's form.",
                server.name,
            )
        return self.env._(
            "%(server)s is unavailable, so its tools are left out of this answer: %(error)s",
            server=server.name,
            error=server.last_error or server.last_error_code or self.env._("its last connection failed."),
        )

    def _usable_servers(self, cloud_service=None, warnings=None):
        """The servers whose tools, prompts and resources a turn of this assistant may use: its active,
        connected system servers, and the active, connected user servers of `cloud_service` when the
        current user owns it or is a member (else why not is appended to `warnings`, when given)."""
        self.ensure_one()
        servers = self._system_servers().filtered(lambda s: s.state == "connected" and company_allows(s, self.env.user))
        if cloud_service:
            service = cloud_service.sudo()
            if service._user_may_use(self.env.user):
                servers |= self._service_servers(service).filtered(lambda s: company_allows(s, self.env.user))
            elif warnings is not None:
                warnings.append(self.env._("You may not use the tools of %s; its servers are left out.", service.name))
        return servers

    def _usable_tools(self, cloud_service=None, warnings=None):
        """The tools a turn may offer (who may see a tool): those of _offered_tools that did not change
        since they were approved, by server then name."""
        offered = self._offered_tools(cloud_service, warnings)
        return [tool._origin for tools in offered.values() for tool in tools if tool.review_state == "approved"]

    def _offered_tools(self, cloud_service=None, warnings=None):
        """{server: its enabled tools but the assistant's disabled ones} for each of _usable_servers."""
        # with active_test, reading the disabled tools would fetch every one of them to drop the archived
        disabled = self.sudo().with_context(active_test=False).mcp_tool_disabled_ids._origin.ids
        return self.env["mcp.tool"]._enabled_on(self._usable_servers(cloud_service, warnings), disabled)

    def _system_servers(self):
        return self.sudo().mcp_server_ids.filtered(lambda s: s.active and s.scope == "system")

    @api.model
    def _service_servers(self, service):
        return service.user_mcp_server_ids.filtered(lambda s: s.scope == "user" and s.active and s.state == "connected")

    def _system_tools(self):
        """([(ToolRef, mcp.tool)], notes): the system tools the model is given (_usable_tools with no
        cloud service), and why the assistant's other servers and tools are not."""
        self.ensure_one()
        offered = self._offered_tools()
        refs = []
        notes = []
        for server in self._system_servers():
            if server not in offered:
                notes.append(self.env._("(%s is not connected: test it or sync its tools to offer them.)", server.name))
                continue
            for tool in offered[server]:
                if tool.review_state != "approved":
                    notes.append(
                        self.env._(
                            "(%(tool)s of %(server)s changed since it was approved: left out until reviewed.)",
                            tool=tool.name,
                            server=server.name,
                        )
                    )
                    continue
                refs.append((ToolRef(server._origin._server_key(), server.name, tool.name), tool._origin))
        return refs, notes

    # -- actions ---------------------------------------------------------------------------------

    def action_test_provider(self):
        self.ensure_one()
        return self.provider_id._test_model(
            self.model or self.provider_id.default_model, self._temperature(), prompted_tools=self.prompted_tools
        )

    def action_open_tool_calls(self):
        self.ensure_one()
        return self.env["ai.tool.call"]._action_for(
            self.env._("Tool calls of %s", self.name), [("assistant_id", "=", self.id)]
        )


def _seen_by(tool, audience):
    """MCP Apps' visibility: an app-only tool is never offered to a model, a model-only tool never
    called by an app."""
    return tool.visibility != ("app" if audience == "model" else "model")
