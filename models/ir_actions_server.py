"""The server action "Run an AI assistant": an automation rule, a scheduled action or a contextual
button asks an assistant about each record and does something with its answer (a chatter note, a
field, an activity). The action only queues the runs (ai_assistant_run.py runs them).

Who a run runs as is explicit: the user who triggered the action, or a user named on it (what a
schedule needs); never the superuser. Nobody is there to approve a call: the action lists the tools
its runs may call, and they call those without asking (models/conversation/run.py).

The other way round, an admin marks the actions assistants given This Odoo may run themselves
(odoo_run_server_action, on the models an assistant is given, with the user's approval)."""

import logging

from markupsafe import Markup

from odoo import SUPERUSER_ID, api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools.safe_eval import safe_eval

_logger = logging.getLogger(__name__)

ANSWER_FIELD_TYPES = ("char", "text", "html")


class IrActionsServer(models.Model):
    _inherit = "ir.actions.server"

    state = fields.Selection(
        selection_add=[("ai_assistant", "Run an AI Assistant")], ondelete={"ai_assistant": "cascade"}
    )
    ai_assistant_id = fields.Many2one("ai.assistant", string="AI Assistant", ondelete="restrict")
    ai_instruction = fields.Text(
        string="Instruction",
        help="What the assistant is asked about each record; the record's fields go in as in mail templates, "
        "e.g. {{ object.name }}.",
    )
    ai_answer_to = fields.Selection(
        [
            ("chatter", "Post it in the chatter"),
            ("field", "Write it into a field"),
            ("activity", "Schedule an activity"),
        ],
        string="Answer",
        default="chatter",
    )
    ai_answer_field_id = fields.Many2one(
        "ir.model.fields",
        string="Answer Field",
        ondelete="cascade",
        domain="[('model_id', '=', model_id), ('ttype', 'in', ('char', 'text', 'html')), ('store', '=', True)]",
    )
    ai_activity_user_id = fields.Many2one(
        "res.users", string="Activity For", help="Who the activity is for; empty: the user the run runs as."
    )
    ai_activity_type_id = fields.Many2one("mail.activity.type", string="Activity Type of the Answer")
    ai_run_as = fields.Selection(
        [("trigger", "The user who triggers it"), ("user", "A named user")],
        string="Run As",
        default="trigger",
        help="Whose rights the assistant and its tools have. A scheduled action needs a named user: "
        "an assistant never runs as the superuser.",
    )
    ai_run_user_id = fields.Many2one("res.users", string="Named User", domain="[('share', '=', False)]")
    ai_tool_ids = fields.Many2many(
        "mcp.tool",
        "ir_act_server_mcp_tool_rel",
        "action_id",
        "tool_id",
        string="Tools It May Call",
        help="The only tools its runs offer; they run without an approval. Any other call is refused.",
    )
    ai_domain = fields.Char(
        string="Records",
        default="[]",
        help="For a scheduled action, which runs without a record: the records it runs for, searched with the "
        "rights of the user it runs as.",
    )
    ai_run_ids = fields.One2many("ai.assistant.run", "action_id", string="Runs")
    ai_assistant_allowed = fields.Boolean(
        string="Assistants May Run It",
        help="AI assistants given This Odoo may run this action on the records of its model, as the user "
        "chatting with them and after her approval.",
    )

    @api.constrains("state", "ai_assistant_id", "ai_run_as", "ai_run_user_id", "ai_answer_to", "ai_answer_field_id")
    def _check_ai_assistant(self):
        for action in self.filtered(lambda a: a.state == "ai_assistant"):
            if not action.ai_assistant_id:
                raise ValidationError(self.env._("%s: choose the assistant to run.", action.name))
            if action.ai_run_as == "user" and not action.ai_run_user_id:
                raise ValidationError(self.env._("%s: choose the user it runs as.", action.name))
            if action.ai_run_user_id and action.ai_run_user_id._is_superuser():
                raise ValidationError(self.env._("%s: an assistant never runs as the superuser.", action.name))
            if action.ai_answer_to == "field" and (
                action.ai_answer_field_id.ttype not in ANSWER_FIELD_TYPES
                or action.ai_answer_field_id.model_id != action.model_id
            ):
                raise ValidationError(
                    self.env._("%s: choose a text field of the action's model for the answer.", action.name)
                )

    def _run_action_ai_assistant_multi(self, eval_context=None):
        """Queue a run for each record (the action is sudo here: Odoo runs every action so)."""
        self.ensure_one()
        eval_context = eval_context or {}
        records = eval_context.get("records") or eval_context.get("record")
        records = records.browse(records.ids) if records else self.env[self.model_id.model].browse()
        user, refusal = self._ai_run_user(eval_context.get("env") or self.env)
        if user is None:
            _logger.warning("AI action not run: action=%s reason=%s", self.id, refusal)
            self._ai_note_refusal(records, refusal)
            return False
        if not records:
            records = self._ai_scheduled_records(user)
        if not records:
            return False
        self.env["ai.assistant.run"]._enqueue(self, records, user)
        return self._ai_queued_notification(len(records))

    def _ai_queued_notification(self, count):
        """What whoever pressed the button sees: the runs are queued, the answers come later (an
        automation rule or a schedule ignores it)."""
        return {
            "type": "ir.actions.client",
            "tag": "display_notification",
            "params": {
                "type": "info",
                "message": self.env._(
                    "%(action)s: queued for %(count)s record(s); the assistant answers in a moment.",
                    action=self.name,
                    count=count,
                ),
            },
        }

    def _ai_scheduled_records(self, user):
        """The records of `ai_domain` that `user` may read (none when they may not read the model)."""
        Model = self.env(user=user.id, su=False)[self.model_id.model]
        if not Model.has_access("read"):
            _logger.info("AI action finds no records: action=%s user=%s may not read %s", self.id, user.id, Model._name)
            return self.env[self.model_id.model]
        return Model.search(safe_eval(self.ai_domain or "[]", {"uid": user.id, "user": user}))

    def _ai_run_user(self, env):
        """(the user the runs run as, None) or (None, why they do not run)."""
        self.ensure_one()
        if self.ai_run_as == "user":
            user = self.ai_run_user_id
            if not user.active or user._is_superuser():
                return None, self.env._("its named user cannot run it (archived, or the superuser).")
            return user, None
        if env.uid == SUPERUSER_ID or env.user._is_superuser() or self.env.context.get("ir_cron_progress_id"):
            return None, self.env._(
                "it was triggered by the system (a scheduled action or an automated process), not by a user, "
                "and names no user to run as. Choose one under Run As."
            )
        return env.user, None

    def _ai_note_refusal(self, records, reason):
        body = Markup("<p>%s</p>") % self.env._("%(action)s did not run: %(reason)s", action=self.name, reason=reason)
        for record in records:
            # sudo: the note says why nothing ran, whoever triggered it
            if hasattr(record, "_message_log"):
                record.sudo()._message_log(body=body)

    def _ai_instruction_for(self, record):
        """The instruction about `record`, its placeholders rendered with the rights of the
        record's environment (the user the run runs as)."""
        self.ensure_one()
        source = self.ai_instruction or ""
        rendered = record.env["ai.instruction.render"]._render_template(
            source, record._name, record.ids, engine="inline_template"
        )
        return str(rendered[record.id])
