"""Parameter presets: arguments an AI manager fixes per assistant and tool.

A preset is a JSON object of arguments whose values may reference {{variables}}
(services.loop.presets.KNOWN_VARIABLES). It is checked when saved, resolved for every turn from the
user asking, the conversation's cloud service and the conversation, merged over what the model
sends (the model cannot override it) and removed from the schema the model sees.
"""

import json
from typing import NamedTuple

from odoo import api, fields, models
from odoo.exceptions import ValidationError

from ..odoo_compat import Constraint
from ..services.errors import ConfigError
from ..services.loop import KNOWN_VARIABLES, resolve_preset, validate_preset, variables_in


class TurnPresets(NamedTuple):
    """The presets of one turn: resolved arguments per mcp.tool id, and the tools left out because
    their preset cannot be applied (why is in the turn's warnings)."""

    arguments: dict
    left_out: frozenset


class AiToolPreset(models.Model):
    _name = "ai.tool.preset"
    _description = "AI Tool Parameter Preset"
    _order = "assistant_id, tool_id, id"
    _check_company_auto = True

    assistant_id = fields.Many2one("ai.assistant", string="Assistant", required=True, ondelete="cascade", index=True)
    company_id = fields.Many2one(related="assistant_id.company_id", store=True, index=True)
    assistant_server_ids = fields.Many2many(related="assistant_id.mcp_server_ids", string="Assistant Servers")
    tool_id = fields.Many2one(
        "mcp.tool",
        string="Tool",
        required=True,
        ondelete="cascade",
        index=True,
        check_company=True,
        domain="[('server_id', 'in', assistant_server_ids)]",
        help="A tool of one of the assistant's MCP servers.",
    )
    server_id = fields.Many2one(related="tool_id.server_id", string="Server")
    arguments = fields.Text(
        required=True,
        default="{}",
        help='A JSON object of the arguments to fix, e.g. {"owner": "{{user.login}}", "limit": 20}. Values may '
        "reference variables in double braces; the model neither sees these arguments nor can change them.",
    )
    tool_arguments = fields.Char(
        string="Tool's Arguments",
        compute="_compute_tool_arguments",
        help="The arguments the tool takes, from its input schema.",
    )
    variables_help = fields.Char(string="Variables", compute="_compute_tool_arguments")

    _assistant_tool_uniq = Constraint("unique(assistant_id, tool_id)", "An assistant has one preset per tool.")

    @api.depends("tool_id.input_schema")
    def _compute_tool_arguments(self):
        variables = ", ".join("{{" + name + "}}" for name in sorted(KNOWN_VARIABLES))
        for preset in self:
            properties = (tool_schema(preset.tool_id).get("properties") or {}) if preset.tool_id else {}
            preset.tool_arguments = ", ".join(sorted(properties)) or False
            preset.variables_help = variables

    @api.depends("assistant_id.name", "tool_id.name")
    def _compute_display_name(self):
        for preset in self:
            preset.display_name = f"{preset.assistant_id.name} / {preset.tool_id.name}"

    # -- checked when saved ----------------------------------------------------------------------

    @api.constrains("assistant_id", "tool_id", "arguments")
    def _check_preset(self):
        for preset in self.sudo():
            tool = preset.tool_id
            if tool.server_id not in preset.assistant_id.with_context(active_test=False).mcp_server_ids:
                raise ValidationError(
                    self.env._(
                        "%(tool)s is not a tool of %(assistant)s: choose a tool of one of its MCP servers.",
                        tool=tool.display_name,
                        assistant=preset.assistant_id.name,
                    )
                )
            try:
                validate_preset(preset._parsed_arguments(), tool_schema(tool))
            except ConfigError as exc:
                raise ValidationError(
                    self.env._("Preset of %(tool)s: %(problem)s", tool=tool.display_name, problem=exc.problem)
                ) from None

    def _parsed_arguments(self):
        """The arguments as a dict; raises ConfigError naming the field."""
        self.ensure_one()
        try:
            data = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "arguments",
                f"the arguments are not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}); "
                'expected an object, e.g. {"owner": "{{user.login}}"}',
            ) from None
        if not isinstance(data, dict):
            raise ConfigError("arguments", 'the arguments must be a JSON object, e.g. {"owner": "{{user.login}}"}')
        return data

    # -- resolved for each turn ------------------------------------------------------------------

    @api.model
    def _for_turn(self, assistant, tool_ids, cloud_service=None, conversation=None, warnings=None):
        """TurnPresets of `assistant` for the tools `tool_ids` the turn offers, resolved for the
        current user, in `conversation` (of `cloud_service`).

        A tool is left out (rather than given to the model without its preset) when the preset no
        longer fits the tool's schema or references a value this turn does not have, e.g.
        {{cloud_service.name}} in a conversation without a cloud service."""
        presets = self.sudo().search([("assistant_id", "=", assistant.id), ("tool_id", "in", list(tool_ids))])
        if not presets:
            return TurnPresets({}, frozenset())
        values = self._variable_values(assistant, cloud_service, conversation)
        resolved = {}
        left_out = set()
        for preset in presets:
            tool = preset.tool_id
            try:
                arguments = preset._parsed_arguments()
                validate_preset(arguments, tool_schema(tool))
            except ConfigError as exc:
                left_out.add(tool.id)
                if warnings is not None:
                    warnings.append(
                        self.env._(
                            "%(tool)s is left out: its preset no longer fits the tool (%(problem)s).",
                            tool=tool.display_name,
                            problem=exc.problem,
                        )
                    )
                continue
            missing = sorted(name for name in variables_in(arguments) if values.get(name) in (None, ""))
            if missing:
                left_out.add(tool.id)
                if warnings is not None:
                    warnings.append(
                        self.env._(
                            "%(tool)s is left out: its preset needs {{%(variable)s}}, which this "
                            "conversation does not have.",
                            tool=tool.display_name,
                            variable=missing[0],
                        )
                    )
                continue
            resolved[tool.id] = resolve_preset(arguments, values)
        return TurnPresets(resolved, frozenset(left_out))

    @api.model
    def _variable_values(self, assistant, cloud_service=None, conversation=None):
        """{variable: value} for services.loop.presets.KNOWN_VARIABLES, None where this turn has none."""
        user = self.env.user
        company = user.sudo().company_id
        service = (cloud_service or self.env["cloud.service"]).sudo()
        return {
            "user.id": user.id,
            "user.login": user.login,
            "user.name": user.name,
            "user.email": user.email or None,
            "user.lang": user.lang or None,
            "user.tz": user.tz or None,
            "user.company_id.id": company.id or None,
            "user.company_id.name": company.name or None,
            "cloud_service.id": service.id or None,
            "cloud_service.name": service.name or None,
            "conversation.id": conversation.id if conversation else None,
            "assistant.id": assistant.id,
            "assistant.name": assistant.sudo().name,
        }


def tool_schema(tool):
    """The tool's input schema as a dict (empty when it has none or it is not JSON)."""
    try:
        schema = json.loads(tool.input_schema or "{}")
    except ValueError:
        return {}
    return schema if isinstance(schema, dict) else {}
