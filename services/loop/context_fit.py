"""The history a model call sends, fitted to the model's context window.

Before each model call of a turn (the history grows with each round's tool results) the request is
measured in tokens (token_estimate.py, calibrated by what the provider reported for the turn's
last call, taken with a margin before it reported anything) against the window, less a reserve for
the answer and what the system prompt and the tools offered take:

- a tool result of an earlier turn longer than a quarter of the room is cut to that, with the
  truncation marker the model already knows from results cut at the source (tool_result.py);
- the oldest turns go first, whole (a turn: a user message and what followed it, so a tool call
  never loses its result), until the rest fits;
- the current turn is never left out: when it alone is longer than the room, its tool results
  share what is left, the longest cut first, and the provider answers what could be fitted.

A provider that still finds the request too long (ContextExceeded: the estimate was wrong by more
than its margin) gets it once more, fitted to a tighter window (`tighten`). What the user might
miss is told as a warning (`notices`): turns left out, and results of the current turn shortened.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..llm import ContextExceeded, LlmSettings
from ..tool_result import TRUNCATION_MARKER
from .token_estimate import message_tokens, messages_tokens, prompt_tokens, text_tokens
from .transcript import HistoryMessage

# the answer's reserve when the model's output cap is unknown: an eighth of the window, at most this
ANSWER_SHARE = 8
ANSWER_RESERVE_CAP = 16_384
# an earlier turn's tool result takes at most this share of the room
EARLIER_RESULT_SHARE = 4
# a result is never cut below this (tokens): the model still sees what it was about
MIN_RESULT_TOKENS = 64
# a provider's count against the estimate, at most this far either way (a count of another request)
RATIO_BOUNDS = (0.25, 4.0)
# the provider's tokens per estimated token until it has counted a request of the turn: the estimate
# is arithmetic on characters and counts short where text takes more than 4 characters a token
# (JSON, code, identifiers, repeated letters), by a third and more; a first request fitted as if
# the estimate were exact is refused by a model whose window it nearly fills
UNCOUNTED_RATIO = 1.5
# after a refusal: the window taken as what the provider counted (or the estimate) times this
TIGHTER = 0.75
# ... and, where the provider named its window and its count, that window times this
NAMED_WINDOW_MARGIN = 0.9

_MARKER = re.compile(re.escape(TRUNCATION_MARKER).replace(r"\{omitted\}", r"(\d+)") + r"$")


class Fitted(BaseModel):
    """The history a call sends: `dropped_turns` oldest turns left out, the results of the calls
    `shortened` (ids) cut, those of the current turn among them in `shortened_now`; `tokens`: the
    request's estimate, uncalibrated."""

    model_config = ConfigDict(frozen=True)

    history: list[HistoryMessage]
    dropped_turns: int = 0
    shortened: tuple[str, ...] = ()
    shortened_now: tuple[str, ...] = ()
    tokens: int = 0


