"""The conversation's found tools (`found_tools`), as a turn's tool searches are written."""

from __future__ import annotations

from ..services.events import ToolSearchEvent
from .event_dispatch import records
from .sql_rows import update_row


class FoundTools:
    """The tools the searches of one run of a turn found, kept on its conversation."""

    def __init__(self, conversation_id: int) -> None:
        self.conversation_id = conversation_id

    @records(ToolSearchEvent)
    def _tool_search(self, env, seq, event):
        # the tools found stay offered in the conversation's next turns (services/loop/offered_tools.py)
        kept = [key.model_dump() for key in event.kept]
        update_row(env["ai.conversation"], self.conversation_id, {"found_tools": kept})
