"""A run of an assistant that a server action ("Run an AI assistant") queued for one record.

The action only queues: a run's turn never runs in the transaction, nor the web worker, that
triggered it. The cron "AI: Run assistants for server actions" takes the runs one by one, each in
transactions of its own committed as it goes, so a batch of hundreds survives a restart.

Each record is run once. A worker holds a run by a transaction-level advisory lock on a cursor
kept open while it runs: the lock goes with the worker's connection, so a run left 'running' whose
lock nobody holds was left by a process that died (no timeout is needed to tell). Such a run is
tried again when none of its tool calls had started (nothing of it reached a server), and failed
otherwise, saying so on the record: a tool may have acted, and running it again could act twice.
"""

import logging

from markupsafe import Markup

from odoo import SUPERUSER_ID, api, fields, models
from odoo.exceptions import AccessError, MissingError, UserError
from odoo.tools import html_sanitize

from ..exceptions import ChatRefused
from ..odoo_compat import cron_progress
from ..services.errors import ErrorCode
from ..services.markdown_html import markdown_to_html
from .discuss_channel import Outcome

_logger = logging.getLogger(__name__)

# the advisory lock namespace of the runs (pg_try_advisory_xact_lock(key, run id))
RUN_LOCK_KEY = 0x41494D52  # "AIMR"
# runs one cron call takes before it reports its progress (Odoo calls it again while some remain)
RUNS_PER_CALL = 10
# candidates read at once when looking for a run no other worker holds
CANDIDATES = 50
STATES = [("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")]


class RunRefused(Exception):
    """A run that cannot start or finish, with the translated sentence said on its record."""


