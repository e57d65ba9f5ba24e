"""Which records a chat request may name: the user's own conversation, working in its company, and
the assistants and cloud services the user may use; one 404 for whatever is missing, malformed or
someone else's."""

from odoo import api, models

from ...companies import company_allows
from ...exceptions import ChatRefused


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    @api.model
    def _chat_own(self, conversation_id):
        """The current user's conversation (sudo, working in its company: _in_its_company), or 404
        whether it is missing or someone else's."""
        return self._untrusted_record(
            "ai.conversation",
            conversation_id,
            lambda c: (
                c.user_id == self.env.user and self.env.user.has_group("ai_mcp.group_ai_user") and company_allows(c)
            ),
        )._in_its_company()

    @api.model
    def _chat_readable(self, conversation_id):
        """A conversation the current user may read (sudo, working in its company): her own, or,
        for an AI manager, anyone's (the record rules say so: a run's note links its conversation
        for the managers who audit it); 404 otherwise. Reading only: what changes a conversation
        asks `_chat_own`."""
        return self._untrusted_record(
            "ai.conversation",
            conversation_id,
            lambda c: (
                self.env.user.has_group("ai_mcp.group_ai_user")
                and c.with_env(self.env(su=False)).has_access("read")
                and company_allows(c)
            ),
        )._in_its_company()

    def _in_its_company(self):
        """This conversation working in its company alone, whichever companies the user switched to:
        its turns, and what the chat reads for it, use only that company's records and shared ones
        (companies.py asks env.companies). One held before conversations had a company, or in a
        company its user no longer works in (the chat refuses it: company_allows), as it is."""
        # sudo: a user reads her own allowed companies even where their records are closed to her
        if len(self) != 1 or self.company_id not in self.env.user.sudo().company_ids:
            return self
        return self.with_context(allowed_company_ids=self.company_id.ids)

    @api.model
    def _untrusted_record(self, model_name, record_id, may_use):
        """The record (sudo) of `model_name` with the id a request sent, when the current user
        `may_use` it; otherwise the same 404 whether it is missing, malformed or not theirs."""
        record = self.env[model_name].sudo().browse(self._sent_id(record_id)).exists()
        if not record or not may_use(record):
            raise ChatRefused.not_found(self.env)
        return record

    @api.model
    def _sent_id(self, record_id):
        """A record id as a request sent it, as an int; a malformed one is the 404 of a missing record."""
        try:
            return int(record_id)
        except (TypeError, ValueError):
            raise ChatRefused.not_found(self.env) from None

    @api.model
    def _usable_assistant(self, assistant_id):
        """The assistant (sudo) the current user may chat with, or 404; an assistant of one of the
        user's companies that they are not working in now is refused saying so."""
        assistant = self.env["ai.assistant"].sudo().browse(self._sent_id(assistant_id)).exists()
        if assistant:
            other_company = assistant._other_company_refusal(self.env.user)
            if other_company:
                raise ChatRefused.invalid(other_company)
        return self._untrusted_record("ai.assistant", assistant_id, lambda a: a._user_may_use(self.env.user))

    @api.model
    def _usable_cloud_service(self, cloud_service_id):
        """The cloud service (sudo) the current user may use, none when none is asked, or 404; one of
        the user's companies that they are not working in now is refused saying so."""
        if not cloud_service_id:
            return self.env["cloud.service"]
        service = self.env["cloud.service"].sudo().browse(self._sent_id(cloud_service_id)).exists()
        if service:
            other_company = service._other_company_refusal(self.env.user)
            if other_company:
                raise ChatRefused.invalid(other_company)
        return self._untrusted_record("cloud.service", cloud_service_id, lambda s: s._user_may_use(self.env.user))
