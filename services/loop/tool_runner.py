"""Runs the tool calls of one round: checked, bounded, concurrent across servers, each a result event."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from mcp import types as mcp_types

from .. import json_schema
from ..call_clock import TurnBudget
from ..errors import AiMcpError, AuthRequired, ErrorCode
from ..events import ToolCallEvent, ToolResultEvent
from ..json_schema import InvalidSchema, SchemaProblem
from ..limits import PER_SERVER_CONCURRENCY, TOOL_CALL_TIMEOUT
from ..mcp import CallEvent, CallObserver, McpHub, Questions, Sampler, SamplingAnswer, SamplingDesk, parse_answer
from ..oauth import RefreshingTokens
from ..server_spec import ServerSpec, Transport
from ..tool_info import ToolInfo
from ..tool_result import DEFAULT_MODEL_TEXT_LIMIT, TextPart, ToolResult
from .local_tools import LocalTools
from .skill_tools import SkillShelf, skill_call_title

_logger = logging.getLogger(__name__)

CANCELLED_BY_USER = "The user cancelled this call before it finished; there is no result. Go on without it."
RunnerEvent = ToolResultEvent | CallEvent


@dataclass(frozen=True)
class BoundTool:
    """A tool the model may call in this turn, under `model_name`."""

    model_name: str
    server: ServerSpec
    info: ToolInfo
    requires_approval: bool = False
    fixed_arguments: Mapping[str, Any] = field(default_factory=dict)
    # an OAuth server's grant for the turn's user (or the shared one); None for other servers
    grant: RefreshingTokens | None = None
    # why its calls run without asking (ToolBinding.approval)
    approval: str | None = None
    # the skills `load_skill` and `read_skill_file` reach, for those two tools of a server (skill_tools.py)
    skills: SkillShelf | None = None

    def arguments(self, sent: Mapping[str, Any]) -> dict[str, Any]:
        """What the tool receives: the preset wins over the model; a null the schema does not
        allow for an optional property is left out."""
        return without_null_optionals(self.info.input_schema, {**sent, **self.fixed_arguments})

    def title_of(self, arguments: Mapping[str, Any]) -> str:
        """A call's title in the chat: a skill tool's names the skill (and file) it reads."""
        if self.skills is None:
            return self.info.display_title
        return skill_call_title(self.info.display_title, arguments)


@dataclass(frozen=True)
class RunLimits:
    call_timeout: float = TOOL_CALL_TIMEOUT.default
    per_server: int = int(PER_SERVER_CONCURRENCY.default)
    model_text_limit: int = DEFAULT_MODEL_TEXT_LIMIT


def failed(call: ToolCallEvent, code: ErrorCode, message: str, duration_ms: int = 0) -> ToolResultEvent:
    """A call that produced no tool output; the model reads the message and can correct itself."""
    return ToolResultEvent(
        id=call.id,
        ok=False,
        content=[TextPart(text=message)],
        model_text=f"Error {code.value}: {message}",
        error_code=code.value,
        error_message=message,
        duration_ms=duration_ms,
    )


def check_arguments(tool: BoundTool, call: ToolCallEvent) -> ToolResultEvent | None:
    """Validate against the tool's input schema before anything leaves the process."""
    try:
        problems = argument_problems(tool.info.input_schema, tool.arguments(call.arguments))
    except SchemaProblem as exc:
        return failed(call, exc.code, f"{call.name} cannot be called: its input schema {exc.reason}.")
    if not problems:
        return None
    details = "; ".join(problems)
    return failed(
        call, ErrorCode.MCP_INVALID_PARAMS, f"Invalid arguments for {call.name}: {details}. Fix them and call again."
    )


def argument_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """What is wrong with `arguments` for a tool of input schema `schema`, naming each field
    (e.g. "arguments.city: 5 is not of type 'string'"), the first five; none when they fit, or
    when the schema is not a valid one (a server's odd schema is its own to enforce). Raises
    SchemaProblem for a schema whose references cannot be resolved within it."""
    try:
        checker = json_schema.validator(schema)
    except InvalidSchema as exc:
        _logger.info("Tool schema not checkable, arguments passed as sent: error=%s", exc.reason)
        return []
    return [f"{_path(e)}: {e.message}" for e in json_schema.errors(checker, arguments)[:5]]


