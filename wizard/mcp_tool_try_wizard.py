"""Try it: call one MCP tool by hand, with arguments entered through a form built from its input
schema, and see the typed result (text, images, resources, structured content or the error)."""

import base64
import binascii
import json
import logging
import re
import time

from markupsafe import Markup

from odoo import api, fields, models
from odoo.exceptions import UserError

from ..hub_process import process_hub
from ..services.errors import ADVICE, AiMcpError, ErrorCode
from ..services.json_schema import SchemaProblem
from ..services.loop import argument_problems, without_null_optionals
from ..services.tool_result import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    StructuredPart,
    TextPart,
    ToolResult,
    truncate,
)
from ..window_actions import reopen_wizard

_logger = logging.getLogger(__name__)

# What the wizard shows of one text part; the model gets its own, configured cap.
TEXT_LIMIT = 100_000
# Images are shown only as data URIs of these raster types (no SVG: it can carry script).
IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"}
IMAGE_MAX_BASE64 = 7_000_000
BASE64_RE = re.compile(r"^[A-Za-z0-9+/\s]*={0,2}\s*$")


class McpToolTryWizard(models.TransientModel):
    _name = "mcp.tool.try.wizard"
    _description = "Try an MCP tool"

    # -- the tool ----------------------------------------------------------------------------------
    tool_id = fields.Many2one("mcp.tool", string="Tool", required=True, ondelete="cascade", readonly=True)
    server_id = fields.Many2one(related="tool_id.server_id", string="Server")
    tool_name = fields.Char(related="tool_id.name", string="Tool name")
    tool_description = fields.Text(related="tool_id.description", string="Description")
    tool_review_state = fields.Selection(related="tool_id.review_state", string="Review")
    input_schema = fields.Text(compute="_compute_input_schema", string="Input schema")

    # -- the call ----------------------------------------------------------------------------------
    arguments = fields.Text(
        default="{}",
        help="The arguments sent to the tool, as a JSON object; the form above edits it.",
    )
    arguments_error = fields.Char(
        help="Set by the form while an input is invalid: the tool is not called until it is corrected."
    )
    state = fields.Selection(
        [("draft", "Not called"), ("ok", "Succeeded"), ("error", "Failed")],
        default="draft",
        readonly=True,
    )
    result_error_code = fields.Char("Error code", readonly=True)
    result_error_message = fields.Text("Error message", readonly=True)
    result_advice = fields.Char("What to do", readonly=True)
    result_html = fields.Html("Result", sanitize=False, readonly=True)
    result_duration_ms = fields.Integer("Duration (ms)", readonly=True)

    @api.depends("tool_id")
    def _compute_input_schema(self):
        for wizard in self:
            wizard.input_schema = json.dumps(_schema_of(wizard.tool_id), indent=2, ensure_ascii=False)

    # -- actions -----------------------------------------------------------------------------------
    def action_call(self):
        self.ensure_one()
        if self.arguments_error:
            raise UserError(self.env._("Correct the arguments first: %s", self.arguments_error))
        arguments = self._parsed_arguments()
        tool = self.tool_id
        # the wizard may have been created by RPC with any tool: call only one the user may read
        tool.check_access("read")
        server = tool.server_id
        schema = _schema_of(tool)
        # as on the model's calls: a null for an optional property that does not allow one is left out
        arguments = without_null_optionals(schema, arguments)
        try:
            problems = argument_problems(schema, arguments)
        except SchemaProblem as exc:
            self._show_error(
                exc.code,
                self.env._(
                    "%(tool)s cannot be called: its input schema %(reason)s.", tool=tool.name, reason=exc.reason
                ),
                0,
            )
            return self._reopen()
        if problems:
            self._show_error(
                ErrorCode.MCP_INVALID_PARAMS,
                self.env._("The arguments do not match the tool's input schema: %s", "; ".join(problems)),
                0,
            )
            return self._reopen()
        if server.transport == "odoo":
            # its calls run as a chatting user within what her assistant was given: there is no assistant here
            self._show_error(
                ErrorCode.CONFIG_INVALID,
                self.env._("This Odoo's tools are tried in the chat, with an assistant given the models they use."),
                0,
            )
            return self._reopen()
        started = time.monotonic()
        try:
            spec = server._server_spec()
            hub = process_hub()
            result = hub.run(
                hub.acall_tool(
                    spec,
                    tool.name,
                    arguments,
                    timeout=server.call_timeout or None,
                    retry_safe=bool(tool.read_only_hint or tool.idempotent_hint),
                )
            )
        except AiMcpError as exc:
            _logger.info("Try it: tool %s on server %s failed: %s", tool.name, server.display_name, exc.code.value)
            self._show_error(exc.code, exc.message, _elapsed_ms(started))
            return self._reopen()
        self._show_result(result, _elapsed_ms(started))
        return self._reopen()

    def action_reset(self):
        self.ensure_one()
        self.write(
            {
                "state": "draft",
                "result_error_code": False,
                "result_error_message": False,
                "result_advice": False,
                "result_html": False,
                "result_duration_ms": 0,
            }
        )
        return self._reopen()

    # -- helpers -----------------------------------------------------------------------------------
    def _parsed_arguments(self):
        text = (self.arguments or "").strip() or "{}"
        try:
            arguments = json.loads(text)
        except ValueError as exc:
            raise UserError(self.env._("The arguments are not valid JSON: %s", exc)) from None
        if not isinstance(arguments, dict):
            raise UserError(self.env._('The arguments must be a JSON object, e.g. {"city": "Paris"}.'))
        return arguments

    def _show_error(self, code, message, duration_ms):
        self.write(
            {
                "state": "error",
                "result_error_code": code.value,
                "result_error_message": message,
                "result_advice": ADVICE.get(code, ""),
                "result_html": False,
                "result_duration_ms": duration_ms,
            }
        )

    def _show_result(self, result, duration_ms):
        values = {
            "state": "error" if result.is_error else "ok",
            "result_error_code": False,
            "result_error_message": False,
            "result_advice": False,
            "result_html": render_result_html(self.env, result),
            "result_duration_ms": duration_ms,
        }
        if result.is_error:
            values.update(
                result_error_code=ErrorCode.MCP_EXECUTION_ERROR.value,
                result_error_message=truncate(result.text_for_model(), 2_000)
                or self.env._("The tool reported an error."),
                result_advice=ADVICE[ErrorCode.MCP_EXECUTION_ERROR],
            )
        self.write(values)

    def _reopen(self):
        return reopen_wizard(self, self.env._("Try %s", self.tool_id.display_name))


