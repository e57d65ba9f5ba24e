"""The tasks of MCP servers a turn's calls left running (`ai.mcp.task`), as their results are written.

A call whose wait ended while its server's task still ran is answered "still running"
(services/mcp/tasks.py); its tool_result carries the task, whose row is written in the same
transaction, and the cron that polls it (models/ai_mcp_task.py) is woken up.
"""

from __future__ import annotations

from ..services.events import ToolResultEvent
from .event_dispatch import records


class RunningTasks:
    """The tasks the calls of one run of a turn left running."""

    def __init__(self, conversation_id: int) -> None:
        self.conversation_id = conversation_id

    @records(ToolResultEvent)
    def _tool_result(self, env, seq, event):
        task = event.task
        if task is None:
            return
        server = env["mcp.server"].browse(_server_id(env, task.server_key)).exists()
        if not server:
            return
        tool = None
        message = env["ai.message"].search(
            [("conversation_id", "=", self.conversation_id), ("role", "=", "tool"), ("tool_call_id", "=", event.id)],
            order="id desc",
            limit=1,
        )
        if message:
            tool = message.tool_name
        env["ai.mcp.task"].create(
            {
                "server_id": server.id,
                "conversation_id": self.conversation_id,
                "task_id": task.task_id,
                "call_id": event.id,
                "tool_name": tool or False,
                "status": task.status if task.status == "input_required" else "working",
                "status_message": task.status_message or False,
            }
        )
        env.ref("ai_mcp.ir_cron_ai_mcp_task_poll")._trigger()


def _server_id(env, key: str) -> int:
    """The mcp.server of a pool key of this database (models/server/spec.py `_server_key`); 0 if none."""
    prefix = f"{env.cr.dbname}/mcp.server/"
    rest = key.removeprefix(prefix)
    return int(rest) if key.startswith(prefix) and rest.isdigit() else 0