class AiAssistantRun(models.Model):
    _name = "ai.assistant.run"
    _description = "AI Assistant Run"
    _order = "id desc"

    action_id = fields.Many2one(
        "ir.actions.server", string="Server Action", required=True, readonly=True, ondelete="cascade", index=True
    )
    assistant_id = fields.Many2one(related="action_id.ai_assistant_id", string="Assistant")
    res_model = fields.Char("Related Document Model", required=True, readonly=True, index=True)
    res_id = fields.Many2oneReference("Related Document ID", model_field="res_model", required=True, readonly=True)
    user_id = fields.Many2one(
        "res.users", string="Run As", required=True, readonly=True, index=True, ondelete="cascade"
    )
    state = fields.Selection(STATES, default="queued", required=True, readonly=True, index=True)
    conversation_id = fields.Many2one("ai.conversation", readonly=True, ondelete="set null", index="btree_not_null")
    usage_cost = fields.Float(related="conversation_id.usage_cost", string="Cost")
    usage_tokens = fields.Integer(related="conversation_id.usage_tokens", string="Tokens")
    attempts = fields.Integer(readonly=True, default=0)
    wait_until = fields.Datetime(
        readonly=True, help="Not taken before then: the pace limits of the user it runs as said when it may start."
    )
    error = fields.Text(string="Why It Failed", readonly=True)
    date_done = fields.Datetime(string="Finished", readonly=True)

    # -- queueing --------------------------------------------------------------------------------

    @api.model
    def _enqueue(self, action, records, user):
        """Queue a run of `action` for each of `records` as `user`, and wake the cron up. A record
        that waits for a run of this action already (a schedule that comes round before its last
        batch is done) is not queued again."""
        # sudo: the runs are the action's bookkeeping; whoever triggers it need not read them
        Run = self.sudo()
        waiting = Run.search(
            [
                ("action_id", "=", action.id),
                ("res_model", "=", records._name),
                ("res_id", "in", records.ids),
                ("state", "in", ("queued", "running")),
            ]
        )
        records = records.browse(sorted(set(records.ids) - set(waiting.mapped("res_id"))))
        runs = Run.create(
            [
                {"action_id": action.id, "res_model": record._name, "res_id": record.id, "user_id": user.id}
                for record in records
            ]
        )
        # sudo: a user who triggers the action may not read crons; this only wakes the queue's cron
        self.env.ref("ai_mcp.ir_cron_ai_assistant_run").sudo()._trigger()
        _logger.info("AI runs queued: action=%s records=%s user=%s", action.id, len(runs), user.id)
        return runs

    # -- the cron ----------------------------------------------------------------------------------

    @api.model
    def _cron_run(self, limit=RUNS_PER_CALL):
        """Run the queued runs, at most `limit` in this call, each committed when it ends."""
        done, more = 0, True
        while more and done < limit:
            more = self._run_next()
            if more is None:
                break
            done += 1
        # none left to take: what other workers hold they finish, and a run that waits for its
        # user's pace limits has woken the cron up for then (_wait); counted only when cut short
        remaining = self._count_waiting() if done == limit else 0
        cron_progress(self.env, done=done, remaining=remaining)
        return done

    @api.model
    def _count_waiting(self):
        with self.env.registry.cursor() as cr:
            cr.execute("SELECT count(*) FROM ai_assistant_run WHERE state IN ('queued', 'running')")
            return cr.fetchone()[0]

    @api.model
    def _run_next(self):
        """Take one run no other worker holds and run it: None when none is left, else whether
        others may be waiting (False when the run's last transaction found none: no cursor more
        to look again)."""
        registry = self.env.registry
        # the lock's transaction stays open while the run runs: it ends with this worker
        with registry.cursor() as lock_cr:
            run_id = _lock_a_run(lock_cr)
            if run_id is None:
                return None
            try:
                return self._run_one(run_id)
            except Exception:  # noqa: BLE001 - one run's failure must not stop the batch
                _logger.exception("AI run failed: run=%s", run_id)
                return self._finish(
                    run_id, failure=self.env._("Something went wrong; the details are in the server log.")
                )

    @api.model
    def _run_one(self, run_id):
        """Run it; whether others may be waiting (as _finish says; True when it did not finish)."""
        turn, failure = None, None
        # taken and started in one transaction: a start that fails leaves it taken (running), and
        # _finish says why; one commit less per record than taking it apart
        with self.env.registry.cursor() as cr:
            run = api.Environment(cr, SUPERUSER_ID, {})["ai.assistant.run"].browse(run_id)
            if not run._take():
                return True
            env = api.Environment(cr, run.user_id.id, {"lang": run.user_id.lang}, su=False)
            # sudo: the run row is the queue's bookkeeping; the turn itself runs in `env`, as the user
            run = env["ai.assistant.run"].sudo().browse(run_id)
            try:
                with cr.savepoint():
                    turn = run._start_turn()
            except ChatRefused as refusal:
                if refusal.code == ErrorCode.PACE_LIMITED:
                    run._wait(refusal)
                    return True
                failure = _reason(refusal)
            except (RunRefused, AccessError, MissingError, UserError) as exc:
                failure = _reason(exc)
        outcome = Outcome.of(turn) if turn is not None else None
        return self._finish(run_id, outcome=outcome, failure=failure)

    def _take(self):
        """Mark this run running, once more; False when it needs nothing (done, or given up)."""
        self.ensure_one()
        if self.state in ("done", "failed"):
            return False
        if self.state == "running" and self.conversation_id and self._calls_started():
            self._fail(
                self.env._(
                    "The process running it stopped after it had called a tool: it is not run again, as the tool "
                    "may have acted. Run the action again if needed."
                )
            )
            return False
        if self.state == "running":
            _logger.warning("AI run taken over from a process that died: run=%s", self.id)
        self.write({"state": "running", "attempts": self.attempts + 1, "conversation_id": False})
        return True

    def _wait(self, refusal):
        """Back in the queue until the pace limits of its user let it start (a batch is paced as
        the user's chats are), and the cron woken up then."""
        self.ensure_one()
        retry_at = fields.Datetime.to_datetime(refusal.details.get("retry_at")) or fields.Datetime.now()
        self.write({"state": "queued", "wait_until": retry_at})
        self.env.ref("ai_mcp.ir_cron_ai_assistant_run")._trigger(at=retry_at)
        _logger.info("AI run waits for its user's pace limits: run=%s until=%s", self.id, retry_at)

    def _calls_started(self):
        # sudo: whether a call started decides retry or fail; audit rows are managers' to read
        return bool(self.env["ai.tool.call"].sudo().search_count([("conversation_id", "=", self.conversation_id.id)]))

    # -- the turn (as the user it runs as) -------------------------------------------------------

    def _start_turn(self):
        """The ChatTurn answering the action's instruction about the record, in a conversation of
        its own about it; the environment is the run's user's, never the superuser's."""
        self.ensure_one()
        env = self.env(su=False)
        if env.su or env.uid == SUPERUSER_ID or env.user._is_superuser():
            raise RunRefused(self.env._("An assistant never runs as the superuser."))
        action = self.action_id
        assistant = action.ai_assistant_id
        if not assistant:
            raise RunRefused(self.env._("The action names no assistant."))
        record = env[self.res_model].browse(self.res_id)
        record.check_access("read")
        instruction = action._ai_instruction_for(record)
        Conversation = env["ai.conversation"]
        # the assistant, the pace limits and the budgets are asked by _chat_send below; a refusal
        # there rolls this conversation back with the caller's savepoint
        # sudo: conversations are created by the chat's code only (as _chat_send does)
        conversation = Conversation.sudo().create(
            {
                "name": _title(action.name, record.display_name),
                "assistant_id": assistant.id,
                "user_id": env.uid,
                "company_id": (assistant.company_id or env.company).id,
                "res_model": record._name,
                "res_id": record.id,
            }
        )
        self.conversation_id = conversation
        return Conversation._chat_send(assistant.id, instruction, conversation_id=conversation.id)

    # -- the answer ------------------------------------------------------------------------------

    @api.model
    def _finish(self, run_id, outcome=None, failure=None):
        """Do with the answer what the action says, as the run's user, and close the run; whether
        another run may be waiting, read in the same transaction (the lock's cursor cannot: its
        snapshot is older than the run)."""
        with self.env.registry.cursor() as cr:
            run = api.Environment(cr, SUPERUSER_ID, {})["ai.assistant.run"].browse(run_id)
            user_env = api.Environment(cr, run.user_id.id, {"lang": run.user_id.lang}, su=False)
            # sudo on the run row only (its state and error); what the run reads goes through user_env
            run = run.with_env(user_env).sudo()
            if failure is None and outcome is not None:
                failure = _turn_failure(outcome)
            if failure is None:
                try:
                    with cr.savepoint():
                        run._deliver(outcome)
                except (AccessError, MissingError, UserError) as exc:
                    failure = _reason(exc)
            if failure is None:
                run.write({"state": "done", "date_done": fields.Datetime.now(), "error": False})
            else:
                run._fail(failure)
            return _others_waiting(cr, run_id)

    def _deliver(self, outcome):
        """Post the answer in the record's chatter, write it into the field, or schedule the
        activity, with the rights of the user it runs as (an activity, a field); the chatter note
        links the conversation."""
        self.ensure_one()
        action = self.action_id
        record = self.env(su=False)[self.res_model].browse(self.res_id)
        answer = outcome.reply or self.env._("(no answer)")
        html = Markup(html_sanitize(markdown_to_html(answer)))
        if action.ai_answer_to == "field":
            field = record._fields[action.ai_answer_field_id.name]
            record.write({field.name: html if field.type == "html" else answer})
            self._note(
                Markup("<p>%s</p>")
                % self.env._("%(action)s wrote its answer into %(field)s.", action=action.name, field=field.string)
            )
        elif action.ai_answer_to == "activity":
            activity_user = action.ai_activity_user_id or self.user_id
            values = {"activity_type_id": action.ai_activity_type_id.id} if action.ai_activity_type_id else {}
            record.activity_schedule(summary=action.name, note=html, user_id=activity_user.id, **values)
            self._note(
                Markup("<p>%s</p>")
                % self.env._(
                    "%(action)s scheduled an activity for %(user)s.", action=action.name, user=activity_user.name
                )
            )
        else:
            self._note(html)

    def _fail(self, reason):
        self.ensure_one()
        _logger.info("AI run failed: run=%s action=%s reason=%s", self.id, self.action_id.id, reason)
        self.write({"state": "failed", "date_done": fields.Datetime.now(), "error": reason})
        self._note(
            Markup("<p>%s</p>")
            % self.env._("%(action)s could not run: %(reason)s", action=self.action_id.name, reason=reason)
        )

    def _note(self, body):
        """A note on the record from the assistant, with the link to the conversation."""
        self.ensure_one()
        # sudo: the assistant posts as itself; what it says was read with the run's user's rights
        record = self.env[self.res_model].sudo().browse(self.res_id).exists()
        if not record or not hasattr(record, "_message_log"):
            return
        if self.conversation_id:
            url = f"/odoo/{self.conversation_id.id}/action-ai_mcp.action_ai_chat"
            body += Markup('<p><small><a href="%s">%s</a> · %s</small></p>') % (
                url,
                self.env._("Open the conversation"),
                self.env._("run as %s", self.user_id.name),
            )
        author = self.action_id.ai_assistant_id._discuss_partner() if self.action_id.ai_assistant_id else None
        record._message_log(body=body, author_id=author.id if author else None)


