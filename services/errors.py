"""Typed errors shared by the hub, the agent loop and the Odoo layer.

Every failure a user can meet carries a stable code (shown in the UI, logged,
stored on tool-call records) and a message that says what to do about it.
These never import Odoo and their messages are English; the addon's exceptions.py is the other
side: `ChatRefused`, a chat request the models refuse, with a translated message and an HTTP status.
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
    # the request was longer than the model reads (its context window)
    LLM_CONTEXT_EXCEEDED = "LLM_CONTEXT_EXCEEDED"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    TOOL_DENIED = "TOOL_DENIED"
    CANCELLED = "CANCELLED"
    MCP_AUTH_REQUIRED = "MCP_AUTH_REQUIRED"
    OAUTH_METADATA_NOT_FOUND = "OAUTH_METADATA_NOT_FOUND"
    OAUTH_METADATA_INVALID = "OAUTH_METADATA_INVALID"
    OAUTH_FORBIDDEN_URL = "OAUTH_FORBIDDEN_URL"
    OAUTH_REGISTRATION_FAILED = "OAUTH_REGISTRATION_FAILED"
    OAUTH_STATE_INVALID = "OAUTH_STATE_INVALID"
    OAUTH_ACCESS_DENIED = "OAUTH_ACCESS_DENIED"
    OAUTH_TOKEN_ERROR = "OAUTH_TOKEN_ERROR"
    OAUTH_REAUTH_REQUIRED = "OAUTH_REAUTH_REQUIRED"
    # the user has no (current) sign-in at her company's identity provider (enterprise-managed authorization)
    OAUTH_IDENTITY_REQUIRED = "OAUTH_IDENTITY_REQUIRED"
    # a chat request that is refused (the Odoo side's ChatRefused)
    INVALID_REQUEST = "INVALID_REQUEST"
    CSRF_INVALID = "CSRF_INVALID"
    NOT_FOUND = "NOT_FOUND"
    CONVERSATION_BUSY = "CONVERSATION_BUSY"
    NOT_WAITING = "NOT_WAITING"
    ALREADY_RECEIVED = "ALREADY_RECEIVED"
    SERVER_GONE = "SERVER_GONE"
    PROMPT_NOT_FOUND = "PROMPT_NOT_FOUND"
    # a new turn that may not start now (the admission step: models/conversation/admission.py)
    PACE_LIMITED = "PACE_LIMITED"
    # what an MCP App asks of its host (the chat) that is refused, or waits for the user
    APP_UNAVAILABLE = "APP_UNAVAILABLE"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    # a turn that broke for a reason of ours, and tools a turn could not offer
    INTERNAL_ERROR = "INTERNAL_ERROR"
    TOOLS_LEFT_OUT = "TOOLS_LEFT_OUT"
    # an AI budget (ai.budget) that is spent, or nearly
    BUDGET_SPENT = "BUDGET_SPENT"
    BUDGET_NEAR = "BUDGET_NEAR"
    # a skill's file whose size, digest or front matter is not what its server listed
    SKILL_VERIFICATION_FAILED = "SKILL_VERIFICATION_FAILED"


ADVICE: dict[ErrorCode, str] = {
    ErrorCode.MCP_UNREACHABLE: (
        "Check the server URL or command, and that the server is running and reachable from Odoo."
    ),
    ErrorCode.MCP_AUTH_FAILED: "Check the server's authentication settings (token, API key or headers).",
    ErrorCode.MCP_PROTOCOL_ERROR: (
        "The server did not answer as an MCP server should; check the transport and URL path."
    ),
    ErrorCode.MCP_TIMEOUT: "The server took too long; raise the timeout or check the server's load.",
    ErrorCode.MCP_TOOL_NOT_FOUND: "Sync the server's tools: this tool is not offered any more.",
    ErrorCode.SKILL_VERIFICATION_FAILED: (
        "The server sent a skill file that is not what it listed: sync the server, and ask its maintainer if it "
        "happens again."
    ),
    ErrorCode.MCP_INVALID_PARAMS: "Fix the arguments so that they match the tool's input schema.",
    ErrorCode.MCP_EXECUTION_ERROR: "The tool ran and reported an error; see its message.",
    ErrorCode.MCP_PARSE_ERROR: "The server sent something that could not be read; check the server's logs.",
    ErrorCode.CONFIG_INVALID: "Correct the field named in the message and save again.",
    ErrorCode.LLM_UNREACHABLE: "Check the provider's base URL and that the model endpoint is reachable.",
    ErrorCode.LLM_AUTH_FAILED: "Check the provider's API key.",
    ErrorCode.LLM_RATE_LIMITED: "The model provider is rate limiting; wait a moment and retry.",
    ErrorCode.LLM_BAD_RESPONSE: (
        "The model answered with something that could not be used; retry or pick another model."
    ),
    ErrorCode.LLM_TIMEOUT: "The model took too long; retry, or raise the assistant's time limit.",
    ErrorCode.LLM_CONTEXT_EXCEEDED: (
        "The conversation is longer than the model reads; set the model's context window on its record, or start "
        "a new conversation."
    ),
    ErrorCode.LIMIT_EXCEEDED: "A limit of the assistant was reached.",
    ErrorCode.TOOL_DENIED: "The user denied this tool call.",
    ErrorCode.CANCELLED: "The request was cancelled.",
    ErrorCode.MCP_AUTH_REQUIRED: "Sign in to this server (OAuth) and try again.",
    ErrorCode.OAUTH_METADATA_NOT_FOUND: (
        "The server does not publish OAuth metadata; check the URL, or use a token instead of OAuth."
    ),
    ErrorCode.OAUTH_METADATA_INVALID: "The server's OAuth metadata is not usable; ask the server's operator to fix it.",
    ErrorCode.OAUTH_FORBIDDEN_URL: (
        "The server's OAuth metadata points at an address Odoo may not call; ask the server's operator, or an "
        "administrator to allow the host."
    ),
    ErrorCode.OAUTH_REGISTRATION_FAILED: (
        "Odoo could not register as a client of this server; enter a client id (and secret) obtained from its provider."
    ),
    ErrorCode.OAUTH_STATE_INVALID: (
        "This sign-in link is unknown, already used, expired or belongs to someone else; start the sign-in again."
    ),
    ErrorCode.OAUTH_ACCESS_DENIED: "The sign-in was declined at the provider; sign in again to allow access.",
    ErrorCode.OAUTH_TOKEN_ERROR: "The provider's token endpoint failed; try again later or check the client settings.",
    ErrorCode.OAUTH_REAUTH_REQUIRED: "The sign-in expired or was revoked; sign in again.",
    ErrorCode.OAUTH_IDENTITY_REQUIRED: (
        "Sign in once to your company's identity provider: AI › Company Sign-in, then Sign In."
    ),
    ErrorCode.INVALID_REQUEST: "The request is not one the chat understands; reload the page and try again.",
    ErrorCode.CSRF_INVALID: "The session expired or the CSRF token is invalid: reload the page.",
    ErrorCode.NOT_FOUND: "No such assistant, cloud service or conversation, or you may not use it.",
    ErrorCode.CONVERSATION_BUSY: "This conversation is answering another message; wait for it to finish.",
    ErrorCode.NOT_WAITING: "This conversation is not waiting for an answer.",
    ErrorCode.ALREADY_RECEIVED: "This message was received before: its answer is in the conversation.",
    ErrorCode.SERVER_GONE: "The server that returned this link is no longer available to you.",
    ErrorCode.PROMPT_NOT_FOUND: "The server has no such prompt (any more); pick another one.",
    ErrorCode.PACE_LIMITED: "You sent as many messages as your administrator allows for now; send again later.",
    ErrorCode.APP_UNAVAILABLE: "This app cannot be shown or used any more; its tool's result is still in the chat.",
    ErrorCode.APPROVAL_REQUIRED: "The user must allow this call before it runs.",
    ErrorCode.INTERNAL_ERROR: "The assistant failed unexpectedly; the details are in the server log.",
    ErrorCode.TOOLS_LEFT_OUT: "Some tools could not be offered to the model; the warning says which and why.",
    ErrorCode.BUDGET_SPENT: "An AI budget that applies to you is spent for this period; an AI manager can raise it.",
    ErrorCode.BUDGET_NEAR: "An AI budget that applies to you is nearly spent for this period.",
}


class AiMcpError(Exception):
    """Base of every error this addon raises on purpose."""

    def __init__(self, code: ErrorCode, message: str | None = None, advice: str | None = None) -> None:
        self.code = code
        self.message = message or ADVICE[code]
        # "": the message itself says what to do, and the code's general advice would contradict it
        self._advice = advice
        super().__init__(f"{code.value}: {self.message}")

    @property
    def advice(self) -> str:
        return ADVICE[self.code] if self._advice is None else self._advice

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message, "advice": self.advice}


class McpError(AiMcpError):
    """A failure talking to an MCP server. `output`: what a stdio server wrote to its standard
    error last (a stack trace, say), for the admin and the log; the message names the line that
    says why. `advice`: in place of the code's, where the code's does not fit (a URL to check for a
    server started by a command)."""

    def __init__(
        self, code: ErrorCode, message: str | None = None, output: str | None = None, advice: str | None = None
    ) -> None:
        super().__init__(code, message)
        self.output = output
        self._advice = advice

    @property
    def advice(self) -> str:
        return self._advice or ADVICE[self.code]


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


class OAuthError(AiMcpError):
    """A failure of the OAuth sign-in or of a token; `field` names the metadata field (or
    setting) at fault when there is one, e.g. "token_endpoint"."""

    def __init__(self, code: ErrorCode, message: str | None = None, field: str | None = None) -> None:
        self.field = field
        super().__init__(code, message)

    def as_dict(self) -> dict[str, str]:
        return {**super().as_dict(), **({"field": self.field} if self.field else {})}


class AuthRequired(McpError):
    """The server wants an OAuth sign-in (again, or with a wider scope) before it serves this
    user: what the UI needs to offer one. `scope` is the scope to ask for (the challenge's on a
    403 insufficient_scope); `owner` whose sign-in it is (None: the shared one)."""

    def __init__(
        self,
        server_key: str,
        server_name: str,
        message: str | None = None,
        *,
        scope: str | None = None,
        step_up: bool = False,
        owner: str | None = None,
        resource_metadata: str | None = None,
    ) -> None:
        self.server_key = server_key
        self.server_name = server_name
        self.scope = scope
        self.step_up = step_up
        self.owner = owner
        self.resource_metadata = resource_metadata
        super().__init__(ErrorCode.MCP_AUTH_REQUIRED, message or f"Sign in to {server_name} to use its tools.")

    def as_dict(self) -> dict[str, str]:
        extra = {"server_key": self.server_key, "server": self.server_name, "step_up": "1" if self.step_up else ""}
        return {**super().as_dict(), **extra, **({"scope": self.scope} if self.scope else {})}
