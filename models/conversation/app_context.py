"""What the MCP Apps of a conversation tell the model and say in the user's name: an app's context
(ui/update-model-context), kept per call and given to the model in the next turns, and the
messages an app sends (ui/message), stored with the app they came from."""

from datetime import datetime, timezone

from odoo import models

from ...exceptions import ChatRefused
from ...services.apps import MAX_APPS, MAX_CONTEXT_CHARS, AppContext, context_text


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _app_model_context(self, call_id, content=None, structured_content=None):
        """Keep what the app of call `call_id` tells the model, instead of what it told before;
        nothing clears it. The latest contexts of MAX_APPS apps are kept. Raises ChatRefused when
        the context is malformed or longer than MAX_CONTEXT_CHARS."""
        self.ensure_one()
        call = self._app_call(call_id)
        try:
            text = context_text(content, structured_content)
        except ValueError as exc:
            raise ChatRefused.invalid(self.env._("The app's context cannot be read: %s", exc)) from None
        if len(text) > MAX_CONTEXT_CHARS:
            raise ChatRefused.invalid(
                self.env._(
                    "The app's context is %(size)s characters long; the model is given at most %(limit)s "
                    "characters per app.",
                    size=len(text),
                    limit=MAX_CONTEXT_CHARS,
                )
            )
        message = self._app_call_message(call_id)
        if not message:
            raise ChatRefused.not_found(self.env)
        at = datetime.now(timezone.utc).isoformat()
        message.app_context = {"title": call.title, "text": text, "at": at} if text else False
        for older in self._app_context_messages()[MAX_APPS:]:
            older.app_context = False

    def _app_contexts(self):
        """The AppContexts the model is given in this conversation's next turn, oldest first."""
        self.ensure_one()
        messages = self._app_context_messages()[:MAX_APPS]
        return tuple(AppContext(title=m.app_context["title"], text=m.app_context["text"]) for m in messages[::-1])

    def _app_context_messages(self):
        """The tool messages (sudo) of this conversation that hold an app's context, latest first."""
        messages = (
            self.env["ai.message"]
            .sudo()
            .search([("conversation_id", "=", self.id), ("role", "=", "tool"), ("app_context", "!=", False)])
        )
        return messages.sorted(lambda m: (m.app_context.get("at", ""), m.id), reverse=True)

    def _app_call_message(self, call_id):
        return (
            self.env["ai.message"]
            .sudo()
            .search(
                [("conversation_id", "=", self.id), ("role", "=", "tool"), ("tool_call_id", "=", str(call_id))],
                order="id desc",
                limit=1,
            )
        )

    def _app_message_values(self, app_call_id):
        """The values of a user message the app of call `app_call_id` sends. Raises ChatRefused
        when this conversation has no such call with an app."""
        self.ensure_one()
        payload = self._app_call_payload(app_call_id)
        if not payload or not payload.get("app"):
            raise ChatRefused.invalid(self.env._("This message names an app that is not in this conversation."))
        return {"app_call_id": app_call_id, "app_title": self._app_call(app_call_id).title}
