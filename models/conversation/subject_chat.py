"""What the chat does with the record a conversation is about (subject.py): a new conversation is
started about a record the user may read ("Ask AI" on its form), the model is told at every turn
which record it is, and the chat's header links to it. The record is always read with the user's
own rights, never sudo: a record she cannot read (any more) is no subject, to her or to the model."""

import json

from odoo import api, models
from odoo.exceptions import AccessError, MissingError

from ...exceptions import ChatRefused


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_subject(self, res_model, res_id):
        """The record, read as the current user, that a new conversation is to be about; NOT_FOUND
        alike for a model that does not exist, a missing record and one closed to her, so that
        neither models nor ids can be probed."""
        if not self.env.user.has_group("ai_mcp.group_ai_user"):
            raise ChatRefused.not_found(self.env)
        if not isinstance(res_model, str) or res_model not in self.env:
            raise ChatRefused.not_found(self.env)
        model = self.env(su=False)[res_model]
        if model._abstract or model._transient:
            raise ChatRefused.not_found(self.env)
        record = model.browse(self._sent_id(res_id))
        if record.id <= 0 or not _readable(record):
            raise ChatRefused.not_found(self.env)
        return record

    @api.model
    def _chat_subject_values(self, res_model, res_id):
        """The fields of a new conversation about that record ({} when none is named)."""
        if res_model is None and res_id is None:
            return {}
        record = self._chat_subject(res_model, res_id)
        return {"res_model": record._name, "res_id": record.id}

    @api.model
    def _chat_subject_card(self, res_model, res_id):
        """What the chat shows of a record before the conversation about it starts."""
        return _card(self._chat_subject(res_model, res_id))

    def _subject_record(self):
        """The record this conversation is about, as the current user reads it; empty when there is
        none, its model is gone, or she may not read it."""
        self.ensure_one()
        if not self.res_model or not self.res_id or self.res_model not in self.env:
            return None
        # the user's own rights, even on a conversation read with sudo (the chat's routes do)
        record = self.env(su=False)[self.res_model].browse(self.res_id)
        return record if _readable(record) else None

    def _subject_prompt(self):
        """The line of the system prompt telling the model which record the conversation is about;
        empty when there is none the user may read. Its name is quoted: it is data, not instructions."""
        record = self._subject_record()
        if record is None:
            return ""
        card = _card(record)
        return (
            f"This conversation is about one record, the form the user opened it from: "
            f"{card['model_name']} {json.dumps(card['display_name'], ensure_ascii=False)} "
            f"(model {card['res_model']}, id {card['res_id']}, link {card['url']})."
        )

    def _chat_history(self):
        history = super()._chat_history()
        record = self._subject_record()
        history["conversation"]["subject"] = _card(record) if record is not None else None
        return history


def _readable(record):
    try:
        if not record.exists():
            return False
        record.check_access("read")
    except (AccessError, MissingError):
        return False
    return True


def _card(record):
    """{res_model, res_id, model_name, display_name, url} of a record the user may read."""
    # sudo: the label of a model (ir.model) is no record data; reading it does not depend on her rights
    model_name = record.env["ir.model"].sudo()._get(record._name).display_name or record._description
    return {
        "res_model": record._name,
        "res_id": record.id,
        "model_name": model_name,
        "display_name": record.display_name,
        "url": f"/odoo/{record._name}/{record.id}",
    }
