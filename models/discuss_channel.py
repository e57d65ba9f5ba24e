"""Chatting with an assistant in Discuss: the same agent loop, answered with a message.

A message posted in a chat with an assistant's partner runs a turn once the message is committed
(the turn writes its events in transactions of its own, which must see the message and its
conversation). The reply is posted as the assistant, with a compact, expandable summary of the
tool calls. A turn that needs the user's approval, or asks whether to go on, asks in the chat and
the next message answers it ("yes" / "no"). One that needs the user to sign in to a server
replies with the sign-in link; the next message goes on, with that server if the user signed in
meanwhile, without it ("no") otherwise.
"""

import functools
import json
import logging
import re
from dataclasses import dataclass, field

from markupsafe import Markup

from odoo import api, models
from odoo.tools import html2plaintext, html_sanitize, plaintext2html

from ..exceptions import ChatRefused
from ..services.events import (
    FINAL_TYPES,
    ApprovalRequiredEvent,
    AuthRequiredEvent,
    ConfirmContinueEvent,
    ErrorEvent,
    WarningEvent,
)
from ..services.markdown_html import markdown_to_html
from ..turn.runner import ChatTurn
from ..turn.states import ConversationState

_logger = logging.getLogger(__name__)

YES = {
    "yes",
    "y",
    "ok",
    "okay",
    "allow",
    "approve",
    "go",
    "go on",
    "continue",
    "sure",
    "oui",
    "ja",
    "sí",
    "si",
    "是",
    "好",
}
NO = {"no", "n", "deny", "stop", "cancel", "non", "nein", "否", "不"}
RESULT_PREVIEW_CHARS = 300
ARGUMENTS_PREVIEW_CHARS = 200


