"""A turn a server action runs for a record (ai.assistant.run): nobody is there to answer it.

Its tools are those the action lists, and they run without asking (the audit says the action
allowed them); a call of any other tool, or one that would wait for an approval or a sign-in, is
refused to the model and recorded (services/loop: TurnRequest.unattended); a server's question is
declined, and the round limit ends the turn with an answer instead of asking whether to go on."""

from odoo import models


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _server_action_run(self):
        """The run this conversation answers (sudo), if any."""
        self.ensure_one()
        if not self.id:
            return self.env["ai.assistant.run"]
        # sudo: the run's user may not read the action that runs it
        return self.env["ai.assistant.run"].sudo().search([("conversation_id", "=", self.id)], limit=1)

    def _unattended(self):
        return bool(self._server_action_run()) or super()._unattended()

    def _turn_tools(self, bindings):
        run = self._server_action_run()
        if not run:
            return super()._turn_tools(bindings)
        listed = {(tool.server_id._server_key(), tool.name) for tool in run.action_id.ai_tool_ids}
        return [
            binding.model_copy(update={"requires_approval": False, "approval": "action"})
            if binding.requires_approval
            else binding
            for binding in bindings
            if (binding.server.key, binding.tool.name) in listed
        ]
