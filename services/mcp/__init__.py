"""The MCP wing: everything about talking to MCP servers.

The process's hub (one asyncio loop in a thread of its own) and its pool of sessions; a session over
stdio, SSE or streamable HTTP (the stdio launcher, the transports and their failures); the lists a
server offers, cached and kept fresh by its change notifications; prompts, resources, the
suggestions for their arguments (completion) and the sync of every server; the clock and observer
of a call (timeouts, progress, logs, elicitation, sampling). Odoo's records and the agent loop import this
face; it knows the shared vocabulary, the OAuth wing (the tokens a session sends) and the apps
wing (a tool's app resource).
"""

from .completion import CompletionRequest, Completions
from .call_observer import CallEvent, CallObserver, Questions, elicitation_errors, question_event
from .elicitation_defaults import apply_defaults
from .hub import ConnectionReport, HubSettings, McpHub, get_hub, running_hub
from .resources import expand
from .sampling import (
    MAX_TOKENS_CAP,
    Sampler,
    SamplingAnswer,
    SamplingDesk,
    SamplingFailed,
    SamplingReply,
    SamplingRequest,
    parse_answer,
)
from .server_info import MODERN_PROTOCOL_VERSIONS, ServerInfo
from .servers_json import import_mcp_servers
from ._stdio_failure import telling_line
from .session import McpSession
from .skills import SkillEntry, SkillRefused, body_of
from .sync import connect_all
from .transport import stderr_tail

__all__ = [
    "ConnectionReport",
    "ServerInfo",
    "CallEvent",
    "CallObserver",
    "CompletionRequest",
    "Completions",
    "HubSettings",
    "MODERN_PROTOCOL_VERSIONS",
    "McpHub",
    "McpSession",
    "MAX_TOKENS_CAP",
    "Sampler",
    "SamplingAnswer",
    "SamplingDesk",
    "SamplingFailed",
    "SamplingReply",
    "SamplingRequest",
    "parse_answer",
    "Questions",
    "SkillEntry",
    "SkillRefused",
    "body_of",
    "apply_defaults",
    "connect_all",
    "elicitation_errors",
    "expand",
    "get_hub",
    "import_mcp_servers",
    "question_event",
    "running_hub",
    "stderr_tail",
    "telling_line",
]
