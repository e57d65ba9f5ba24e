import logging
from datetime import timedelta

import psycopg2.errors

from odoo import _, api, fields, models
from odoo.exceptions import AccessError, UserError

from ..services.agent_loop import Resume, SignInLink, TurnRequest, run_turn
from ..services.call_observer import elicitation_errors
from ..services.elicitation_defaults import apply_defaults
from ..services.errors import AiMcpError, ErrorCode
from ..services.events import ErrorEvent, StartEvent, parse_event
from ..services.hub import get_hub
from ..services.transcript import HistoryMessage, history_from_events
from ..services.turn_control import TurnControl
from .chat_turn import PROVIDER_MENU, STALE_AFTER_SECONDS, ChatRefused, ChatTurn, not_found, turn_events

_logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 32000
# The model is given the last turns only: a long chat must not grow every request without bound.
HISTORY_TURNS = 30
TITLE_CHARS = 60
INTERRUPTED_CALL = "Not run: the answer was interrupted before this call finished."
# Fields only the chat runner changes (in its own transactions, as superuser).
RUNNER_FIELDS = {
    "state",
    "last_seq",
    "rounds_used",
    "turn_heartbeat",
    "user_id",
    "assistant_id",
    "cloud_service_id",
    "channel_id",
}


class AiConversation(models.Model):
    _name = "ai.conversation"
    _description = "AI Conversation"
    _order = "write_date desc, id desc"

    name = fields.Char(string="Title", required=True, default=lambda self: _("New conversation"))
    active = fields.Boolean(default=True)
    assistant_id = fields.Many2one("ai.assistant", string="Assistant", required=True, ondelete="cascade", index=True)
    user_id = fields.Many2one(
        "res.users", string="User", required=True, default=lambda self: self.env.user, ondelete="cascade", index=True
    )
    cloud_service_id = fields.Many2one(
        "cloud.service",
        string="Cloud Service",
        ondelete="set null",
        index="btree_not_null",
        help="The tools of this service's MCP servers are offered in the conversation.",
    )
    channel_id = fields.Many2one(
        "discuss.channel",
        string="Discuss Chat",
        ondelete="cascade",
        index="btree_not_null",
        help="Set when the conversation happens in a Discuss chat with the assistant.",
    )

    # -- the turn --------------------------------------------------------------------------------
    state = fields.Selection(
        [
            ("idle", "Idle"),
            ("running", "Answering"),
            ("awaiting_approval", "Waiting for Approval"),
            ("awaiting_confirmation", "Waiting for Confirmation"),
            ("awaiting_auth", "Waiting for Sign-in"),
        ],
        default="idle",
        required=True,
        readonly=True,
    )
    rounds_used = fields.Integer(default=0, readonly=True, help="Tool rounds of the last answer.")
    last_seq = fields.Integer(
        string="Last Event", default=0, readonly=True, help="Sequence number of the last stored event."
    )
    turn_heartbeat = fields.Datetime(
        readonly=True, help="Renewed while an answer runs; an answer silent for long died with its server process."
    )

    message_ids = fields.One2many("ai.message", "conversation_id", string="Messages")
    event_ids = fields.One2many("ai.conversation.event", "conversation_id", string="Events")

    def write(self, vals):
        if not self.env.su and RUNNER_FIELDS & set(vals):
            raise AccessError(_("The state of a conversation changes only by chatting in it."))
        return super().write(vals)

    def unlink(self):
        if any(conversation.state == "running" and not _stale(conversation.turn_heartbeat) for conversation in self):
            raise UserError(
                _("A conversation cannot be deleted while it is answering; stop it or wait for the answer.")
            )
        return super().unlink()

    # -- what the HTTP routes and Discuss ask ----------------------------------------------------

    @api.model
    def _chat_assistants(self):
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
        domain = [("user_id", "=", self.env.uid)]
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

    @api.model
    def _chat_own(self, conversation_id):
        """The current user's conversation (sudo), or 404 whether it is missing or someone else's."""
        try:
            conversation = self.sudo().browse(int(conversation_id)).exists()
        except (TypeError, ValueError):
            raise not_found() from None
        if (
            not conversation
            or conversation.user_id != self.env.user
            or not self.env.user.has_group("ai_mcp.group_ai_user")
        ):
            raise not_found()
        return conversation

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
            "conversation": self._chat_summary(),
            "messages": [{"role": "user", "text": m.content or "", "seq": m.seq} for m in users],
            "events": events._wire(),
        }

    def _chat_events_after(self, after):
        """[(seq, type, payload)] of the stored events after `after`."""
        self.ensure_one()
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT seq, type, payload FROM ai_conversation_event WHERE conversation_id = %s AND seq > %s ORDER BY seq",
            (self.id, max(0, int(after))),
        )
        return self.env.cr.fetchall()

    def _chat_cancel_call(self, call_id):
        """Ask the running turn to stop the call `call_id`: True when it was running."""
        self.ensure_one()
        call = (
            self.env["ai.message"]
            .sudo()
            .search(
                [
                    ("conversation_id", "=", self.id),
                    ("role", "=", "tool"),
                    ("tool_call_id", "=", str(call_id)),
                    ("status", "=", "running"),
                ],
                order="id desc",
                limit=1,
            )
        )
        call.write({"status": "cancelling"})
        return bool(call)

    def _chat_answer_elicitation(self, call_id, elicitation, action, content=None):
        """The user's answer to the question a running call's server asked; a form answer gets the
        default of each field it leaves out. Returns {answered} or {answered: False, errors} when the
        form content does not fit the requested schema."""
        self.ensure_one()
        if action not in ("accept", "decline", "cancel"):
            raise ChatRefused(400, "INVALID_REQUEST", _("Answer with accept, decline or cancel."))
        call = (
            self.env["ai.message"]
            .sudo()
            .search(
                [
                    ("conversation_id", "=", self.id),
                    ("role", "=", "tool"),
                    ("tool_call_id", "=", str(call_id)),
                    ("status", "=", "running"),
                ],
                order="id desc",
                limit=1,
            )
        )
        question = self._open_question(str(call_id), str(elicitation)) if call else None
        if question is None:
            return {"answered": False, "errors": [_("This question is closed: its call has ended.")]}
        form = action == "accept" and question.get("mode") == "form"
        schema = question.get("requested_schema") or {}
        # a field left out gets its default, then the whole answer is checked as the server will see it
        content = apply_defaults(schema, content or {}) if form else None
        errors = elicitation_errors(schema, content) if form else []
        if errors:
            return {"answered": False, "errors": errors}
        call.elicitation_answer = {"elicitation": question["elicitation"], "action": action, "content": content}
        return {"answered": True}

    def _open_question(self, call_id, elicitation):
        """The payload of the elicitation_required event `elicitation` of call `call_id`, while no
        elicitation_done closed it; None otherwise."""
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT type, payload FROM ai_conversation_event WHERE conversation_id = %s"
            " AND type IN ('elicitation_required', 'elicitation_done') AND payload->>'elicitation' = %s AND payload->>'id' = %s"
            " ORDER BY seq",
            (self.id, elicitation, call_id),
        )
        rows = self.env.cr.fetchall()
        if len(rows) != 1 or rows[0][0] != "elicitation_required":
            return None
        return rows[0][1]

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

    def _pending_call_ids(self):
        """Ids of the calls the last approval_required event asked about."""
        self.ensure_one()
        event = (
            self.env["ai.conversation.event"]
            .sudo()
            .search([("conversation_id", "=", self.id), ("type", "=", "approval_required")], order="seq desc", limit=1)
        )
        return [call["id"] for call in (event.payload or {}).get("calls", [])]

    # -- starting a turn -------------------------------------------------------------------------

    @api.model
    def _chat_send(self, assistant_id, message, conversation_id=None, cloud_service_id=None, channel=None):
        """Claims the conversation (a new one when none is given) for a turn answering `message`,
        stores the message, and returns the ChatTurn to run. Raises ChatRefused."""
        user = self.env.user
        assistant = self._chat_assistant(assistant_id)
        text = message.strip() if isinstance(message, str) else ""
        if not text:
            raise ChatRefused(400, "INVALID_REQUEST", _("The message is empty."))
        if len(text) > MAX_MESSAGE_CHARS:
            raise ChatRefused(
                400, "INVALID_REQUEST", _("The message is too long (at most %s characters).", MAX_MESSAGE_CHARS)
            )
        if conversation_id:
            conversation = self._chat_own(conversation_id)
            if conversation.assistant_id != assistant:
                raise not_found()
            if cloud_service_id and int(cloud_service_id) != conversation.cloud_service_id.id:
                raise ChatRefused(
                    400, "INVALID_REQUEST", _("A conversation keeps the cloud service it was started with.")
                )
        else:
            service = self._chat_cloud_service(cloud_service_id)
            conversation = self.sudo().create(
                {
                    "name": _shorten(text),
                    "assistant_id": assistant.id,
                    "user_id": user.id,
                    "cloud_service_id": service.id or False,
                    "channel_id": channel.id if channel else False,
                }
            )
        last_seq = conversation._claim(("idle",))
        self.env["ai.message"].sudo().create(
            {"conversation_id": conversation.id, "role": "user", "content": text, "seq": last_seq}
        )
        history = conversation._history(resuming=False)
        return conversation._prepare_turn(last_seq, history, user_message=text)

    def _chat_resume(self, approvals=None, go_on=None, sign_in=None):
        """Claims a paused conversation and returns the ChatTurn that carries on with the user's
        answer: `approvals` {call_id: bool} after approval_required, `go_on` after confirm_continue,
        `sign_in` {declined: [server ids]} after auth_required (the servers the user goes on without)."""
        self.ensure_one()
        self._chat_assistant(self.assistant_id.id)  # the user may have lost access meanwhile
        declined_ids = []
        if self.state == "awaiting_approval":
            if not isinstance(approvals, dict) or not all(isinstance(v, bool) for v in approvals.values()):
                raise ChatRefused(400, "INVALID_REQUEST", _("Answer the approval with {call id: true or false}."))
            resume = Resume(approvals={str(k): v for k, v in approvals.items()})
        elif self.state == "awaiting_confirmation":
            if not isinstance(go_on, bool):
                raise ChatRefused(
                    400, "INVALID_REQUEST", _("Answer with go_on: true to continue, false to get an answer now.")
                )
            resume = Resume(go_on=go_on)
        elif self.state == "awaiting_auth":
            declined_ids = sign_in.get("declined", []) if isinstance(sign_in, dict) else None
            if not isinstance(declined_ids, list) or not all(isinstance(v, int) for v in declined_ids):
                raise ChatRefused(
                    400,
                    "INVALID_REQUEST",
                    _("Answer the sign-in with {declined: [ids of the servers to go on without]}."),
                )
            resume = Resume(signed_in=True)
        elif self.state == "running":
            raise _busy(self.state)
        else:
            raise ChatRefused(409, "NOT_WAITING", _("This conversation is not waiting for an answer."))
        # after an approval or a sign-in the turn goes on with the time it had left;
        # "continue?" grants a whole limit again
        spent = self._turn_spent() if self.state in ("awaiting_approval", "awaiting_auth") else 0.0
        last_seq = self._claim((self.state,))
        history = self._history(resuming=True)
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

    @api.model
    def _chat_assistant(self, assistant_id):
        try:
            assistant = self.env["ai.assistant"].sudo().browse(int(assistant_id)).exists()
        except (TypeError, ValueError):
            raise not_found() from None
        if not assistant or not assistant._user_may_use(self.env.user):
            raise not_found()
        return assistant

    @api.model
    def _chat_cloud_service(self, cloud_service_id):
        if not cloud_service_id:
            return self.env["cloud.service"]
        try:
            service = self.env["cloud.service"].sudo().browse(int(cloud_service_id)).exists()
        except (TypeError, ValueError):
            raise not_found() from None
        if not service or not service._user_may_use(self.env.user):
            raise not_found()
        return service

    def _claim(self, expected_states):
        """Marks the conversation running, unless another turn holds it (409). A row lock taken
        without waiting serializes two requests claiming at once; the state, committed with the
        request before the answer streams, refuses any later one. Returns the last event seq."""
        self.ensure_one()
        state, last_seq = self._lock_state()
        if state not in expected_states:
            raise _busy(state)
        now = fields.Datetime.now()
        self.env.cr.execute(
            "UPDATE ai_conversation SET state = 'running', turn_heartbeat = %s, write_date = %s WHERE id = %s",
            (now, now, self.id),
        )
        self.invalidate_recordset(["state", "turn_heartbeat", "write_date"])
        return last_seq

    def _lock_state(self):
        """(state, last_seq) under a row lock taken without waiting (409 when another request holds
        it). A turn left running by a process that died is ended here first."""
        cr = self.env.cr
        self.flush_recordset()
        try:
            with cr.savepoint(flush=False):
                cr.execute(
                    "SELECT state, last_seq, turn_heartbeat FROM ai_conversation WHERE id = %s FOR UPDATE NOWAIT",
                    (self.id,),
                )
                state, last_seq, heartbeat = cr.fetchone()
        except psycopg2.errors.LockNotAvailable:
            raise _busy("running") from None
        if state == "running" and _stale(heartbeat):
            last_seq = self._abandon_stale_turn(last_seq)
            state = "idle"
        return state, last_seq or 0

    def _repair_if_stale(self):
        """A conversation left running by a process that died is idle again, and says so."""
        for conversation in self.sudo():
            if conversation.state == "running" and _stale(conversation.turn_heartbeat):
                try:
                    conversation._lock_state()
                except ChatRefused:
                    continue  # someone is taking it over right now

    def _abandon_stale_turn(self, last_seq):
        seq = last_seq + 1
        error = ErrorEvent(
            code=ErrorCode.CANCELLED.value,
            message=_("The answer was interrupted: the server stopped while it ran."),
        )
        self.env["ai.conversation.event"].sudo().create(
            {"conversation_id": self.id, "seq": seq, "type": error.type, "payload": error.data()}
        )
        self.env["ai.message"].sudo().search(
            [("conversation_id", "=", self.id), ("role", "=", "tool"), ("status", "in", ("running", "pending"))]
        ).write({"status": "error", "error_code": error.code})
        self.env["ai.conversation.event"].flush_model()
        self.env["ai.message"].flush_model()
        self.env.cr.execute(
            "UPDATE ai_conversation SET last_seq = %s, state = 'idle', turn_heartbeat = NULL WHERE id = %s",
            (seq, self.id),
        )
        self.invalidate_recordset(["state", "turn_heartbeat", "last_seq"])
        _logger.info("AI conversation %s: took over a turn whose process stopped", self.id)
        return seq

    # -- the loop's input ------------------------------------------------------------------------

    def _history(self, resuming):
        """The messages the model saw, rebuilt from the stored events turn by turn (a turn: a user
        message and the events after it). Calls an earlier turn left without a result get one, so
        the model is never shown a call it cannot match; the last turn stays as it is when it is
        being resumed (its unanswered calls are what the approval is about)."""
        self.ensure_one()
        users = (
            self.env["ai.message"]
            .sudo()
            .search(
                [("conversation_id", "=", self.id), ("role", "=", "user")],
                order="seq desc, id desc",
                limit=HISTORY_TURNS + 1,
            )
        )
        users = users.sorted(lambda m: (m.seq, m.id))
        if not resuming:
            users = users[:-1]  # the message being answered now is the turn's user_message
        if not users:
            return []
        self.env["ai.conversation.event"].flush_model()
        self.env.cr.execute(
            "SELECT seq, payload FROM ai_conversation_event WHERE conversation_id = %s AND seq > %s ORDER BY seq",
            (self.id, users[0].seq),
        )
        parsed = [(seq, parse_event(payload)) for seq, payload in self.env.cr.fetchall()]
        history = []
        for index, user in enumerate(users):
            upper = users[index + 1].seq if index + 1 < len(users) else None
            turn = [event for seq, event in parsed if seq > user.seq and (upper is None or seq <= upper)]
            messages = history_from_events(turn, user_message=user.content or "")
            last = index == len(users) - 1
            history += messages if (resuming and last) else _close_open_calls(messages)
        return history

    def _prepare_turn(self, last_seq, history, user_message=None, resume=None, declined=None, spent=0.0):
        """The ChatTurn for this conversation: settings, tools bound for the current user now, history."""
        self.ensure_one()
        assistant = self.assistant_id.sudo()
        start = StartEvent(conversation_id=self.id, assistant=assistant.name, max_rounds=assistant.max_rounds)
        warnings = []
        failure = None
        request = None
        try:
            settings = assistant._assistant_settings()
            failure = self._provider_problem(settings)
            tools = assistant.with_env(self.env)._tool_bindings(
                self.cloud_service_id.with_env(self.env), warnings=warnings, conversation=self
            )
            grants, links = self._sign_in_access(tools)
            request = TurnRequest(
                assistant=settings,
                history=history,
                tools=tools,
                user_message=user_message,
                resume=resume,
                conversation_id=self.id,
                grants=grants,
                sign_in_links=links,
                declined=frozenset(server._server_key() for server in (declined or ()) if server.exists()),
                spent=spent,
            )
        except AiMcpError as exc:
            failure = exc
        hub = get_hub()
        self.env["mcp.server"]._watch_list_changes(hub)
        control = TurnControl()
        make_loop = (lambda: run_turn(request, hub, control)) if request is not None and failure is None else None
        return ChatTurn(
            registry=self.env.registry,
            uid=self.env.uid,
            context=dict(self.env.context),
            conversation_id=self.id,
            last_seq=last_seq,
            assistant_name=assistant.name,
            max_rounds=assistant.max_rounds,
            make=lambda: turn_events(make_loop, warnings, failure, start),
            provider_hint=self._provider_hint(),
            control=control,
            audit_known=self.env["ai.tool.call"]._audit_known(self),
            resuming=resume is not None,
            stopped_message=_("Stopped: the connection to the browser was closed before the answer was finished."),
        )

    def _sign_in_access(self, bindings):
        """({server key: grant}, {server key: SignInLink}) for the OAuth servers of `bindings`: the
        grant the current user calls with, and, on a per-user server, where they sign in."""
        keys = {binding.server.key for binding in bindings if binding.server.auth_type.value == "oauth"}
        grants, links = {}, {}
        for server in self.env["mcp.server"].sudo().browse(sorted(int(key.rsplit("/", 1)[1]) for key in keys)):
            key = server._server_key()
            grant = server._oauth_grant(self.env.user)
            if grant is not None:
                grants[key] = grant
            if server.oauth_token_scope == "user":
                links[key] = SignInLink(server_id=server.id, url=server._oauth_sign_in_url(self))
        return grants, links

    def _provider_problem(self, settings):
        """An error for a provider that cannot work as configured, found before calling it."""
        llm = settings.llm
        if not llm.api_key.get_secret_value() and "api.openai.com" in llm.base_url:
            return AiMcpError(
                ErrorCode.LLM_AUTH_FAILED,
                _(
                    "No model provider is configured: %(provider)s has no API key.",
                    provider=self.assistant_id.sudo().provider_id.name,
                ),
            )
        return None

    def _provider_hint(self):
        if self.env.user.has_group("ai_mcp.group_ai_manager"):
            return _("Configure the model provider in %s.", PROVIDER_MENU)
        return _("Ask an AI manager to configure the model provider in %s.", PROVIDER_MENU)


