"""The server-side agent loop: a bounded tool-call loop that streams typed events.

A round is one model call with tools and the calls it asks for. Rounds run until the model answers
without tools; before the last allowed round the user is asked whether to go on, and a turn out of
rounds (or told to stop) gets one last call without tools so the user still gets an answer. Pauses
(approval, "continue?") end the generator: the persisted history is all a later call needs to
resume, in any process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.messages import SystemMessage

from ..apps import prompt_section
from ..call_clock import TurnBudget
from ..errors import AiMcpError, AuthRequired, ErrorCode, LlmError, McpError
from ..events import (
    ApprovalRequiredEvent,
    AuthRequiredEvent,
    ConfirmContinueEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    RecordChange,
    RoundEvent,
    StartEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolSearchEvent,
    UsageEvent,
    WarningEvent,
)
from ..llm import ContextExceeded, ModelReply, Thinking, ToolCallDelta
from ..mcp import McpHub
from ..server_spec import Transport
from ..token_usage import TokenUsage
from ._prompted_tools import describe_tools, parse_reply
from ._tool_input_stream import ToolInputStream
from .context_fit import ContextFitter
from .model_call import ModelCaller
from .offered_tools import ToolOffer
from .pauses import approval_pause, sign_in_pause
from .sampling_call import SamplingCall
from .token_estimate import text_tokens
from .tool_runner import BoundTool, RunLimits, ToolRunner, check_arguments, failed
from .transcript import (
    HistoryMessage,
    HistoryToolCall,
    last_round_wanted_tools,
    pending_calls,
    rounds_used,
    to_langchain,
)
from .turn_control import TurnControl
from .turn_request import Resume, TurnRequest
from .turn_tools import TurnTools

_logger = logging.getLogger(__name__)

FINAL_CALL_HINT = "Tool use is over for this answer: answer the user now with what you have."
# what the model reads of a call refused in a turn nobody attends (a server action's run)
UNATTENDED_APPROVAL = (
    "Not run: this answer runs unattended, and its action does not allow this tool without an approval. "
    "Answer without it."
)
UNATTENDED_UNLISTED = "Not run: this answer runs unattended and may call only the tools its action lists"


async def run_turn(request: TurnRequest, hub: McpHub, control: TurnControl | None = None) -> AsyncIterator[Event]:
    """Events of one turn, or of its resumption. Runs on the hub's loop; closing it cancels
    the model request and every tool call in flight. `control` lets another thread cancel one
    call while the turn runs."""
    turn = _Turn(request, hub, control)
    if control is not None:
        control.attach(asyncio.get_running_loop(), turn.runner.cancel, turn.runner.answer)
    try:
        async with contextlib.aclosing(turn.events()) as events:
            async for event in events:
                yield event
    finally:
        if control is not None:
            # stopped mid-call: the call is recorded all the same (the provider bills what it read)
            control.leave_unfinished(turn.streaming.usage_event() if turn.streaming else None)
            control.detach()


class _Turn:
    def __init__(self, request: TurnRequest, hub: McpHub, control: TurnControl | None = None) -> None:
        self.request = request
        self.control = control
        self.settings = request.assistant
        self.limits = request.assistant.limits
        self.hub = hub
        self.budget = TurnBudget(self.limits.turn_timeout, hub.now, request.spent)
        self.history = list(request.history)
        if request.user_message:
            self.history.append(HistoryMessage(role="user", content=request.user_message))
        self.round = rounds_used(self.history)
        self.usage = TokenUsage()
        self.streaming: _CallMeter | None = None  # the model call under way
        self.bound = TurnTools(hub, request.grants, request.sign_in_links, request.declined)
        self.offer = ToolOffer(self.bound, self.limits.tool_search_threshold, (), ())
        self.confirmed = False
        self._invalid_json: set[str] = set()  # ids of calls whose arguments were not JSON
        self.model = ModelCaller(self.settings.llm, request.prompt_cache_key)
        self.fitter = ContextFitter(self.settings.llm)
        # a model that takes no native tool calls has them described in the prompt
        self.prompted = self.settings.prompted_tools or not self.settings.llm.capabilities.native_tools
        self.runner = ToolRunner(
            hub,
            RunLimits(self.limits.call_timeout, self.limits.per_server_concurrency, self.limits.model_text_limit),
            self.budget,
            ask=not request.unattended,
            local=request.local_tools,
            # a server's sampling request, once its user approved it, is a model call of this turn
            sampler=SamplingCall(self.settings.llm, request.spend, self.remaining, self._charged, lambda: self.round),
        )

    def remaining(self) -> float:
        return self.budget.remaining()

    def _turn_ms(self) -> int:
        return int(self.budget.spent() * 1000)

    async def events(self) -> AsyncIterator[Event]:
        yield StartEvent(
            conversation_id=self.request.conversation_id,
            assistant=self.settings.name,
            max_rounds=self.limits.max_rounds,
        )
        try:
            async for warning in self.bound.bind(self.request.tools, self.request.skills):
                yield warning
            limits, found = self.limits, self.request.found_tools
            self.offer = ToolOffer(
                self.bound, limits.tool_search_threshold, found, self.history, limits.tool_search_bytes
            )
            resume = self.request.resume
            if resume is not None:
                async for event in self._resume(resume):
                    yield event
                    if isinstance(event, (DoneEvent, ApprovalRequiredEvent, AuthRequiredEvent)):
                        return
            async for event in self._rounds():
                yield event
        except AiMcpError as exc:
            _logger.info("Turn ended: assistant=%s code=%s", self.settings.name, exc.code.value)
            yield ErrorEvent(code=exc.code.value, message=exc.message)

    # -- rounds --------------------------------------------------------------------------------

    async def _rounds(self) -> AsyncIterator[Event]:
        while True:
            if self.round >= self.limits.max_rounds:
                async for event in self._final_answer():
                    yield event
                return
            if (
                self.round == self.limits.max_rounds - 1
                and last_round_wanted_tools(self.history)
                and not self.confirmed
                and not self.request.unattended
            ):
                yield ConfirmContinueEvent(rounds_used=self.round, max_rounds=self.limits.max_rounds)
                return
            await self._check_spend()
            self.round += 1
            yield RoundEvent(n=self.round, max=self.limits.max_rounds)
            reply: ModelReply | None = None
            inputs = ToolInputStream.of(self.bound.tools, self.hub.now)
            async for item in self._model_call(with_tools=True, tool_deltas=inputs is not None):
                if isinstance(item, ModelReply):
                    reply = item
                elif not isinstance(item, ToolCallDelta):
                    yield item
                elif inputs is not None and (event := inputs.feed(item)) is not None:
                    yield event
            assert reply is not None
            calls = self._planned_calls(reply)
            self.history.append(
                HistoryMessage(
                    role="assistant",
                    content=reply.text,
                    tool_calls=tuple(
                        HistoryToolCall(id=c.id, name=c.name, arguments=c.arguments, replay=c.replay) for c in calls
                    ),
                    reasoning=reply.reasoning,
                    reasoning_as=reply.reasoning_field,
                )
            )
            if not calls:
                yield self._done()
                return
            calls = self._answer_unreachable(calls)
            searches, calls = self._searched(calls)
            for event in [*searches, *calls]:
                yield event
            if not calls:
                continue
            if reply.finish_reason == "length":
                # LangChain completes cut-off JSON leniently; running such a call would act on half its arguments.
                for call in calls:
                    result = failed(
                        call,
                        ErrorCode.LLM_BAD_RESPONSE,
                        "Not run: the model's output limit cut this call's arguments off. Make a shorter call.",
                    )
                    self._record(result)
                    yield result
                continue
            async for event in self._execute(calls, approvals=None):
                yield event
                if isinstance(event, (ApprovalRequiredEvent, AuthRequiredEvent)):
                    return

    async def _resume(self, resume: Resume) -> AsyncIterator[Event]:
        pending = pending_calls(self.history)
        if pending:
            calls = [self._call_event(c.id, c.name, c.arguments, c.replay) for c in pending]
            # after a sign-in no approval was asked yet: the calls that need one ask for it now
            approvals = None if resume.signed_in else resume.approvals
            async for event in self._execute(calls, approvals=approvals):
                yield event
            return
        if resume.go_on or resume.signed_in:
            self.confirmed = bool(resume.go_on)
            return
        async for event in self._final_answer():
            yield event

    async def _final_answer(self) -> AsyncIterator[Event]:
        await self._check_spend()
        async for item in self._model_call(with_tools=False):
            if isinstance(item, ModelReply):
                self.history.append(HistoryMessage(role="assistant", content=item.text, reasoning=item.reasoning))
            elif not isinstance(item, ToolCallDelta):
                yield item
        yield self._done()

    async def _check_spend(self) -> None:
        """No model call starts once a budget the turn is charged to is spent: the turn ends
        saying which (spend_guard.py: a turn goes over a budget by one round at most)."""
        spend = self.request.spend
        if spend is None:
            return
        await spend.settled()
        if (refusal := spend.refusal()) is not None:
            _logger.info("Turn stopped, a budget is spent: assistant=%s round=%s", self.settings.name, self.round)
            raise AiMcpError(ErrorCode.BUDGET_SPENT, refusal)

    def _done(self) -> DoneEvent:
        return DoneEvent(usage=self.usage.totals(), rounds=self.round)

    async def _model_call(
        self, with_tools: bool, tool_deltas: bool = False
    ) -> AsyncIterator[Event | ToolCallDelta | ModelReply]:
        """The model's reply as events (text, thinking, a refused parameter, what was left out to
        fit the model's window), the pieces of its tool calls, and the whole reply last."""
        if self.remaining() <= 0:
            raise LlmError(
                ErrorCode.LLM_TIMEOUT,
                f"The answer took longer than the assistant's {self.limits.turn_timeout:.0f} s limit.",
            )
        system_prompt = self._system_prompt(with_tools)
        tools = self.offer.definitions() if with_tools and not self.prompted else []
        while True:
            got_output = False
            try:
                async for item in self._fitted_call(system_prompt, tools, with_tools, tool_deltas):
                    got_output = got_output or isinstance(item, (TextEvent, ThinkingEvent, ToolCallDelta, ModelReply))
                    yield item
                return
            except ContextExceeded as refusal:
                # said before the answer started: the request is made again, shorter, once
                if got_output or not self.fitter.tighten(refusal):
                    raise
                _logger.info("Model context exceeded, sent again shorter: model=%s", self.settings.llm.model)
                yield WarningEvent(
                    code=ErrorCode.LLM_CONTEXT_EXCEEDED.value,
                    message="The conversation was longer than the model reads: it was sent again with less of it.",
                )

    async def _fitted_call(
        self, system_prompt: str, tools: Sequence[dict[str, Any]], with_tools: bool, tool_deltas: bool
    ) -> AsyncIterator[Event | ToolCallDelta | ModelReply]:
        """One model call with the history fitted to the model's window (context_fit.py)."""
        final_hint = "" if with_tools else FINAL_CALL_HINT
        fitted = self.fitter.fit(self.history, f"{system_prompt}\n\n{final_hint}".strip(), tools)
        for notice in self.fitter.notices(fitted, self.history):
            yield WarningEvent(code=ErrorCode.LLM_CONTEXT_EXCEEDED.value, message=notice)
        messages = to_langchain(fitted.history, system_prompt, native_tools=not self.prompted)
        if final_hint:
            messages.append(SystemMessage(final_hint))
        meter = self.streaming = _CallMeter(self.round, self.fitter.sent_tokens())
        try:
            async with contextlib.aclosing(self.model.stream(messages, tools, tool_deltas)) as stream:
                async for item in stream:
                    if isinstance(item, ModelReply):
                        self.streaming = None
                        self.fitter.calibrate(item.usage.input_tokens)
                        # one per model call, reported or not: a call whose provider counts nothing is still a call
                        yield self._charged(UsageEvent(round=self.round, usage=item.usage))
                    elif self.remaining() <= 0:
                        raise LlmError(
                            ErrorCode.LLM_TIMEOUT,
                            f"The answer took longer than the assistant's {self.limits.turn_timeout:.0f} s limit.",
                        )
                    meter.add(item)
                    if isinstance(item, str):
                        yield TextEvent(delta=item)
                    elif isinstance(item, Thinking):
                        yield ThinkingEvent(delta=item.delta, replay_as=item.replay_as)
                    else:
                        yield item
        except LlmError as failure:
            if self.streaming is meter:
                self.streaming = None
                if meter.billed(failure):
                    yield self._charged(meter.usage_event())
            raise

    def _charged(self, event: UsageEvent) -> UsageEvent:
        """`event`, its tokens counted in the turn and charged to its budgets."""
        self.usage += event.usage
        if self.request.spend is not None:
            self.request.spend.charge(event.usage)
        return event

    def _system_prompt(self, with_tools: bool) -> str:
        searching = self.offer.prompt_line() if with_tools else ""
        prompt = "\n\n".join(
            filter(
                None,
                [
                    self.settings.system_prompt,
                    self.request.subject,
                    prompt_section(self.request.app_contexts),
                    searching,
                ],
            )
        )
        if self.prompted and with_tools and self.bound.tools:
            prompt = f"{prompt}\n\n{describe_tools(self.offer.described())}".strip()
        return prompt

    def _searched(self, calls: list[ToolCallEvent]) -> tuple[list[ToolSearchEvent], list[ToolCallEvent]]:
        """The round's searches, answered (the model reads the tools found), and its other calls."""
        searches = [self.offer.search(call) for call in calls if self.offer.is_search(call.name)]
        for search in searches:
            self.history.append(HistoryMessage(role="tool", content=search.model_text, tool_call_id=search.id))
        others = [call for call in calls if not self.offer.is_search(call.name)]
        self.offer.used(call.name for call in others)
        return searches, others

    def _planned_calls(self, reply: ModelReply) -> list[ToolCallEvent]:
        if self.prompted:
            parsed = parse_reply(reply.text, [*self.bound.tools, self.offer.search_name])
            return [self._call_event(f"call_{self.round}_{i}", c.name, c.arguments) for i, c in enumerate(parsed.calls)]
        calls = [
            self._call_event(
                c.get("id") or f"call_{self.round}_{i}", c["name"], c.get("args") or {}, reply.replay.get(c.get("id"))
            )
            for i, c in enumerate(reply.tool_calls)
        ]
        for i, bad in enumerate(reply.invalid_tool_calls):
            call = self._call_event(bad.get("id") or f"bad_{self.round}_{i}", bad.get("name") or "unknown", {})
            self._invalid_json.add(call.id)
            calls.append(call)
        return calls

    def _call_event(
        self, call_id: str, name: str, arguments: Any, replay: dict[str, Any] | None = None
    ) -> ToolCallEvent:
        tool = self.bound.tools.get(name)
        arguments = arguments if isinstance(arguments, dict) else {"value": arguments}
        return ToolCallEvent(
            id=call_id,
            name=name,
            tool=tool.info.name if tool else name,
            title=tool.title_of(arguments) if tool else name,
            server=tool.server.name if tool else "",
            arguments=arguments,
            round=self.round,
            requires_approval=bool(tool and tool.requires_approval),
            approval=tool.approval if tool and not tool.requires_approval else None,
            icon=tool.info.icon if tool else None,
            app=tool.info.app_uri if tool and tool.server.apps else None,
            replay=replay,
        )

    # -- execution -----------------------------------------------------------------------------

    async def _execute(self, calls: list[ToolCallEvent], approvals: dict[str, bool] | None) -> AsyncIterator[Event]:
        """Run a round's calls. approvals=None means none were asked yet: calls that need one pause
        the turn, as do calls of a server the user must sign in to first."""
        runnable: list[tuple[ToolCallEvent, BoundTool]] = []
        for index, call in enumerate(calls):
            refusal = self._refusal(call, index)
            if refusal is None:
                tool = self.bound.tools[call.name]
                # a denial stands even when the tool was allowed for the conversation since it was asked
                if approvals is not None and (
                    approvals.get(call.id) is False or (tool.requires_approval and call.id not in approvals)
                ):
                    refusal = failed(call, ErrorCode.TOOL_DENIED, "Not run: this call was denied by the user.")
                else:
                    runnable.append((call, tool))
                    continue
            self._record(refusal)
            yield refusal
        if self.request.unattended:
            runnable, refused_now = self._unattended_refusals(runnable)
            for refusal in refused_now:
                self._record(refusal)
                yield refusal
        signing = {
            tool.server.key: self.bound.needs_sign_in[tool.server.key]
            for _, tool in runnable
            if tool.server.key in self.bound.needs_sign_in
        }
        if signing:
            # the calls wait together, as for an approval: the round's results reach the model at once
            yield self._auth_required(signing, [call for call, _ in runnable])
            return
        waiting = [call for call, tool in runnable if tool.requires_approval] if approvals is None else []
        if waiting:
            yield approval_pause(waiting, self._turn_ms(), await self._changes(waiting))
            return
        if self.control is not None:
            # a process may die the instant a call reaches its server: its audit row comes first
            await self.control.until_audited(call.id for call, _ in runnable)
        results: dict[str, ToolResultEvent] = {}
        async with contextlib.aclosing(self.runner.run(runnable)) as running:
            async for event in running:
                if isinstance(event, ToolResultEvent) and self._needs_sign_in_now(event.id, runnable):
                    continue  # held back: the call runs again once the user has signed in
                if isinstance(event, ToolResultEvent):
                    results[event.id] = event
                yield event
        for call, _ in runnable:  # the model reads results in the order it asked
            if call.id in results:
                self._record(results[call.id])
        refused = {call.id: tool.server.key for call, tool in runnable if call.id not in results}
        if refused:
            signing = {key: self.runner.sign_ins[call_id] for call_id, key in refused.items()}
            yield self._auth_required(signing, [call for call, _ in runnable if call.id in refused])

    def _unattended_refusals(
        self, runnable: list[tuple[ToolCallEvent, BoundTool]]
    ) -> tuple[list[tuple[ToolCallEvent, BoundTool]], list[ToolResultEvent]]:
        """(the calls that may run, the refusals of the others) in a turn nobody attends: a call
        that would wait for an approval or a sign-in is refused, and the model answers without it."""
        left, refusals = [], []
        for call, tool in runnable:
            if tool.requires_approval:
                refusals.append(failed(call, ErrorCode.TOOL_DENIED, UNATTENDED_APPROVAL))
            elif tool.server.key in self.bound.needs_sign_in:
                refusals.append(failed(call, ErrorCode.MCP_AUTH_REQUIRED, _unattended_sign_in(tool.server.name)))
            else:
                left.append((call, tool))
        return left, refusals

    async def _changes(self, calls: list[ToolCallEvent]) -> dict[str, list[RecordChange]]:
        """What each waiting call of a local tool would change, for the approval to show: computed
        before the pause, in a worker thread (it reads the database)."""
        local = self.request.local_tools
        changes: dict[str, list[RecordChange]] = {}
        for call in calls:
            tool = self.bound.tools[call.name]
            if local is None or tool.server.transport is not Transport.ODOO:
                continue
            changes[call.id] = await asyncio.to_thread(local.changes, tool.info.name, tool.arguments(call.arguments))
        return changes

    def _needs_sign_in_now(self, call_id: str, runnable: list[tuple[ToolCallEvent, BoundTool]]) -> bool:
        """A call its per-user OAuth server refused for want of a (wider) sign-in: the user is
        asked to sign in rather than the model told to give up (unless nobody is there to sign in)."""
        if call_id not in self.runner.sign_ins or self.request.unattended:
            return False
        return self.bound.waits_for_sign_in(next(tool.server for call, tool in runnable if call.id == call_id))

    def _auth_required(self, refusals: dict[str, AuthRequired], calls: list[ToolCallEvent]) -> AuthRequiredEvent:
        event = sign_in_pause(refusals, self.request.sign_in_links, calls, self._turn_ms())
        _logger.info(
            "Turn waits for a sign-in: assistant=%s servers=%s",
            self.settings.name,
            ",".join(s.server for s in event.servers),
        )
        return event

    def _answer_unreachable(self, calls: list[ToolCallEvent]) -> list[ToolCallEvent]:
        """The calls left to run once those of servers that could not be reached at the turn's
        start are answered: the model reads why, and the user has the warning of the start, not a
        failed call (nothing was sent to the server). These calls are not stored, so the history
        rebuilt from the events later holds neither them nor their answers."""
        left = []
        for call in calls:
            unreachable = self.bound.unreachable_tools.get(call.name)
            if unreachable is None:
                left.append(call)
                continue
            self._record(_unreachable(call, *unreachable))
        return left

    def _refusal(self, call: ToolCallEvent, index: int) -> ToolResultEvent | None:
        if index >= self.limits.max_calls_per_round:
            return failed(
                call,
                ErrorCode.LIMIT_EXCEEDED,
                f"Not run: at most {self.limits.max_calls_per_round} tool calls per round. Call it in the next round.",
            )
        if call.id in self._invalid_json:
            return failed(
                call,
                ErrorCode.MCP_INVALID_PARAMS,
                f"The arguments for {call.name} were not valid JSON. Send them as a JSON object.",
            )
        declined = self.bound.declined_tools.get(call.name)
        if declined is not None:
            return failed(
                call,
                ErrorCode.MCP_AUTH_REQUIRED,
                f"Not run: the user chose not to sign in to {declined.server.name}, "
                "so its tools are unavailable in this answer. Answer without them.",
            )
        unreachable = self.bound.unreachable_tools.get(call.name)
        if unreachable is not None:  # a call stored before, waiting for its approval
            return _unreachable(call, *unreachable)
        tool = self.bound.tools.get(call.name)
        if tool is None and self.request.unattended:
            offered = ", ".join(sorted(self.offer.names())) or "none"
            return failed(call, ErrorCode.TOOL_DENIED, f"{UNATTENDED_UNLISTED} (it may call: {offered}).")
        if tool is None:
            offered = ", ".join(sorted(self.offer.names())) or "none"
            return failed(
                call,
                ErrorCode.MCP_TOOL_NOT_FOUND,
                f"The tool {call.name!r} is not offered in this conversation (offered: {offered}).",
            )
        if not self.offer.may_call(call.name):
            return failed(
                call,
                ErrorCode.MCP_TOOL_NOT_FOUND,
                f"The tool {call.name!r} is not offered yet: find it with {self.offer.search_name} first.",
            )
        return check_arguments(tool, call)

    def _record(self, result: ToolResultEvent) -> None:
        self.history.append(HistoryMessage(role="tool", content=result.model_text, tool_call_id=result.id))


