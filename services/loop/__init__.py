"""The loop wing: running a turn against the model.

The agent loop (rounds of a streamed model reply and the tool calls it asks for, within the turn's
limits and budget, each call's history fitted to the model's context window), the tools a turn
offers (their names, presets and bindings to MCP servers, natively or described in the prompt), the
runner that calls them, the transcript a paused turn
resumes from and the control a turn is stopped by. Odoo's records and the turn runner import this
face; it knows the shared vocabulary and the faces of the model (services/llm), MCP, OAuth and
apps wings.
"""

from .agent_loop import run_turn
from .local_tools import LocalTools
from .presets import KNOWN_VARIABLES, resolve_preset, validate_preset, variables_in
from .tool_names import ToolNameMap, ToolRef
from .tool_runner import argument_problems, without_null_optionals
from .skill_tools import SkillBinding
from .spend_guard import BudgetLine, SpendGuard
from .transcript import HistoryMessage, history_from_events
from .turn_control import TurnControl
from .turn_request import AssistantSettings, LoopLimits, Resume, TurnRequest
from .turn_tools import SignInLink, ToolBinding

__all__ = [
    "AssistantSettings",
    "BudgetLine",
    "HistoryMessage",
    "KNOWN_VARIABLES",
    "LocalTools",
    "LoopLimits",
    "Resume",
    "SignInLink",
    "SkillBinding",
    "SpendGuard",
    "ToolBinding",
    "ToolNameMap",
    "ToolRef",
    "TurnControl",
    "TurnRequest",
    "argument_problems",
    "history_from_events",
    "resolve_preset",
    "run_turn",
    "validate_preset",
    "variables_in",
    "without_null_optionals",
]