class DiscussChannel(models.Model):
    _inherit = "discuss.channel"

    def _message_post_after_hook(self, message, msg_vals):
        if len(self) == 1 and self.channel_type == "chat" and message.message_type == "comment":
            self._ai_mcp_schedule_reply(message)
        return super()._message_post_after_hook(message, msg_vals)

    def _ai_mcp_assistant(self):
        """The assistant this chat is with (sudo; archived ones too), if any."""
        self.ensure_one()
        partners = self.sudo().channel_member_ids.partner_id
        if not partners:
            return self.env["ai.assistant"]
        return (
            self.env["ai.assistant"]
            .sudo()
            .with_context(active_test=False)
            .search([("partner_id", "in", partners.ids)], limit=1)
        )

    def _ai_mcp_schedule_reply(self, message):
        assistant = self._ai_mcp_assistant()
        if not assistant or message.author_id == assistant.partner_id:
            return
        user = self.env.user
        if user._is_public() or message.author_id != user.partner_id:
            return
        text = html2plaintext(message.body or "").strip()
        if not text:
            return
        self.env.cr.postcommit.add(
            functools.partial(
                _reply_after_commit, self.env.registry, user.id, dict(self.env.context), self.id, assistant.id, text
            )
        )

    # -- the turn --------------------------------------------------------------------------------

    def _ai_mcp_start(self, assistant, text):
        """A ChatTurn answering `text`, or the text to answer at once (a refusal, a reminder)."""
        self.ensure_one()
        user = self.env.user
        other_company = assistant._other_company_refusal(user)
        if other_company:
            return other_company
        if not assistant.active or not assistant._user_may_use(user):
            return self.env._(
                "Sorry, you are not allowed to chat with %s. Ask an AI manager for access.", assistant.name
            )
        Conversation = self.env["ai.conversation"]
        conversation = Conversation.sudo().search(
            [("channel_id", "=", self.id), ("user_id", "=", user.id), ("assistant_id", "=", assistant.id)],
            order="id desc",
            limit=1,
        )
        if conversation:
            conversation = conversation._in_its_company()
            conversation._repair_if_stale()
        try:
            if conversation.state == ConversationState.AWAITING_APPROVAL:
                answer = _yes_no(text)
                if answer is None:
                    return self.env._("Please reply yes to allow the tool calls, or no to deny them.")
                return conversation._chat_resume(
                    approvals={call_id: answer for call_id in conversation._pending_call_ids()}
                )
            if conversation.state == ConversationState.AWAITING_AUTH:
                return conversation._chat_resume(
                    sign_in={"declined": conversation._sign_ins_left(everything=_yes_no(text) is False)}
                )
            if conversation.state == ConversationState.AWAITING_CONFIRMATION:
                answer = _yes_no(text)
                if answer is None:
                    return self.env._("Please reply yes to let me use more tools, or no to get my answer now.")
                return conversation._chat_resume(go_on=answer)
            return Conversation._chat_send(assistant.id, text, conversation_id=conversation.id or None, channel=self)
        except ChatRefused as refusal:
            return refusal.message

    def _ai_mcp_post(self, assistant, body):
        self.ensure_one()
        partner = assistant._discuss_partner()
        member = self.sudo().channel_member_ids.filtered(lambda m: m.partner_id == partner)
        if member:
            member._notify_typing(False)
        return (
            self.sudo()
            .with_context(mail_create_nosubscribe=True)
            .message_post(body=body, author_id=partner.id, message_type="comment", subtype_xmlid="mail.mt_comment")
        )

    def _ai_mcp_typing(self, assistant):
        member = self.sudo().channel_member_ids.filtered(lambda m: m.partner_id == assistant.partner_id)
        if member:
            member._notify_typing(True)

    def _ai_mcp_render(self, outcome):
        """The reply's HTML: the answer (its Markdown rendered, as in the chat widget), a compact
        expandable summary of the tool calls, and the question when the turn waits for the user."""
        _ = self.env._
        if outcome is None:
            return plaintext2html(
                self.env._("Sorry, something went wrong while answering; the details are in the server log.")
            )
        if isinstance(outcome, str):
            return plaintext2html(outcome)
        parts = []
        if outcome.reply:
            parts.append(Markup(html_sanitize(markdown_to_html(outcome.reply))))
        calls = [
            (outcome.calls.get(result.id) or self._ai_mcp_stored_call(outcome.conversation_id, result.id), result)
            for result in outcome.results
        ]
        if calls:
            parts.append(self._ai_mcp_tool_summary(calls))
            parts += self._ai_mcp_app_links(outcome.conversation_id, calls)
        final = outcome.final
        if isinstance(final, ApprovalRequiredEvent):
            items = Markup("").join(
                Markup("<li><b>%s</b> <small>(%s)</small> <code>%s</code></li>")
                % (call.title or call.tool, call.server, _shorten(_json(call.arguments), ARGUMENTS_PREVIEW_CHARS))
                for call in final.calls
            )
            intro = (
                self.env._("I would like to run this tool:")
                if len(final.calls) == 1
                else self.env._("I would like to run these tools:")
            )
            parts.append(
                Markup("<p>%s</p><ul>%s</ul><p><b>%s</b></p>")
                % (intro, items, self.env._("Reply yes to allow, or no to deny."))
            )
        elif isinstance(final, AuthRequiredEvent):
            base = self.get_base_url().rstrip("/")
            links = Markup("").join(
                Markup('<li>%s <a href="%s" target="_blank" rel="noopener">%s</a></li>')
                % (server.message, base + server.url, self.env._("Sign in to %s", server.server))
                for server in final.servers
            )
            parts.append(
                Markup("<ul>%s</ul><p><b>%s</b></p>")
                % (links, self.env._("Reply when you have signed in, and I will go on; reply no to go on without it."))
            )
        elif isinstance(final, ConfirmContinueEvent):
            parts.append(
                plaintext2html(
                    self.env._(
                        "I have used %(used)s of my %(max)s tool rounds. "
                        "Reply yes to let me go on, or no to get my answer now.",
                        used=final.rounds_used,
                        max=final.max_rounds,
                    )
                )
            )
        elif isinstance(final, ErrorEvent):
            parts.append(
                Markup("<p><i>%s</i></p>")
                % self.env._("I could not finish: %(message)s (%(code)s)", message=final.message, code=final.code)
            )
        elif not parts:
            parts.append(plaintext2html(self.env._("I have no answer to that.")))
        for warning in dict.fromkeys(outcome.warnings):
            parts.append(Markup("<p><small><i>%s</i></small></p>") % warning)
        return Markup("").join(parts)

    def _ai_mcp_tool_summary(self, calls):
        _ = self.env._
        items = []
        for call, result in calls:
            if result.ok:
                status = self.env._("done")
            elif result.error_code == "TOOL_DENIED":
                status = self.env._("denied")
            else:
                status = self.env._("failed: %s", result.error_code or "")
            preview = result.model_text if result.ok else (result.error_message or result.model_text)
            items.append(
                Markup("<li><b>%s</b> <small>(%s)</small> <code>%s</code> — %s, %s ms<br/><small>%s</small></li>")
                % (
                    call["title"],
                    call["server"],
                    _shorten(_json(call["arguments"]), ARGUMENTS_PREVIEW_CHARS),
                    status,
                    result.duration_ms,
                    _shorten(preview, RESULT_PREVIEW_CHARS),
                )
            )
        summary = self.env._("Used 1 tool") if len(calls) == 1 else self.env._("Used %s tools", len(calls))
        return Markup("<details><summary>🔧 %s</summary><ul>%s</ul></details>") % (summary, Markup("").join(items))

    def _ai_mcp_app_links(self, conversation_id, calls):
        """A link to the conversation in the AI chat for each tool of the answer that has an app:
        Discuss shows no app, the chat shows it in the tool's block."""
        titles = dict.fromkeys(
            call["title"] for call, result in calls if call.get("app") and result.error_code != "TOOL_DENIED"
        )
        if not titles:
            return []
        url = f"{self.get_base_url().rstrip('/')}/odoo/{conversation_id}/action-ai_mcp.action_ai_chat"
        return [
            Markup('<p><a href="%s">%s</a></p>') % (url, self.env._("Open %s in the chat", title)) for title in titles
        ]

    def _ai_mcp_stored_call(self, conversation_id, call_id):
        """A call made in an earlier run of the turn (before the user approved it), as its
        tool_call event showed it."""
        events = (
            self.env["ai.conversation.event"]
            .sudo()
            .search([("conversation_id", "=", conversation_id), ("type", "=", "tool_call")], order="seq desc")
        )
        shown = next((e.payload for e in events if (e.payload or {}).get("id") == call_id), {})
        return {
            "title": shown.get("title") or shown.get("tool") or call_id,
            "server": shown.get("server") or "",
            "arguments": shown.get("arguments") or {},
            "app": shown.get("app"),
        }


