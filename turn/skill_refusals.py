"""A skill file refused in a turn (its size, digest or front matter not what its server listed),
written on the skill for the admin: the check that failed and the file, on the server's Skills tab."""

from __future__ import annotations

from ..services.errors import ErrorCode
from ..services.events import ToolResultEvent
from .event_dispatch import records
from .messages import MessageWriter


class SkillRefusals:
    """The refusals of the skill files of one run of a turn."""

    def __init__(self, conversation_id: int, messages: MessageWriter) -> None:
        self.conversation_id = conversation_id
        self.messages = messages

    @records(ToolResultEvent)
    def _tool_result(self, env, seq, event):
        if event.error_code != ErrorCode.SKILL_VERIFICATION_FAILED.value:
            return
        message = self.messages.tool_message(env, event.id)
        arguments = message.arguments if message and isinstance(message.arguments, dict) else {}
        env["mcp.skill"]._record_refusal(
            self.conversation_id, message.server_name or "", arguments.get("skill"), event.error_message or ""
        )
