"""The tools an MCP App calls (tools/call from the app, through the chat): only tools of the app's
own server that the conversation's assistant may use and whose server lets apps call them, with
arguments checked against their schema, after the user's approval where the tool needs one (given
for this call, or remembered for the conversation or for this app). Each call is audited
(ai.tool.call, origin "app", with how it was allowed)."""

import logging
import time

from odoo import models

from ...exceptions import ChatRefused
from ...hub_process import process_hub
from ...notify import error_text
from ...services.apps import call_tool_result
from ...services.errors import AiMcpError, ErrorCode
from ...services.json_schema import SchemaProblem
from ...services.loop import argument_problems, without_null_optionals
from ...services.mcp import CallObserver
from ...services.tool_result import TextPart
from .ai_conversation_approval import approval_of

# what an app's call may send as `approved`: allowed for this call, or remembered
APPROVED_ANSWERS = {True: "once", "once": "once", "conversation": "conversation", "app": "app"}

_logger = logging.getLogger(__name__)


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _app_call_tool(self, call_id, name, arguments=None, approved=False):
        """The CallToolResult JSON {content, structuredContent?, isError} of tool `name` of the
        server of call `call_id`'s app, called with `arguments` for that app. `approved`: the
        user's answer to APPROVAL_REQUIRED: true or "once" (this call), "conversation" or "app"
        (this call, and later calls of the tool in the conversation, by anyone or by this app:
        remembered), false (not asked yet). Raises ChatRefused: APPROVAL_REQUIRED (with the tool
        and the arguments) for a tool that needs the user's approval when none was given or
        remembered; the tool's failure (unreachable, timeout...) naming it."""
        self.ensure_one()
        call = self._app_call(call_id)
        if not isinstance(name, str) or not name.strip():
            raise ChatRefused.invalid(self.env._("Name the tool to call."))
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise ChatRefused.invalid(self.env._("Send the tool's arguments as a JSON object."))
        if approved is not False and (not isinstance(approved, (bool, str)) or approved not in APPROVED_ANSWERS):
            raise ChatRefused.invalid(self.env._('Answer the approval with true, "conversation", "app" or false.'))
        try:
            binding = self._app_binding(call, name)
        except ChatRefused as refusal:
            self._app_audit(call, name, arguments, "denied", refusal)
            raise
        # a preset wins, and a null for an optional property that does not allow one is left out, as on
        # the model's calls
        sent = without_null_optionals(binding.tool.input_schema, {**arguments, **binding.fixed_arguments})
        try:
            problems = argument_problems(binding.tool.input_schema, sent)
        except SchemaProblem as exc:
            refusal = ChatRefused(
                exc.code,
                self.env._("%(tool)s cannot be called: its input schema %(reason)s.", tool=name, reason=exc.reason),
            )
            self._app_audit(call, name, arguments, "error", refusal)
            raise refusal from None
        if problems:
            refusal = ChatRefused(
                ErrorCode.MCP_INVALID_PARAMS,
                self.env._("Invalid arguments for %(tool)s: %(problems)s", tool=name, problems="; ".join(problems)),
            )
            self._app_audit(call, name, arguments, "error", refusal)
            raise refusal
        approval = self._app_approval(call, binding, arguments, approved)
        return self._app_run(call, binding, sent, approval)

    def _app_approval(self, call, binding, arguments, approved):
        """How the app's call of `binding`'s tool runs (ai_conversation_approval.APPROVALS),
        remembering the user's answer `approved` when it is for more than this call. Raises
        APPROVAL_REQUIRED when the user must be asked."""
        tool = call.server.tool_ids.filtered(lambda t: t.name == binding.tool.name)[:1]
        Approval = self.env["ai.conversation.approval"]
        approval = approval_of(tool, Approval._remembered(self), "app", call.uri)
        if approval is not None:
            return approval
        if approved is False:
            info = binding.tool
            raise ChatRefused(
                ErrorCode.APPROVAL_REQUIRED,
                self.env._("%s runs only once you allow it.", info.display_title),
                tool={"name": info.name, "title": info.display_title, "description": info.description},
                arguments=arguments,
            )
        approval = APPROVED_ANSWERS[approved]
        if approval != "once":
            Approval._remember(self, tool, approval, call.uri)
        return approval

    def _app_binding(self, call, name):
        """The ToolBinding of tool `name` of `call`'s server, when its app may call it. Raises
        ChatRefused saying why not."""
        server = call.server
        bindings = self.assistant_id.with_env(self.env)._tool_bindings(
            self.cloud_service_id.with_env(self.env), conversation=self, audience="app"
        )
        key = server._server_key()
        binding = next((b for b in bindings if b.server.key == key and b.tool.name == name), None)
        if binding is not None:
            return binding
        tool = server.tool_ids.filtered(lambda t: t.name == name)[:1]
        if not tool:
            raise ChatRefused(
                ErrorCode.MCP_TOOL_NOT_FOUND,
                self.env._(
                    "%(tool)s is not a tool of %(server)s: an app calls only the tools of its own server.",
                    tool=name,
                    server=server.name,
                ),
            )
        if tool.visibility == "model":
            raise ChatRefused(
                ErrorCode.TOOL_DENIED,
                self.env._(
                    "%(tool)s of %(server)s is for the model only: its apps may not call it.",
                    tool=name,
                    server=server.name,
                ),
            )
        raise ChatRefused(
            ErrorCode.TOOL_DENIED,
            self.env._(
                "%(tool)s of %(server)s is not available in this conversation: it is disabled, or changed since "
                "it was approved.",
                tool=name,
                server=server.name,
            ),
        )

    def _app_run(self, call, binding, arguments, approval):
        server = call.server
        info = binding.tool
        timeout = min(self.assistant_id.sudo().call_timeout, binding.server.call_timeout)
        # no card shows an app's call, so a question of its server is declined at once instead of
        # holding the app until the question's time runs out; its progress and logs go nowhere
        observer = CallObserver(call.payload["id"], _unseen)
        started = time.monotonic()
        try:
            hub = process_hub()
            result = hub.run(
                hub.acall_tool(
                    binding.server,
                    info.name,
                    arguments,
                    timeout=timeout,
                    retry_safe=info.annotations.retry_safe,
                    observer=observer,
                    tokens=server._oauth_tokens_for(self.env.user),
                )
            )
        except AiMcpError as exc:
            elapsed = _ms(started)
            _logger.info(
                "App tool call failed: server=%s tool=%s app=%s code=%s duration_ms=%d",
                server.name,
                info.name,
                call.uri,
                exc.code.value,
                elapsed,
            )
            error = error_text(exc, server)
            if observer.declined:
                error = f"{error} {self._app_unasked(info, observer.declined)}"
            refusal = ChatRefused(
                exc.code, self.env._("%(tool)s failed: %(error)s", tool=info.display_title, error=error)
            )
            self._app_audit(call, info.name, arguments, "error", refusal, elapsed, approval)
            raise refusal from None
        elapsed = _ms(started)
        _logger.info(
            "App tool call: server=%s tool=%s app=%s ok=%s duration_ms=%d",
            server.name,
            info.name,
            call.uri,
            not result.is_error,
            elapsed,
        )
        error = ErrorCode.MCP_EXECUTION_ERROR.value if result.is_error else None
        self.env["ai.tool.call"]._record_app_call(
            self,
            server,
            info.name,
            call.payload["id"],
            arguments,
            "error" if error else "ok",
            error,
            elapsed,
            approval,
        )
        parts = result.for_display()
        if observer.declined:
            _logger.info(
                "App tool call question declined: server=%s tool=%s app=%s questions=%d",
                server.name,
                info.name,
                call.uri,
                len(observer.declined),
            )
            parts.append(TextPart(text=self._app_unasked(info, observer.declined)))
        return call_tool_result(parts, result.is_error)

    def _app_unasked(self, info, questions):
        return self.env._(
            "%(tool)s asked a question that a call made by an app cannot answer, so it was declined: %(question)s",
            tool=info.display_title,
            question=" / ".join(questions),
        )

    def _app_audit(self, call, name, arguments, status, refusal, elapsed=0, approval=None):
        self.env["ai.tool.call"]._record_app_call(
            self, call.server, name, call.payload["id"], arguments, status, refusal.code.value, elapsed, approval
        )


def _unseen(_event):
    """Where an app's call's progress and log messages go: no tool block shows them."""


def _ms(started):
    return int((time.monotonic() - started) * 1000)