@dataclass
class Outcome:
    """What a turn produced, for the chat message."""

    conversation_id: int
    reply: str = ""
    calls: dict = field(default_factory=dict)
    results: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    final: object = None

    @classmethod
    def of(cls, turn):
        """Runs the turn to its end."""
        outcome = cls(turn.conversation_id)
        text, answer = [], []
        for item in turn.events():
            if item is None:
                continue
            _seq, event = item
            kind = event.type
            if kind == "text":
                text.append(event.delta)
                answer.append(event.delta)
            elif kind in ("round", "tool_call", "tool_result"):
                answer = []  # the reply is what the model said after its last tools
                if kind == "tool_call":
                    outcome.calls[event.id] = {
                        "title": event.title or event.tool,
                        "server": event.server,
                        "arguments": event.arguments,
                        "app": event.app,
                    }
                elif kind == "tool_result":
                    outcome.results.append(event)
            elif isinstance(event, WarningEvent):
                outcome.warnings.append(event.message)
            if kind in FINAL_TYPES:
                outcome.final = event
        outcome.reply = "".join(answer).strip() or "".join(text).strip()
        return outcome


def _reply_after_commit(registry, uid, context, channel_id, assistant_id, text):
    """Runs after the user's message is committed: answers it in the chat. Never raises (it runs
    in a post-commit hook); what goes wrong is logged and said in the chat."""
    outcome = None
    try:
        with registry.cursor() as cr:
            env = api.Environment(cr, uid, context)
            channel = env["discuss.channel"].browse(channel_id)
            assistant = env["ai.assistant"].sudo().browse(assistant_id)
            outcome = channel._ai_mcp_start(assistant, text)
            if isinstance(outcome, ChatTurn):
                channel._ai_mcp_typing(assistant)
        if isinstance(outcome, ChatTurn):
            outcome = Outcome.of(outcome)
    except Exception:  # noqa: BLE001 - a post-commit hook must not break the request that posted
        _logger.exception("AI assistant could not answer in Discuss: channel=%s", channel_id)
        outcome = None
    try:
        with registry.cursor() as cr:
            env = api.Environment(cr, uid, context)
            channel = env["discuss.channel"].browse(channel_id)
            channel._ai_mcp_post(env["ai.assistant"].sudo().browse(assistant_id), channel._ai_mcp_render(outcome))
    except Exception:  # noqa: BLE001
        _logger.exception("AI assistant could not post its answer in Discuss: channel=%s", channel_id)


def _yes_no(text):
    words = re.sub(r"[\s.!。！]+$", "", text.strip().lower())
    if words in YES:
        return True
    if words in NO:
        return False
    return None


def _json(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _shorten(text, limit):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
