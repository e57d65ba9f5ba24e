"""Typed errors shared by the hub, the agent loop and the Odoo layer.

Every failure a user can meet carries a stable code (shown in the UI, logged,
stored on tool-call records) and a message that says what to do about it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum


class ErrorCode(str, Enum):
    MCP_UNREACHABLE = "MCP_UNREACHABLE"
    MCP_AUTH_FAILED = "MCP_AUTH_FAILED"
    MCP_PROTOCOL_ERROR = "MCP_PROTOCOL_ERROR"
    MCP_TIMEOUT = "MCP_TIMEOUT"
    MCP_TOOL_NOT_FOUND = "MCP_TOOL_NOT_FOUND"
    MCP_INVALID_PARAMS = "MCP_INVALID_PARAMS"
    MCP_EXECUTION_ERROR = "MCP_EXECUTION_ERROR"
    MCP_PARSE_ERROR = "MCP_PARSE_ERROR"
    CONFIG_INVALID = "CONFIG_INVALID"
    LLM_UNREACHABLE = "LLM_UNREACHABLE"
    LLM_AUTH_FAILED = "LLM_AUTH_FAILED"
    LLM_RATE_LIMITED = "LLM_RATE_LIMITED"
    LLM_BAD_RESPONSE = "LLM_BAD_RESPONSE"
    LLM_TIMEOUT = "LLM_TIMEOUT"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    TOOL_DENIED = "TOOL_DENIED"
    CANCELLED = "CANCELLED"


ADVICE: dict[ErrorCode, str] = {
    ErrorCode.MCP_UNREACHABLE: "Check the server URL or command, and that the server is running and reachable from Odoo.",
    ErrorCode.MCP_AUTH_FAILED: "Check the server's authentication settings (token, API key or headers).",
    ErrorCode.MCP_PROTOCOL_ERROR: "The server did not answer as an MCP server should; check the transport and URL path.",
    ErrorCode.MCP_TIMEOUT: "The server took too long; raise the timeout or check the server's load.",
    ErrorCode.MCP_TOOL_NOT_FOUND: "Sync the server's tools: this tool is not offered any more.",
    ErrorCode.MCP_INVALID_PARAMS: "Fix the arguments so that they match the tool's input schema.",
    ErrorCode.MCP_EXECUTION_ERROR: "The tool ran and reported an error; see its message.",
    ErrorCode.MCP_PARSE_ERROR: "The server sent something that could not be read; check the server's logs.",
    ErrorCode.CONFIG_INVALID: "Correct the field named in the message and save again.",
    ErrorCode.LLM_UNREACHABLE: "Check the provider's base URL and that the model endpoint is reachable.",
    ErrorCode.LLM_AUTH_FAILED: "Check the provider's API key.",
    ErrorCode.LLM_RATE_LIMITED: "The model provider is rate limiting; wait a moment and retry.",
    ErrorCode.LLM_BAD_RESPONSE: "The model answered with something that could not be used; retry or pick another model.",
    ErrorCode.LLM_TIMEOUT: "The model took too long; retry, or raise the assistant's time limit.",
    ErrorCode.LIMIT_EXCEEDED: "A limit of the assistant was reached.",
    ErrorCode.TOOL_DENIED: "The user denied this tool call.",
    ErrorCode.CANCELLED: "The request was cancelled.",
}


class AiMcpError(Exception):
    """Base of every error this addon raises on purpose."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        self.code = code
        self.message = message or ADVICE[code]
        super().__init__(f"{code.value}: {self.message}")

    @property
    def advice(self) -> str:
        return ADVICE[self.code]

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message, "advice": self.advice}


class McpError(AiMcpError):
    """A failure talking to an MCP server."""


class LlmError(AiMcpError):
    """A failure talking to the model provider."""


class Lt(str):
    """An English message that the Odoo layer translates when it shows it."""


def _lt(message: str) -> Lt:
    """Mark `message` for translation without translating it. services/ never imports odoo, so
    this is not Odoo's `_lt`; it only carries the same name, the keyword Odoo's translation export
    looks for, so that the message lands in i18n/ai_mcp.pot."""
    return Lt(message)


class ConfigError(AiMcpError):
    """Invalid configuration; `field` names what to correct.

    `problem` completes a sentence whose subject is the field ("must start with http://"); when
    it is marked with `_lt`, `params` fill its %(name)s placeholders after translation."""

    def __init__(self, field: str, problem: str, **params: object) -> None:
        self.field = field
        self.template = problem
        self.params = params
        self.problem = problem % params if isinstance(problem, Lt) else problem
        super().__init__(ErrorCode.CONFIG_INVALID, f"{field}: {self.problem}")

    def translated(self, translate: Callable[[str], str]) -> str:
        """The problem in the user's language; `translate` is Odoo's `env._`. Parameters marked
        with `_lt` (an address kind) are translated too."""
        if not isinstance(self.template, Lt):
            return self.problem
        return translate(self.template) % _translated_params(self.params, translate)


def _translated_params(params: Mapping[str, object], translate: Callable[[str], str]) -> dict[str, object]:
    return {name: translate(value) if isinstance(value, Lt) else value for name, value in params.items()}
