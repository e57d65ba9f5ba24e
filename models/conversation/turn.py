"""What a turn of an AI conversation is given: the model's history rebuilt from the stored events,
the tools bound for the current user, and the ChatTurn that runs the loop with them."""

from functools import partial

from odoo import models

from ...companies import company_allows
from ...hub_process import process_hub
from ...odoo_tools import OdooTools
from ...services.errors import AiMcpError, ErrorCode
from ...services.events import StartEvent, ToolKey, parse_event
from ...services.llm import prompt_cache_key
from ...services.loop import HistoryMessage, SignInLink, TurnControl, TurnRequest, history_from_events, run_turn
from ...services.server_spec import Transport
from ...turn.runner import PROVIDER_MENU, ChatTurn, refused_turn_events, turn_events

# The turns read from the database for the model: the loop fits them to the model's context window
# (services/loop/context_fit.py), the oldest going first; this bounds what each turn reads, parses
# and measures before any fitting, whatever the window, in a conversation of hundreds of turns.
HISTORY_TURNS = 30
# a call left waiting for the user (an approval, a sign-in) when the conversation went on without it;
# a call that was running when its turn stopped is told apart (transcript.INTERRUPTED_CALL)
NOT_RUN_CALL = "Not run: the answer ended while this call waited to run."


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _llm_history(self, resuming):
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
        usage = spend = None
        try:
            settings = assistant._assistant_settings()
            failure = self._provider_problem(settings)
            tools = self._turn_tools(
                assistant.with_env(self.env)._tool_bindings(
                    self.cloud_service_id.with_env(self.env), warnings=warnings, conversation=self
                )
            )
            skills = assistant.with_env(self.env)._skill_bindings(self.cloud_service_id.with_env(self.env))
            grants, links = self._sign_in_access([*tools, *skills])
            spend, usage = self.env["ai.usage"]._turn_context(self, settings.llm.model)
            request = TurnRequest(
                assistant=settings,
                history=history,
                tools=tools,
                skills=skills,
                user_message=user_message,
                resume=resume,
                conversation_id=self.id,
                grants=grants,
                sign_in_links=links,
                declined=frozenset(server._server_key() for server in (declined or ()) if server.exists()),
                spent=spent,
                subject=self._subject_prompt(),
                app_contexts=self._app_contexts(),
                found_tools=tuple(ToolKey.model_validate(key) for key in self.sudo().found_tools or ()),
                prompt_cache_key=self._prompt_cache_key(),
                spend=spend,
                unattended=self._unattended(),
                local_tools=self._local_tools(tools),
            )
        except AiMcpError as exc:
            failure = exc
        hub = process_hub()
        self.env["mcp.server"]._watch_list_changes(hub)
        # a call is sent once its audit row is committed (turn/writer.py writes it as the call comes)
        control = TurnControl(audited_first=True)
        if failure is None:
            make = partial(turn_events, partial(run_turn, request, hub, control), warnings)
        else:
            make = partial(refused_turn_events, start, failure)
        return ChatTurn(
            registry=self.env.registry,
            uid=self.env.uid,
            context=dict(self.env.context),
            conversation_id=self.id,
            last_seq=last_seq,
            make=make,
            provider_hint=self._provider_hint(),
            control=control,
            audit_known=self.env["ai.tool.call"]._audit_known(self),
            resuming=resume is not None,
            usage=usage,
            spend=spend,
            stopped_message=self.env._(
                "Stopped: the connection to the browser was closed before the answer was finished."
            ),
            database_lost_message=self.env._("The answer was interrupted: it lost its database connection."),
        )

    def _turn_tools(self, bindings):
        """The tools this conversation's turn offers of `bindings` (all of them; run.py narrows them)."""
        return bindings

    def _unattended(self):
        """Whether nobody is there to answer this turn's questions (run.py: a server action's run)."""
        return False

    def _local_tools(self, bindings):
        """The runner of This Odoo's calls when the turn offers its tools: as the conversation's
        user, in the conversation's company (the turn's env works in it alone), in her language
        and time zone."""
        if not any(binding.server.transport is Transport.ODOO for binding in bindings):
            return None
        user = self.user_id.sudo()  # sudo: the conversation is read as superuser; her settings only
        # the companies the turn works in (_in_its_company); the executor keeps only hers
        companies = self.env.context.get("allowed_company_ids") or user.company_id.ids
        context = {"lang": user.lang, "tz": user.tz, "allowed_company_ids": list(companies)}
        return OdooTools(self.env.registry, user.id, context, self.assistant_id.id)

    def _prompt_cache_key(self):
        """The same for every turn of this assistant and user, and meaningless to the provider
        (services/llm/prompt_cache.py says why)."""
        secret = self.env["ir.config_parameter"].sudo().get_param("database.secret") or ""
        return prompt_cache_key(secret, self.assistant_id.id, self.env.uid)

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
            # a server Odoo gets tokens for by itself has no sign-in a link could start
            if server.oauth_token_scope == "user" and not server._oauth_by_itself():
                links[key] = SignInLink(server_id=server.id, url=server._oauth_sign_in_url(self))
        return grants, links

    def _provider_problem(self, settings):
        """An error for a provider that cannot work as configured, or not in the conversation's
        company (a provider moved there before such moves were checked), found before calling it."""
        # sudo: users chat through a provider they may not read; only its company and settings are checked
        provider = self.assistant_id.sudo().provider_id
        if not company_allows(provider):
            return AiMcpError(
                ErrorCode.CONFIG_INVALID,
                self.env._(
                    "%(assistant)s cannot answer in %(company)s: its provider %(provider)s belongs to another "
                    "company. Ask an AI manager to choose a provider of %(company)s, or a shared one, for it.",
                    assistant=self.assistant_id.sudo().name,
                    company=(self.company_id or self.env.company).name,
                    provider=provider.name,
                ),
            )
        llm = settings.llm
        if not llm.api_key.get_secret_value() and "api.openai.com" in llm.base_url:
            return AiMcpError(
                ErrorCode.LLM_AUTH_FAILED,
                self.env._(
                    "No model provider is configured: %(provider)s has no API key.",
                    provider=self.assistant_id.sudo().provider_id.name,
                ),
            )
        return None

    def _provider_hint(self):
        if self.env.user.has_group("ai_mcp.group_ai_manager"):
            return self.env._("Configure the model provider in %s.", PROVIDER_MENU)
        return self.env._("Ask an AI manager to configure the model provider in %s.", PROVIDER_MENU)


def _close_open_calls(messages):
    """Gives every tool call still without a result one saying it was not run, right after the results
    it has: a model is never sent a call it cannot match to an answer."""
    closed = []
    open_calls = []

    def settle():
        for call_id in open_calls:
            closed.append(HistoryMessage(role="tool", content=NOT_RUN_CALL, tool_call_id=call_id))
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
