"""The events a turn produces (docs/events.md), as typed models.

The agent loop yields them, the Odoo layer persists them and streams them as SSE, the widget
reduces them into what the user sees. `data()` is the JSON payload on the wire.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .errors import ErrorCode
from .token_usage import TokenUsage
from .tool_result import Part, RunningTask


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    def data(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class StartEvent(_Event):
    type: Literal["start"] = "start"
    conversation_id: int | None = None
    assistant: str
    max_rounds: int


class RoundEvent(_Event):
    type: Literal["round"] = "round"
    n: int
    max: int


class TextEvent(_Event):
    type: Literal["text"] = "text"
    delta: str


class ThinkingEvent(_Event):
    """Reasoning the model shows as it works (DeepSeek's `reasoning_content`, OpenRouter's
    `reasoning`, the Responses API's reasoning summary). `replay_as`: the field the provider needs
    it back under on a message with tool calls, for the rest of the turn; None: shown only."""

    type: Literal["thinking"] = "thinking"
    delta: str
    replay_as: str | None = None


class ModelRefusedParamEvent(_Event):
    """The model refused a request field (`param`); the call was made again without it (or, for
    the output cap, under its other name: `max_tokens` and `max_completion_tokens`). `message`:
    the provider's words. What the model record learns from."""

    type: Literal["model_refused_param"] = "model_refused_param"
    model: str
    param: str
    message: str


class ToolInputEvent(_Event):
    """The arguments of a call to an MCP App tool as the model writes them, before its `tool_call`
    (same id): what is complete so far, strings as far as they go (partial_json.py). Coalesced,
    sent but never stored: `tool_call` carries the whole arguments."""

    type: Literal["tool_input"] = "tool_input"
    id: str
    name: str  # as the model called it
    tool: str
    title: str
    server: str
    app: str  # the ui:// resource of the tool's MCP App
    arguments: dict[str, Any]


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str  # as the model called it; maps back to (server, tool)
    tool: str
    title: str
    server: str
    arguments: dict[str, Any]
    round: int
    requires_approval: bool = False
    # why it runs without asking: "read_only", "not_required", "conversation" (remembered)
    approval: str | None = None
    icon: str | None = None  # the tool's, else its server's (a data URI: services/icons.py)
    app: str | None = None  # the ui:// resource of the tool's MCP App, when its server's apps are shown
    # fields the provider put on the call that later requests must carry back (Gemini's `extra_content`)
    replay: dict[str, Any] | None = None


class ToolResultEvent(_Event):
    type: Literal["tool_result"] = "tool_result"
    id: str
    ok: bool
    content: list[Part] = Field(default_factory=list)
    model_text: str  # exactly what the model was given, so history can be rebuilt from events
    error_code: str | None = None
    error_message: str | None = None
    duration_ms: int = 0
    # the server's task that still runs (MCP Tasks extension): its result comes later, polled
    task: RunningTask | None = None


class TaskResultEvent(_Event):
    """The result of a server's task that outlived its turn's call (the call ended "still running"):
    added to the conversation between turns, once polled. `id`: the call's."""

    type: Literal["task_result"] = "task_result"
    id: str
    tool: str
    status: str
    ok: bool
    content: list[Part] = Field(default_factory=list)
    model_text: str


class FoundTool(BaseModel):
    """A tool a search found: its name for the model, its name and title on its server."""

    model_config = ConfigDict(frozen=True)

    name: str
    tool: str
    title: str
    server: str
    summary: str = ""


class ToolKey(BaseModel):
    """A tool of the conversation's found tools, as the next turn finds it again: its server's key
    and its name there."""

    model_config = ConfigDict(frozen=True)

    server: str
    tool: str


class ToolSearchEvent(_Event):
    """The model searched the assistant's tools (services/loop/tool_search.py): `found` are offered
    from the next round on; `kept` is the conversation's found tools since, least recently used
    first, which its next turns offer again. Its call and result in one: `model_text` is what the
    model was answered."""

    type: Literal["tool_search"] = "tool_search"
    id: str
    name: str  # as the model called the search
    query: str
    round: int
    found: list[FoundTool] = Field(default_factory=list)
    model_text: str
    kept: list[ToolKey] = Field(default_factory=list)
    replay: dict[str, Any] | None = None  # as ToolCallEvent's: what the provider needs back on the call


class ToolProgressEvent(_Event):
    """A running call's `notifications/progress`, coalesced (see call_observer.py)."""

    type: Literal["tool_progress"] = "tool_progress"
    id: str
    progress: float
    total: float | None = None
    message: str | None = None
    elapsed_ms: int = 0


class ToolLogEvent(_Event):
    """A server's `notifications/message` sent while this call ran (see call_observer.py)."""

    type: Literal["tool_log"] = "tool_log"
    id: str
    level: str
    logger: str | None = None
    message: str


class ElicitationRequiredEvent(_Event):
    """A running call's server asks the user: a form (`requested_schema`) or a page to visit (`url`,
    shown with its `host`). The call waits for the answer, its timeout and the turn's stopped, up
    to the server's question timeout."""

    type: Literal["elicitation_required"] = "elicitation_required"
    id: str
    elicitation: str  # ours, unique: what the user's answer names
    server: str
    mode: Literal["form", "url"]
    message: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    host: str | None = None
    # asked by a server's task after its call ended "still running": put between turns, on the call's block
    task: bool = False


class ElicitationDoneEvent(_Event):
    """The question of `elicitation_required` is closed: answered, dropped with its call, or
    cancelled unanswered at its limit (`note` says so, for the tool block)."""

    type: Literal["elicitation_done"] = "elicitation_done"
    id: str
    elicitation: str
    action: Literal["accept", "decline", "cancel"]
    note: str | None = None


class SamplingText(BaseModel):
    """One message of a server's sampling request, as the user reads and may edit it: its text
    (a part that is not text is named in brackets, and never sent to the model)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    text: str


class SamplingRequiredEvent(_Event):
    """A running call's server asks the assistant's model for a completion (sampling): shown to the
    user, who may edit the messages and the output cap, then approve or decline. The call waits, its
    timeout and the turn's stopped, up to the server's question timeout."""

    type: Literal["sampling_required"] = "sampling_required"
    id: str
    sampling: str  # ours, unique: what the user's answer names
    server: str
    messages: list[SamplingText]
    system_prompt: str | None = None
    max_tokens: int


class SamplingDoneEvent(_Event):
    """The request of `sampling_required` is closed: answered by the model (`answer`, what went
    back to the server), declined, cancelled with its call or at its limit, or refused (`note`)."""

    type: Literal["sampling_done"] = "sampling_done"
    id: str
    sampling: str
    action: Literal["accept", "decline", "cancel"]
    answer: str | None = None
    model: str | None = None
    note: str | None = None


class RecordChange(BaseModel):
    """One field of one record a waiting call would change, in the user's words (record name,
    field label, old and new value as the user reads them): what the approval shows."""

    model_config = ConfigDict(frozen=True)

    record: str
    field: str
    old: str = ""
    new: str = ""


class PendingCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    title: str
    server: str
    arguments: dict[str, Any]
    # what the call would change, where its tool can say so before it runs (This Odoo's writes)
    changes: list[RecordChange] = Field(default_factory=list)


class _PauseEvent(_Event):
    """A turn waiting for the user. `turn_ms`: the turn's time used so far (the user's is never
    counted), what a turn resumed after an approval or a sign-in goes on from."""

    turn_ms: int = 0


class ApprovalRequiredEvent(_PauseEvent):
    type: Literal["approval_required"] = "approval_required"
    calls: list[PendingCall]


class SignIn(BaseModel):
    """One server the user must sign in to (again) before the waiting calls can run."""

    model_config = ConfigDict(frozen=True)

    server_id: int
    server: str
    url: str  # Odoo's route that starts the sign-in, opened in a new tab
    step_up: bool = False  # signed in, but a call needs a wider permission
    scope: str | None = None
    message: str


class AuthRequiredEvent(_PauseEvent):
    """The turn waits for the user to sign in to `servers`; `calls` run once they have (or fail,
    saying why, for a server the user chose to go on without)."""

    type: Literal["auth_required"] = "auth_required"
    servers: list[SignIn]
    calls: list[PendingCall]


class ConfirmContinueEvent(_Event):
    type: Literal["confirm_continue"] = "confirm_continue"
    rounds_used: int
    max_rounds: int


class WarningEvent(_Event):
    type: Literal["warning"] = "warning"
    code: str
    message: str


class UsageEvent(_Event):
    """The tokens of one model call of the turn, as its provider reported them: the Odoo layer
    records them with their cost. `round`: the round the call belongs to (the closing call
    without tools has the number of the last round). `incomplete`: the call's stream did not
    complete (cut, stalled, or stopped with the turn); its tokens are estimated where the provider
    reported none, since providers bill what they read and streamed."""

    type: Literal["usage"] = "usage"
    round: int
    usage: TokenUsage
    incomplete: bool = False
    # the call answered a server's sampling request (a tool call's), not the turn's own round
    sampling: bool = False


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    code: str
    message: str


class DoneEvent(_Event):
    type: Literal["done"] = "done"
    message_id: int | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    rounds: int


Event = Annotated[
    StartEvent
    | RoundEvent
    | TextEvent
    | ThinkingEvent
    | ModelRefusedParamEvent
    | ToolInputEvent
    | ToolCallEvent
    | ToolResultEvent
    | TaskResultEvent
    | ToolSearchEvent
    | ToolProgressEvent
    | ToolLogEvent
    | ElicitationRequiredEvent
    | ElicitationDoneEvent
    | SamplingRequiredEvent
    | SamplingDoneEvent
    | ApprovalRequiredEvent
    | AuthRequiredEvent
    | ConfirmContinueEvent
    | WarningEvent
    | UsageEvent
    | ErrorEvent
    | DoneEvent,
    Field(discriminator="type"),
]

_EVENT = TypeAdapter(Event)

# every class of Event: what the writers of a turn's records may name (turn/event_dispatch.py)
EVENT_CLASSES: tuple[type[BaseModel], ...] = get_args(get_args(Event)[0])

# A turn stops at these: it either finished or waits for the user.
FINAL_TYPES = frozenset({"done", "error", "approval_required", "auth_required", "confirm_continue"})
# a failed call's status, by its result's error code; any other failure is "error"
FAILED_CALL_STATUS = {ErrorCode.TOOL_DENIED.value: "denied", ErrorCode.CANCELLED.value: "cancelled"}


def parse_event(data: dict[str, Any]) -> Event:
    """Rebuild an event from its persisted or streamed payload."""
    return _EVENT.validate_python(data)