def _elapsed_ms(started):
    return int((time.monotonic() - started) * 1000)


def _schema_of(tool):
    """The tool's input schema as a dict, whether the model keeps it as JSON or as text."""
    schema = tool.input_schema if tool else None
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError:
            schema = None
    return schema if isinstance(schema, dict) else {"type": "object"}


# -- rendering a result, every value escaped -------------------------------------------------------


def render_result_html(env, result: ToolResult) -> Markup:
    """HTML for a tool result. Tool output is untrusted: text is escaped (Markup.format), and an
    image is shown only as a data URI of a raster image type with well-formed base64."""
    if not result.parts:
        return Markup('<p class="text-muted">%s</p>') % env._("The tool returned no content.")
    return Markup("").join(_render_part(env, part) for part in result.parts)


def _render_part(env, part) -> Markup:
    if isinstance(part, TextPart):
        return _block(env._("Text"), _pre(part.text))
    if isinstance(part, StructuredPart):
        return _block(env._("Structured content"), _pre(json.dumps(part.data, indent=2, ensure_ascii=False)))
    if isinstance(part, ImagePart):
        return _block(env._("Image (%s)", part.mime_type), _image(env, part.mime_type, part.data))
    if isinstance(part, AudioPart):
        return _block(
            env._("Audio (%s)", part.mime_type),
            Markup('<p class="text-muted">%s</p>') % env._("%s bytes, not played here.", len(part.data) * 3 // 4),
        )
    if isinstance(part, ResourcePart):
        title = env._("Resource %(uri)s (%(type)s)", uri=part.uri, type=part.mime_type or env._("unknown type"))
        if part.text is not None:
            return _block(title, _pre(part.text))
        if part.blob and (part.mime_type or "").split(";")[0].strip().lower() in IMAGE_TYPES:
            return _block(title, _image(env, part.mime_type, part.blob))
        size = len(part.blob or "") * 3 // 4
        return _block(title, Markup('<p class="text-muted">%s</p>') % env._("Binary content, %s bytes.", size))
    if isinstance(part, ResourceLinkPart):
        body = Markup("<p><code>{}</code></p>").format(part.uri)
        if part.description:
            body += Markup("<p>{}</p>").format(part.description)
        return _block(env._("Resource link %s", part.name), body)
    return _block(env._("Content"), _pre(str(part)))


def _block(title, body) -> Markup:
    return Markup('<div class="o_ai_mcp_result_part mb-3"><h6 class="mb-1">{}</h6>{}</div>').format(title, body)


def _pre(text) -> Markup:
    return Markup(
        '<pre class="o_ai_mcp_pre font-monospace border rounded bg-light p-2 mb-0" style="white-space: '
        'pre-wrap;">{}</pre>'
    ).format(truncate(text, TEXT_LIMIT))


def _image(env, mime_type, data) -> Markup:
    clean = "".join((data or "").split())
    mime_type = (mime_type or "").split(";")[0].strip().lower()
    if mime_type not in IMAGE_TYPES:
        return Markup('<p class="text-muted">%s</p>') % env._("Images of type %s are not shown.", mime_type)
    if len(clean) > IMAGE_MAX_BASE64 or not BASE64_RE.match(clean):
        return Markup('<p class="text-muted">%s</p>') % env._(
            "The image data is not valid base64 or too large to show."
        )
    try:
        base64.b64decode(clean, validate=True)
    except (binascii.Error, ValueError):
        return Markup('<p class="text-muted">%s</p>') % env._(
            "The image data is not valid base64 or too large to show."
        )
    return Markup('<img class="img-fluid border" style="max-height: 400px;" alt="{}" src="data:{};base64,{}"/>').format(
        env._("Image returned by the tool"), mime_type, clean
    )
