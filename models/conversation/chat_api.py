"""What the chat's routes and Discuss ask of a conversation: the assistants and conversations the
user may open, a conversation's history, events and usage, and starting or resuming a turn. The
turn's input (history, tools, the ChatTurn) is in turn.py, whether it may start in admission.py,
the approvals a paused turn is answered with in approvals.py."""

import re

from odoo import api, fields, models

from ...exceptions import ChatRefused
from ...services.errors import ErrorCode
from ...services.loop import Resume
from ...turn.states import ConversationState

MAX_MESSAGE_CHARS = 32000
REQUEST_KEY = re.compile(r"[A-Za-z0-9_-]{8,64}")
TITLE_CHARS = 60


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    # -- what the HTTP routes and Discuss ask ----------------------------------------------------

    @api.model
    def _chat_assistant_list(self):
        """[{id, name, cloud_services}] the current user may chat with."""
        user = self.env.user
        if not user.has_group("ai_mcp.group_ai_user"):
            return []
        assistants = self.env["ai.assistant"].sudo().search([]).filtered(lambda a: a._user_may_use(user))
        services = (
            self.env["cloud.service"]
            .sudo()
            .search(["|", ("owner_id", "=", user.id), ("member_ids", "in", user.ids)])
            .filtered(lambda s: s._user_may_use(user))
        )
        service_list = [{"id": s.id, "name": s.name} for s in services]
        return [{"id": a.id, "name": a.name, "cloud_services": service_list} for a in assistants]

    @api.model
    def _chat_conversations(self, limit=50, assistant_id=None):
        """The current user's conversations, newest first."""
        domain = [("user_id", "=", self.env.uid), ("company_id", "in", [False, *self.env.companies.ids])]
        if assistant_id:
            domain.append(("assistant_id", "=", int(assistant_id)))
        conversations = self.sudo().search(domain, limit=max(1, min(int(limit or 50), 200)))
        return [c._chat_summary() for c in conversations]

    def _chat_summary(self):
        self.ensure_one()
        return {
            "id": self.id,
            "name": self.name,
            "assistant_id": self.assistant_id.id,
            "cloud_service_id": self.cloud_service_id.id or False,
            "state": self.state,
            "last_seq": self.last_seq,
            "rounds_used": self.rounds_used,
            "write_date": fields.Datetime.to_string(self.write_date),
        }

    def _chat_history(self):
        """What the widget rebuilds the conversation from (chat_state.js fromHistory)."""
        self.ensure_one()
        self._repair_if_stale()
        users = (
            self.env["ai.message"]
            .sudo()
            .search([("conversation_id", "=", self.id), ("role", "=", "user")], order="seq, id")
        )
        events = self.env["ai.conversation.event"].sudo().search([("conversation_id", "=", self.id)], order="seq")
        return {
            # someone else's, opened by an AI manager: the chat shows it without letting her write in it
            "conversation": {**self._chat_summary(), "read_only": self.user_id != self.env.user},
            "messages": [_history_message(m) for m in users],
            "events": events._wire(),
        }

    @api.model
    def _chat_usage(self, conversation_id=None, now=None):
        """The totals the chat shows (ai.usage `_chat_totals`); `conversation_id` must be the user's."""
        if not self.env.user.has_group("ai_mcp.group_ai_user"):
            raise ChatRefused.not_found(self.env)
        conversation = self._chat_readable(conversation_id) if conversation_id else None
        return self.env["ai.usage"]._chat_totals(conversation, now=now)

    def _chat_events_after(self, after):
        """[(seq, type, payload)] of the stored events after `after`; a turn whose process died is
        ended first (the tab that reads them follows that turn, or lost its stream)."""
        self.ensure_one()
        self._repair_if_stale()
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT seq, type, payload FROM ai_conversation_event WHERE conversation_id = %s AND seq > %s ORDER BY seq",
            (self.id, max(0, int(after))),
        )
        return self.env.cr.fetchall()

    def _sign_ins_left(self, everything=False):
        """Ids of the servers the last auth_required event asked to sign in to that the user has
        not signed in to since (all of them with `everything`): those a resume goes on without."""
        self.ensure_one()
        event = (
            self.env["ai.conversation.event"]
            .sudo()
            .search([("conversation_id", "=", self.id), ("type", "=", "auth_required")], order="seq desc", limit=1)
        )
        asked = (
            self.env["mcp.server"]
            .sudo()
            .browse([s["server_id"] for s in (event.payload or {}).get("servers", [])])
            .exists()
        )
        Token = self.env["mcp.oauth.token"]
        return [server.id for server in asked if everything or not Token._grant_of(server, self.env.user)]

    # -- starting a turn -------------------------------------------------------------------------

    @api.model
    def _chat_send(
        self,
        assistant_id,
        message,
        conversation_id=None,
        cloud_service_id=None,
        channel=None,
        request_key=None,
        app_call_id=None,
        res_model=None,
        res_id=None,
    ):
        """Claims the conversation (a new one when none is given) for a turn answering `message`,
        stores the message, and returns the ChatTurn to run. Raises ChatRefused; ALREADY_RECEIVED,
        naming the conversation, when a message named `request_key` was stored before (a start
        sent again by a browser that could not tell it had been); the admission step's refusal
        (admission.py: pace limits, spent budgets) when the user may not start a turn now.
        `app_call_id`: the call of the
        conversation whose app sends the message in the user's name. `res_model`, `res_id`: the
        record a new conversation is about (subject_chat.py), which the user must be able to read."""
        user = self.env.user
        assistant = self._usable_assistant(assistant_id)
        text = message.strip() if isinstance(message, str) else ""
        if not text:
            raise ChatRefused.invalid(self.env._("The message is empty."))
        if len(text) > MAX_MESSAGE_CHARS:
            raise ChatRefused.invalid(self.env._("The message is too long (at most %s characters).", MAX_MESSAGE_CHARS))
        self._refuse_received_again(request_key)
        if app_call_id is not None and not conversation_id:
            raise ChatRefused.invalid(self.env._("This message names an app that is not in this conversation."))
        if conversation_id and (res_model is not None or res_id is not None):
            raise ChatRefused.invalid(self.env._("A conversation keeps the record it was started about."))
        subject = self._chat_subject_values(res_model, res_id)
        conversation = self._chat_own(conversation_id) if conversation_id else self.browse()
        if conversation:
            if conversation.assistant_id != assistant:
                raise ChatRefused.not_found(self.env)
            if cloud_service_id and int(cloud_service_id) != conversation.cloud_service_id.id:
                raise ChatRefused.invalid(self.env._("A conversation keeps the cloud service it was started with."))
            service = conversation.cloud_service_id
        else:
            service = self._usable_cloud_service(cloud_service_id)
        # an open conversation is charged to its company, whichever the user works in first now
        refusal = self.with_env(conversation.env(su=self.env.su))._turn_refusal(assistant, service)
        if refusal is not None:
            raise refusal
        if not conversation:
            conversation = self.sudo().create(
                {
                    "name": _shorten(text),
                    "assistant_id": assistant.id,
                    "user_id": user.id,
                    "cloud_service_id": service.id or False,
                    "channel_id": channel.id if channel else False,
                    # the company chatted in; the assistant's or the service's when they have one
                    "company_id": (assistant.company_id or service.company_id or self.env.company).id,
                    **subject,
                }
            )
            conversation = conversation._in_its_company()
        origin = conversation._app_message_values(app_call_id) if app_call_id is not None else {}
        last_seq = conversation._claim((ConversationState.IDLE,))
        self.env["ai.message"].sudo().create(
            {
                "conversation_id": conversation.id,
                "role": "user",
                "content": text,
                "seq": last_seq,
                "request_key": request_key or False,
                **origin,
            }
        )
        history = conversation._llm_history(resuming=False)
        return conversation._prepare_turn(last_seq, history, user_message=text)

    def _refuse_received_again(self, request_key):
        """ALREADY_RECEIVED when this user's message named `request_key` is stored already."""
        if request_key is None:
            return
        if not isinstance(request_key, str) or not REQUEST_KEY.fullmatch(request_key):
            raise ChatRefused.invalid(self.env._("request_key must be 8 to 64 letters, digits, '-' or '_'."))
        stored = (
            self.env["ai.message"]
            .sudo()
            .search(
                [
                    ("request_key", "=", request_key),
                    ("role", "=", "user"),
                    ("conversation_id.user_id", "=", self.env.uid),
                ],
                limit=1,
            )
        )
        if stored:
            raise ChatRefused(
                ErrorCode.ALREADY_RECEIVED,
                self.env._("This message was received before: its answer is in the conversation."),
                conversation_id=stored.conversation_id.id,
            )

    def _chat_resume(self, approvals=None, go_on=None, sign_in=None):
        """Claims a paused conversation and returns the ChatTurn that carries on with the user's
        answer: `approvals` {call_id: true or "once" (allow), "conversation" (allow, and every later call
        of that tool in this conversation), false (deny)} after approval_required, `go_on` after confirm_continue,
        `sign_in` {declined: [server ids]} after auth_required (the servers the user goes on without)."""
        self.ensure_one()
        self._usable_assistant(self.assistant_id.id)  # the user may have lost access meanwhile
        declined_ids = []
        if self.state == ConversationState.AWAITING_APPROVAL:
            approvals = self._approvals_answered(approvals)
            resume = Resume(approvals={k: v is not False for k, v in approvals.items()})
        elif self.state == ConversationState.AWAITING_CONFIRMATION:
            if not isinstance(go_on, bool):
                raise ChatRefused.invalid(
                    self.env._("Answer with go_on: true to continue, false to get an answer now.")
                )
            resume = Resume(go_on=go_on)
        elif self.state == ConversationState.AWAITING_AUTH:
            declined_ids = sign_in.get("declined", []) if isinstance(sign_in, dict) else None
            if not isinstance(declined_ids, list) or not all(isinstance(v, int) for v in declined_ids):
                raise ChatRefused.invalid(
                    self.env._("Answer the sign-in with {declined: [ids of the servers to go on without]}."),
                )
            resume = Resume(signed_in=True)
        elif self.state == ConversationState.RUNNING:
            raise self._busy_refusal(self.state)
        else:
            raise ChatRefused(ErrorCode.NOT_WAITING, self.env._("This conversation is not waiting for an answer."))
        refusal = self._budget_refusal(self.assistant_id, self.cloud_service_id)
        if refusal is not None:
            raise refusal
        # after an approval or a sign-in the turn goes on with the time it had left;
        # "continue?" grants a whole limit again
        spent = (
            self._turn_spent()
            if self.state in (ConversationState.AWAITING_APPROVAL, ConversationState.AWAITING_AUTH)
            else 0.0
        )
        last_seq = self._claim((self.state,))
        if resume.approvals:
            self._approve_pending(approvals)
        history = self._llm_history(resuming=True)
        declined = self.env["mcp.server"].sudo().browse(declined_ids)
        return self._prepare_turn(last_seq, history, resume=resume, declined=declined, spent=spent)

    def _turn_spent(self):
        """Seconds of the answer's time limit its runs before the pause used: the pause event says
        (the time the user took to answer is never counted)."""
        self.ensure_one()
        event = (
            self.env["ai.conversation.event"]
            .sudo()
            .search(
                [("conversation_id", "=", self.id), ("type", "in", ("approval_required", "auth_required"))],
                order="seq desc",
                limit=1,
            )
        )
        return (event.payload or {}).get("turn_ms", 0) / 1000


def _history_message(message):
    shown = {"role": "user", "text": message.content or "", "seq": message.seq}
    if message.app_call_id:
        shown["app"] = {"call_id": message.app_call_id, "title": message.app_title or ""}
    return shown


def _shorten(text):
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