def _shorten(text):
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _stale(heartbeat):
    return not heartbeat or fields.Datetime.now() - heartbeat > timedelta(seconds=STALE_AFTER_SECONDS)


def _busy(state):
    if state in ("awaiting_approval", "awaiting_confirmation"):
        message = _("This conversation waits for your answer to its question; answer it first.")
    elif state == "awaiting_auth":
        message = _("This conversation waits for you to sign in (or to go on without signing in); answer it first.")
    else:
        message = _("This conversation is answering another message; wait for it to finish.")
    return ChatRefused(409, "CONVERSATION_BUSY", message)


def _close_open_calls(messages):
    """Gives every tool call without a result one saying it was not run, right after the results
    it has: a model is never sent a call it cannot match to an answer."""
    closed = []
    open_calls = []

    def settle():
        for call_id in open_calls:
            closed.append(HistoryMessage(role="tool", content=INTERRUPTED_CALL, tool_call_id=call_id))
        open_calls.clear()

    for message in messages:
        if message.role == "tool":
            if message.tool_call_id in open_calls:
                open_calls.remove(message.tool_call_id)
            closed.append(message)
            continue
        settle()
        closed.append(message)
        if message.role == "assistant":
            open_calls.extend(call.id for call in message.tool_calls)
    settle()
    return closed
