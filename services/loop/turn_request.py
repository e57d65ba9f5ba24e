"""What a turn is given: the assistant's settings and limits, the history, the tools the Odoo layer
bound, and the user's answer to a pause. Plain, frozen data: the Odoo layer builds it from records,
the agent loop (agent_loop.py) reads it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, InstanceOf

from ..apps import AppContext
from ..events import ToolKey
from ..limits import (
    MAX_CALLS_PER_ROUND,
    MAX_ROUNDS,
    PER_SERVER_CONCURRENCY,
    TOOL_CALL_TIMEOUT,
    TOOL_SEARCH_BYTES,
    TOOL_SEARCH_THRESHOLD,
    TURN_TIMEOUT,
)
from ..llm import LlmSettings
from ..oauth import RefreshingTokens
from ..tool_result import DEFAULT_MODEL_TEXT_LIMIT
from .local_tools import LocalTools
from .skill_tools import SkillBinding
from .spend_guard import SpendGuard
from .transcript import HistoryMessage
from .turn_tools import SignInLink, ToolBinding


class LoopLimits(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_rounds: int = MAX_ROUNDS.field()
    max_calls_per_round: int = MAX_CALLS_PER_ROUND.field()
    call_timeout: float = TOOL_CALL_TIMEOUT.field()
    turn_timeout: float = TURN_TIMEOUT.field()
    per_server_concurrency: int = PER_SERVER_CONCURRENCY.field()
    model_text_limit: int = Field(DEFAULT_MODEL_TEXT_LIMIT, ge=100)
    # more tools than this, or more bytes of their schemas: the model searches them (offered_tools.py)
    tool_search_threshold: int = TOOL_SEARCH_THRESHOLD.field()
    tool_search_bytes: int = Field(TOOL_SEARCH_BYTES, ge=0)


class AssistantSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    llm: LlmSettings
    system_prompt: str = ""
    limits: LoopLimits = LoopLimits()
    prompted_tools: bool = False


class Resume(BaseModel):
    """The user's answer to a pause: approval per call id, whether to go on, or that the sign-ins
    asked for are over (signed in, or declined: TurnRequest.declined)."""

    model_config = ConfigDict(frozen=True)

    approvals: dict[str, bool] = Field(default_factory=dict)
    go_on: bool | None = None
    signed_in: bool = False


class TurnRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    assistant: AssistantSettings
    history: list[HistoryMessage] = Field(default_factory=list)
    tools: list[ToolBinding] = Field(default_factory=list)
    # the skills the model may load, each offered by name and description only
    skills: list[SkillBinding] = Field(default_factory=list)
    user_message: str | None = None
    resume: Resume | None = None
    conversation_id: int | None = None
    # per server key, for OAuth servers: the grant calls are made with, and where to sign in when
    # there is none (a per-user server the user has not signed in to yet)
    grants: dict[str, InstanceOf[RefreshingTokens]] = Field(default_factory=dict)
    sign_in_links: dict[str, SignInLink] = Field(default_factory=dict)
    # keys of the servers the user chose to go on without rather than sign in to
    declined: frozenset[str] = frozenset()
    # seconds of the turn's time limit its earlier runs used, for a resumption after an approval
    # or a sign-in (the pause event's turn_ms): the user's time is never counted
    spent: float = Field(0.0, ge=0)
    # which record the conversation is about, a line of the system prompt ("" when none)
    subject: str = ""
    # what the apps shown in the conversation last told the model (app_context.py)
    app_contexts: tuple[AppContext, ...] = ()
    # the tools its searches found, least recently used first (ToolSearchEvent.kept)
    found_tools: tuple[ToolKey, ...] = ()
    # sent as `prompt_cache_key` where the model takes it: the same for every turn of one assistant
    # and user (prompt_cache_key() makes it)
    prompt_cache_key: str = Field("", max_length=64)
    # the budgets the turn is charged to: asked before every model call (None: no budget applies)
    spend: InstanceOf[SpendGuard] | None = None
    # nobody is there to answer (a server action's run): a call that needs an approval or a sign-in
    # is refused to the model instead of pausing, a server's question is declined, and the round
    # limit ends the turn with an answer instead of asking whether to go on
    unattended: bool = False
    # runs the calls of This Odoo's tools as the turn's user (None: the turn has none)
    local_tools: InstanceOf[LocalTools] | None = None