def _lock_a_run(lock_cr):
    """The id of a queued run, or of one left running by a process that died, now held on
    `lock_cr`; None when every such run is held by another worker. The candidates are read on
    `lock_cr` too (no transaction of their own): whether one is still to run is read again when
    it is taken (_take)."""
    lock_cr.execute(
        "SELECT id FROM ai_assistant_run WHERE state IN ('queued', 'running')"
        " AND (wait_until IS NULL OR wait_until <= now() at time zone 'UTC') ORDER BY id LIMIT %s",
        (CANDIDATES,),
    )
    candidates = [row[0] for row in lock_cr.fetchall()]
    for run_id in candidates:
        lock_cr.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (RUN_LOCK_KEY, run_id))
        if lock_cr.fetchone()[0]:
            return run_id
    return None


def _others_waiting(cr, run_id):
    """Whether a run other than `run_id` is queued, or running (held by another worker, or left
    by one that died), and may be taken now."""
    cr.execute(
        "SELECT 1 FROM ai_assistant_run WHERE state IN ('queued', 'running') AND id != %s"
        " AND (wait_until IS NULL OR wait_until <= now() at time zone 'UTC') LIMIT 1",
        (run_id,),
    )
    return cr.fetchone() is not None


def _turn_failure(outcome):
    """Why the turn gave no answer, or None."""
    final = outcome.final
    if final is not None and final.type == "error":
        return f"{final.message} ({final.code})"
    return None


def _reason(exc):
    if isinstance(exc, ChatRefused):
        return exc.message
    if isinstance(exc, RunRefused):
        return str(exc)
    return str(exc.args[0] if exc.args else exc)


def _title(action_name, record_name):
    line = f"{action_name}: {record_name}"
    return line if len(line) <= 60 else line[:59] + "…"