def without_null_optionals(schema: dict[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` without the nulls given for optional properties that do not allow null: a
    caller (a model, above all) that writes `null` for "not given" means the property left out,
    which is what the server receives rather than a refusal that costs a round."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return dict(arguments)
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    return {
        name: value
        for name, value in arguments.items()
        if value is not None or name in required or name not in properties or _allows_null(schema, name)
    }


def _allows_null(schema: dict[str, Any], name: str) -> bool:
    try:
        return json_schema.accepts(schema, schema["properties"][name], None)
    except SchemaProblem:
        return True  # kept as sent, for the check to report


def _path(error: jsonschema.ValidationError) -> str:
    return "arguments" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)


class ToolRunner:
    def __init__(
        self,
        hub: McpHub,
        limits: RunLimits,
        budget: TurnBudget,
        ask: bool = True,
        local: LocalTools | None = None,
        sampler: Sampler | None = None,
    ) -> None:
        self._hub = hub
        self._local = local
        self._limits = limits
        self._budget = budget
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._calls: dict[str, asyncio.Task[ToolResultEvent]] = {}
        self._cancelled: set[str] = set()
        # None when nobody can answer a server's question (an unattended turn): questions are declined
        self._questions: Questions | None = {} if ask else None
        # the servers' sampling requests waiting for the user; None: refused (nobody can approve)
        self._sampling = SamplingDesk(sampler) if ask and sampler is not None else None
        # calls refused for want of a sign-in (an expired grant, a wider scope): the turn asks for one
        self.sign_ins: dict[str, AuthRequired] = {}

    def answer(self, elicitation: str, action: str, content: dict[str, Any] | None = None) -> bool:
        """The user's answer to a server's question (elicitation_required) or sampling request
        (sampling_required, whose edits come as `content`); False when nobody waits for it."""
        if self._sampling is not None and elicitation in self._sampling.waiting:
            return self._answer_sampling(elicitation, action, content)
        waiting = self._questions.get(elicitation) if self._questions is not None else None
        if waiting is None or waiting.done():
            return False
        _logger.info("Elicitation answered: elicitation=%s action=%s", elicitation, action)
        waiting.set_result(mcp_types.ElicitResult(action=action, content=content if action == "accept" else None))
        return True

    def _answer_sampling(self, sampling: str, action: str, content: dict[str, Any] | None) -> bool:
        assert self._sampling is not None
        try:
            answer = parse_answer(action, content)
        except AiMcpError as exc:  # checked when it was stored: a request from elsewhere is declined
            _logger.warning("Sampling answer unreadable, declined: sampling=%s error=%s", sampling, exc.message)
            answer = SamplingAnswer(action="decline")
        _logger.info("Sampling answered: sampling=%s action=%s", sampling, answer.action)
        return self._sampling.answer(sampling, answer)

    def cancel(self, call_id: str) -> bool:
        """Stop one call at the user's request (the server is told); the others go on. False when
        the call is not running (yet) in this turn."""
        # a call still waiting for its server's turn is refused when it would start
        self._cancelled.add(call_id)
        task = self._calls.get(call_id)
        if task is None or task.done():
            return False
        _logger.info("Tool call cancelled by the user: call=%s", call_id)
        task.cancel()
        return True

    async def run(self, calls: list[tuple[ToolCallEvent, BoundTool]]) -> AsyncIterator[RunnerEvent]:
        """Yields what each call's server says while it runs (progress, log messages, questions
        for the user) and each result as it finishes. Closing the iterator cancels what still runs."""
        events: asyncio.Queue[RunnerEvent] = asyncio.Queue()
        tasks = [asyncio.create_task(self._run_one(call, tool, events)) for call, tool in calls]
        try:
            left = len(tasks)
            while left:
                event = await events.get()
                left -= isinstance(event, ToolResultEvent)
                yield event
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run_one(self, call: ToolCallEvent, tool: BoundTool, events: asyncio.Queue[RunnerEvent]) -> None:
        semaphore = self._semaphores.setdefault(tool.server.key, asyncio.Semaphore(self._limits.per_server))
        async with semaphore:
            started = time.monotonic()
            if call.id in self._cancelled:
                await events.put(failed(call, ErrorCode.CANCELLED, CANCELLED_BY_USER))
                return
            # its own task, so that the user can cancel this call without cancelling the turn
            observer = CallObserver(call.id, events.put_nowait, questions=self._questions, sampling=self._sampling)
            task = asyncio.create_task(self._call(call, tool, observer))
            self._calls[call.id] = task
            try:
                result = await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if call.id not in self._cancelled or (current is not None and current.cancelling()):
                    raise
                result = failed(call, ErrorCode.CANCELLED, CANCELLED_BY_USER, _ms(started))
            finally:
                self._calls.pop(call.id, None)
            await events.put(result)

    async def _call(self, call: ToolCallEvent, tool: BoundTool, observer: CallObserver) -> ToolResultEvent:
        # the stricter of the assistant's per-call limit and the server's own call timeout, within the turn's time
        timeout = min(self._limits.call_timeout, tool.server.call_timeout)
        started = time.monotonic()
        try:
            if tool.skills is not None:
                result = await _timed(tool.skills.call(self._hub, tool.info.name, call.arguments), tool, timeout)
            elif tool.server.transport is Transport.ODOO:
                result = await self._call_local(tool, call, timeout)
            else:
                result = await self._hub.acall_tool(
                    tool.server,
                    tool.info.name,
                    tool.arguments(call.arguments),
                    timeout=timeout,
                    retry_safe=tool.info.annotations.retry_safe,
                    observer=observer,
                    tokens=tool.grant,
                    budget=self._budget,
                )
        except AiMcpError as exc:
            if isinstance(exc, AuthRequired):
                self.sign_ins[call.id] = exc
            elapsed = _ms(started)
            _logger.info(
                "Tool call failed: server=%s tool=%s code=%s duration_ms=%d",
                tool.server.name,
                tool.info.name,
                exc.code.value,
                elapsed,
            )
            return failed(call, exc.code, exc.message, elapsed)
        elapsed = _ms(started)
        _logger.info(
            "Tool call: server=%s tool=%s ok=%s duration_ms=%d",
            tool.server.name,
            tool.info.name,
            not result.is_error,
            elapsed,
        )
        text = result.text_for_model(self._limits.model_text_limit)
        if result.is_error:
            return ToolResultEvent(
                id=call.id,
                ok=False,
                content=result.for_display(),
                model_text=f"Error {ErrorCode.MCP_EXECUTION_ERROR.value}: {text}",
                error_code=ErrorCode.MCP_EXECUTION_ERROR.value,
                error_message=text[:500],
                duration_ms=elapsed,
            )
        return ToolResultEvent(
            id=call.id, ok=True, content=result.for_display(), model_text=text, duration_ms=elapsed, task=result.task
        )

    async def _call_local(self, tool: BoundTool, call: ToolCallEvent, timeout: float) -> ToolResult:
        """A tool of this Odoo, run in a worker thread (it blocks on a database cursor of its own).
        A call past its timeout is answered as one; its thread finishes its transaction alone."""
        if self._local is None:
            raise AiMcpError(ErrorCode.CONFIG_INVALID, f"{tool.server.name} cannot run tools in this process.")
        arguments = tool.arguments(call.arguments)
        try:
            return await asyncio.wait_for(asyncio.to_thread(self._local.call, tool.info.name, arguments), timeout)
        except TimeoutError:
            raise AiMcpError(
                ErrorCode.MCP_TIMEOUT, f"{tool.info.name} did not finish within {timeout:g} seconds."
            ) from None
        except Exception as exc:  # noqa: BLE001 - a bug in a local tool fails its call, never the whole round
            _logger.exception("Local tool failed: server=%s tool=%s", tool.server.name, tool.info.name)
            raise AiMcpError(ErrorCode.INTERNAL_ERROR, f"{tool.info.name} failed unexpectedly.") from exc


async def _timed(running: Awaitable[ToolResult], tool: BoundTool, timeout: float) -> ToolResult:
    try:
        return await asyncio.wait_for(running, timeout)
    except TimeoutError:
        raise AiMcpError(
            ErrorCode.MCP_TIMEOUT, f"{tool.info.name} did not finish within {timeout:g} seconds."
        ) from None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
