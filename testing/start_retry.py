"""The chat widget's way of sending a message's start again (static/src/chat/logic/start_retry.js), for
the clients that behave like it: the benchmarks' users. tests_py/test_start_retry.py keeps the two
equal.

A start that failed before anything was stored (Odoo's 500 when its database pool is full, a
proxy's 502, 503 or 504, a network error before the first event) is sent again with the same
request key after a growing, jittered wait; the server answers a key it stored already with 409
ALREADY_RECEIVED instead of answering the message twice.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from collections.abc import Callable

NOT_STORED_STATUSES = frozenset({500, 502, 503, 504})
START_RETRY_LIMIT = 8
FIRST_DELAY_MS = 500
LONGEST_DELAY_MS = 8000


def start_retryable(status: int | None, error: str | None, received: int) -> bool:
    """Whether a start answered `status` with body `error` (None: no answer) after `received`
    events may be sent again."""
    if received:
        return False
    if status is None:
        return error is not None  # the network failed before any answer
    if status not in NOT_STORED_STATUSES:
        return False
    return not _route_error(error)


def _route_error(body: str | None) -> bool:
    """Whether the body is one of the chat route's own JSON errors (those say what to fix)."""
    try:
        data = json.loads(body or "")
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), dict) and "code" in data["error"]


def start_retry_delay(attempt: int, rand: Callable[[], float] = random.random) -> float | None:
    """Seconds to wait before retry `attempt` (from 1); None past START_RETRY_LIMIT."""
    if attempt < 1 or attempt > START_RETRY_LIMIT:
        return None
    step = min(LONGEST_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1))
    return round(step / 2 + rand() * step / 2) / 1000


def new_request_key() -> str:
    return secrets.token_hex(16)


def stream_with_retries(send: Callable[[dict], dict], body: dict, sleep: Callable[[float], None] = time.sleep) -> dict:
    """`send(body)` (a WebClient.stream) with a new request key, sent again as the widget does.
    The result is the last try's, with "start_retries" (how many times it was sent again) and
    "waited" (seconds from the first try to the last one, which its event times do not count)."""
    body = {**body, "request_key": new_request_key()}
    first = time.perf_counter()
    retries = 0
    while True:
        tried = time.perf_counter()
        run = send(body)
        delay = None
        if start_retryable(run.get("status"), run.get("error"), len(run.get("events") or ())):
            delay = start_retry_delay(retries + 1)
        if delay is None:
            return {**run, "start_retries": retries, "waited": tried - first}
        retries += 1
        sleep(delay)