class _CallMeter:
    """What a model call streamed so far: its usage estimated, should the stream not complete
    (token_estimate.py: the request as fitted, the output from the text, reasoning and calls)."""

    def __init__(self, round_number: int, input_tokens: int) -> None:
        self.round = round_number
        self.input_tokens = input_tokens
        self.output: list[str] = []

    def add(self, item: object) -> None:
        if isinstance(item, str):
            self.output.append(item)
        elif isinstance(item, Thinking):
            self.output.append(item.delta)
        elif isinstance(item, ToolCallDelta):
            self.output += [item.name or "", item.arguments]

    def billed(self, failure: LlmError) -> bool:
        """Whether the provider likely bills the call: it streamed, or it did not answer in time
        (it read the request); a refusal (an error status, no connection) is not billed."""
        return bool(self.output) or failure.code is ErrorCode.LLM_TIMEOUT

    def usage_event(self) -> UsageEvent:
        usage = TokenUsage(input_tokens=self.input_tokens, output_tokens=text_tokens("".join(self.output)))
        return UsageEvent(round=self.round, usage=usage, incomplete=True)


def _unattended_sign_in(server: str) -> str:
    return (
        f"Not run: {server} needs a sign-in, and nobody is there to sign in in this unattended answer. "
        "Answer without it."
    )


def _unreachable(call: ToolCallEvent, tool: BoundTool, error: McpError) -> ToolResultEvent:
    return failed(
        call,
        error.code,
        f"Not run: {tool.server.name} could not be reached when this answer started ({error.message}), "
        "so its tools are unavailable in this answer. Answer without them.",
    )
