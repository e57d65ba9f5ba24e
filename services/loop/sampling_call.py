"""The model call that answers a server's sampling request, once the user approved it.

It is a model call of the turn like any other: the same provider and model, made by the same
ModelCaller, refused when a budget the turn is charged to is spent (spend_guard.py) or the turn's
time is up, its messages fitted to the model's window (context_fit.py: the oldest exchanges go
first, the last message never), and its tokens reported as a `usage` event of the turn (with
`sampling`), which the Odoo layer records as an `ai.usage` row with its cost and charges to the
budgets. The turn's pace limits counted the turn it runs in. The request's output cap goes to the
provider as the model's output cap (`capped`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from ..errors import AiMcpError, ErrorCode, LlmError
from ..events import UsageEvent
from ..llm import ContextExceeded, LlmSettings, ModelReply, Thinking
from ..mcp import SamplingFailed, SamplingReply, SamplingRequest
from ..token_usage import TokenUsage
from .context_fit import ContextFitter
from .model_call import ModelCaller
from .spend_guard import SpendGuard
from .token_estimate import text_tokens
from .transcript import HistoryMessage, to_langchain

_logger = logging.getLogger(__name__)

TIME_UP = "The answer's time limit ran out while the model answered."
STOP_REASONS = {"length": "maxTokens", "max_tokens": "maxTokens", "stop": "endTurn"}


class SamplingCall:
    """Answers approved sampling requests with the turn's model. `charge(event)` counts a call's
    usage in the turn (and its budgets) and returns the event; `round_of()` is the turn's round."""

    def __init__(
        self,
        llm: LlmSettings,
        spend: SpendGuard | None,
        remaining: Callable[[], float],
        charge: Callable[[UsageEvent], UsageEvent],
        round_of: Callable[[], int],
    ) -> None:
        self._llm = llm
        self._spend = spend
        self._remaining = remaining
        self._charge = charge
        self._round_of = round_of

    async def __call__(self, request: SamplingRequest) -> SamplingReply:
        await self._check()
        settings = capped(self._llm, request.max_tokens)
        fitter = ContextFitter(settings)
        history = [HistoryMessage(role=message.role, content=message.text) for message in request.messages]
        system_prompt = request.system_prompt or ""
        while True:
            fitted = fitter.fit(history, system_prompt, [])
            messages = to_langchain(fitted.history, system_prompt, native_tools=True)
            try:
                reply = await self._stream(ModelCaller(settings), messages, fitter.sent_tokens())
            except ContextExceeded as refusal:
                if not fitter.tighten(refusal):
                    raise SamplingFailed(refusal, None) from None
                _logger.info("Sampling request too long for the model, sent again shorter: model=%s", settings.model)
                continue
            usage = self._charge(UsageEvent(round=self._round_of(), usage=reply.usage, sampling=True))
            return SamplingReply(
                text=reply.text,
                model=settings.model,
                stop_reason=STOP_REASONS.get(reply.finish_reason or "stop", "endTurn"),
                usage=usage,
            )

    async def _check(self) -> None:
        if self._remaining() <= 0:
            raise AiMcpError(ErrorCode.LLM_TIMEOUT, "The answer's time limit ran out before the model could answer.")
        if self._spend is None:
            return
        await self._spend.settled()
        if (refusal := self._spend.refusal()) is not None:
            raise AiMcpError(ErrorCode.BUDGET_SPENT, refusal)

    async def _stream(self, model: ModelCaller, messages: list, input_tokens: int) -> ModelReply:
        output: list[str] = []
        try:
            async with contextlib.aclosing(model.stream(messages, [], tool_deltas=False)) as stream:
                async for item in stream:
                    if isinstance(item, ModelReply):
                        return item
                    if self._remaining() <= 0:
                        raise LlmError(
                            ErrorCode.LLM_TIMEOUT, "The answer's time limit ran out while the model answered."
                        )
                    if isinstance(item, str):
                        output.append(item)
                    elif isinstance(item, Thinking):
                        output.append(item.delta)
        except LlmError as failure:
            if isinstance(failure, ContextExceeded) and not output:
                raise  # sent again shorter
            # the provider bills what it read and streamed (a refusal before that is not billed)
            billed = bool(output) or failure.code is ErrorCode.LLM_TIMEOUT
            raise SamplingFailed(failure, self._unfinished(input_tokens, output) if billed else None) from None
        raise SamplingFailed(LlmError(ErrorCode.LLM_BAD_RESPONSE, "The model's answer ended without a reply."), None)

    def _unfinished(self, input_tokens: int, output: list[str]) -> UsageEvent:
        usage = TokenUsage(input_tokens=input_tokens, output_tokens=text_tokens("".join(output)))
        return self._charge(UsageEvent(round=self._round_of(), usage=usage, incomplete=True, sampling=True))


def capped(llm: LlmSettings, max_tokens: int) -> LlmSettings:
    """`llm` with the request's output cap (the lower of it and the model's own), sent under the
    name the model takes, `max_tokens` where the model's record names none (a refusal of it sends
    it under its other name: model_call.py)."""
    capabilities = llm.capabilities
    if capabilities.max_tokens_param is None:
        capabilities = capabilities.model_copy(update={"max_tokens_param": "max_tokens"})
    cap = min(max_tokens, llm.max_output_tokens or max_tokens)
    return llm.model_copy(update={"max_output_tokens": cap, "capabilities": capabilities})