def answer_reserve(window: int, max_output_tokens: int | None) -> int:
    """The tokens kept for the answer: the model's output cap when it has one, else a share."""
    if max_output_tokens:
        return min(max_output_tokens, window // 2)
    return min(window // ANSWER_SHARE, ANSWER_RESERVE_CAP)


def split_turns(history: Sequence[HistoryMessage]) -> list[list[HistoryMessage]]:
    """The history as turns: each user message and what followed it."""
    turns: list[list[HistoryMessage]] = []
    for message in history:
        if message.role == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def fit_history(history: Sequence[HistoryMessage], room: int) -> Fitted:
    """`history` within `room` tokens (estimated), as the module's docstring says."""
    turns = split_turns(history)
    if not turns:
        return Fitted(history=[])
    current, earlier = turns[-1], turns[:-1]
    shortened: list[str] = []
    share = max(room // EARLIER_RESULT_SHARE, MIN_RESULT_TOKENS)
    earlier = [[_shortened(message, share, shortened) for message in turn] for turn in earlier]
    shortened_now: list[str] = []
    current_cost = messages_tokens(current)
    if current_cost > room:
        current = _fit_current(current, room, shortened_now)
        current_cost = messages_tokens(current)
    left = room - current_cost
    kept: list[list[HistoryMessage]] = []
    for turn in reversed(earlier):
        cost = messages_tokens(turn)
        if cost > left:
            break
        kept.append(turn)
        left -= cost
    fitted = [message for turn in reversed(kept) for message in turn] + current
    ids = {message.tool_call_id for message in fitted}
    return Fitted(
        history=fitted,
        dropped_turns=len(earlier) - len(kept),
        shortened=tuple(i for i in [*shortened, *shortened_now] if i in ids),
        shortened_now=tuple(shortened_now),
        tokens=room - left,
    )


def _fit_current(turn: list[HistoryMessage], room: int, shortened: list[str]) -> list[HistoryMessage]:
    """The current turn with its tool results sharing what its other messages leave of `room`."""
    results = [message for message in turn if message.role == "tool"]
    if not results:
        return turn
    others = sum(message_tokens(m) - text_tokens(m.content) * (m.role == "tool") for m in turn)
    level = max(_water_level([text_tokens(m.content) for m in results], room - others), MIN_RESULT_TOKENS)
    return [_shortened(message, level, shortened) if message.role == "tool" else message for message in turn]


def _water_level(sizes: list[int], budget: int) -> int:
    """The most each of `sizes` may keep for all to fit in `budget`: the small ones keep all they have."""
    remaining = max(budget, 0)
    for index, size in enumerate(sorted(sizes)):
        others = len(sizes) - index
        if size * others > remaining:
            return remaining // others
        remaining -= size
    return max(sizes, default=0)


def _shortened(message: HistoryMessage, tokens: int, shortened: list[str]) -> HistoryMessage:
    if message.role != "tool" or text_tokens(message.content) <= tokens:
        return message
    shortened.append(message.tool_call_id or "")
    return message.model_copy(update={"content": cut_text(message.content, tokens)})


def cut_text(text: str, tokens: int) -> str:
    """`text` cut to about `tokens`, marker included, saying how many characters were left out
    (those an earlier cut left out too)."""
    body, omitted = text, 0
    found = _MARKER.search(text)
    if found:
        body, omitted = text[: found.start()], int(found.group(1))
    marker_tokens = text_tokens(TRUNCATION_MARKER.format(omitted=len(body) + omitted))
    keep = max(tokens - marker_tokens, 1)
    chars = min(len(body), math.floor(keep * len(body) / max(text_tokens(body), 1)))
    while chars > 0 and text_tokens(body[:chars]) > keep:
        chars = chars * 9 // 10
    return body[:chars] + TRUNCATION_MARKER.format(omitted=len(body) - chars + omitted)


class ContextFitter:
    """Fits each model call of one turn to the model's window, learning from what the provider
    counts, and says what the user should know of what was left out."""

    def __init__(self, llm: LlmSettings) -> None:
        self.window = llm.context_window
        self.reserve = answer_reserve(self.window, llm.max_output_tokens)
        self.ratio = UNCOUNTED_RATIO  # the provider's tokens per estimated token, from its last count
        self.tightened = False
        self._sent = 0  # the last request's estimate
        self._told_dropped = 0
        self._told_shortened: set[str] = set()

    def fit(self, history: Sequence[HistoryMessage], system_prompt: str, tools: Sequence[dict[str, Any]]) -> Fitted:
        fixed = prompt_tokens(system_prompt, tools)
        room = math.floor((self.window - self.reserve) / self.ratio) - fixed
        fitted = fit_history(history, max(room, 0))
        self._sent = fixed + fitted.tokens
        return fitted

    def sent_tokens(self) -> int:
        """The last request fitted, estimated in the provider's tokens."""
        return math.ceil(self._sent * self.ratio)

    def calibrate(self, input_tokens: int) -> None:
        """The provider counted `input_tokens` in the last request fitted."""
        if input_tokens > 0 and self._sent > 0:
            self.ratio = min(max(input_tokens / self._sent, RATIO_BOUNDS[0]), RATIO_BOUNDS[1])

    def tighten(self, refusal: ContextExceeded) -> bool:
        """After the provider refused the last request as too long: a tighter window for one more
        try. False when it was tried already."""
        if self.tightened:
            return False
        self.tightened = True
        if refusal.sent and refusal.limit:
            self.calibrate(refusal.sent)
            self.window = min(self.window, math.floor(refusal.limit * NAMED_WINDOW_MARGIN))
        else:
            sent = refusal.sent or math.ceil(self._sent * self.ratio) + self.reserve
            self.window = min(self.window, math.floor(sent * TIGHTER))
        self.reserve = min(self.reserve, answer_reserve(self.window, None))
        return True

    def notices(self, fitted: Fitted, history: Sequence[HistoryMessage]) -> list[str]:
        """What the user should know of `fitted` and was not told yet in this turn: earlier turns
        left out, results of the current turn shortened (earlier turns' results were answered
        already: cutting them changes nothing the user saw)."""
        told: list[str] = []
        if fitted.dropped_turns > self._told_dropped:
            self._told_dropped = fitted.dropped_turns
            told.append(
                "The oldest turn of the conversation was left out to fit the model's context window."
                if fitted.dropped_turns == 1
                else f"The {fitted.dropped_turns} oldest turns of the conversation were left out to fit the model's "
                "context window."
            )
        names = {call.id: call.name for message in history for call in message.tool_calls}
        for call_id in fitted.shortened_now:
            if call_id not in self._told_shortened:
                self._told_shortened.add(call_id)
                told.append(
                    f"The result of tool {names.get(call_id, call_id)} was shortened to fit the model's context window."
                )
        return told
