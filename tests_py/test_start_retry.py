"""The benchmarks' users send a failed start again exactly as the chat widget does: the widget's
rules (static/src/chat/logic/start_retry.js, read here with node) equal testing/start_retry.py's, and
the client sends one request key however many times it tries."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.start_retry import (
    START_RETRY_LIMIT,
    start_retry_delay,
    start_retryable,
    stream_with_retries,
)

MODULE = Path(__file__).resolve().parent.parent / "static" / "src" / "chat" / "logic" / "start_retry.js"
STATUSES = list(range(400, 600))
NEARLY_ONE = 0.999999


@pytest.fixture(scope="module")
def widget() -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (20 or later) is needed to read the widget's module")
    script = f"""
        import({json.dumps(MODULE.as_uri())}).then((m) => console.log(JSON.stringify({{
            limit: m.START_RETRY_LIMIT,
            low: Array.from({{length: m.START_RETRY_LIMIT + 1}}, (_, i) => m.startRetryDelay(i + 1, () => 0)),
            high: Array.from({{length: m.START_RETRY_LIMIT + 1}},
                             (_, i) => m.startRetryDelay(i + 1, () => {NEARLY_ONE})),
            retried: {json.dumps(STATUSES)}.filter((status) => m.startRetryable({{code: "HTTP_ERROR", status}})),
            network: m.startRetryable({{code: "NETWORK_ERROR"}}),
        }})))"""
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_same_tries_and_waits_as_the_widget(widget: dict) -> None:
    assert widget["limit"] == START_RETRY_LIMIT
    attempts = range(1, START_RETRY_LIMIT + 2)
    as_ms = [None if d is None else round(d * 1000) for d in (start_retry_delay(a, lambda: 0) for a in attempts)]
    assert as_ms == widget["low"]
    high = [start_retry_delay(a, lambda: NEARLY_ONE) for a in attempts]
    assert [None if d is None else round(d * 1000) for d in high] == widget["high"]


def test_the_same_answers_are_sent_again(widget: dict) -> None:
    odoo_page = "<html><title>500 Internal Server Error</title></html>"
    assert [s for s in STATUSES if start_retryable(s, odoo_page, 0)] == widget["retried"]
    assert start_retryable(None, "ConnectionResetError: reset", 0) is widget["network"] is True


def test_the_routes_own_errors_and_started_streams_are_not_sent_again() -> None:
    refusal = json.dumps({"error": {"code": "INTERNAL_ERROR", "message": "no"}})
    assert not start_retryable(500, refusal, 0)
    assert not start_retryable(500, "<html>500</html>", 3)
    assert not start_retryable(409, json.dumps({"error": {"code": "ALREADY_RECEIVED"}}), 0)


def test_one_key_for_every_try_and_the_wait_counted() -> None:
    sent: list[dict] = []
    answers = iter(
        [{"status": 500, "error": "<html/>", "events": []}] * 2 + [{"status": 200, "error": None, "events": [1]}]
    )
    waits: list[float] = []

    def send(body: dict) -> dict:
        sent.append(body)
        return next(answers)

    run = stream_with_retries(send, {"message": "hi"}, sleep=waits.append)
    assert run["status"] == 200
    assert run["start_retries"] == 2
    assert len(sent) == 3 and len({body["request_key"] for body in sent}) == 1
    assert all(body["message"] == "hi" for body in sent)
    assert 0.25 <= waits[0] <= 0.5 and 0.5 <= waits[1] <= 1.0


def test_gives_up_after_the_limit_with_the_last_answer() -> None:
    waits: list[float] = []
    run = stream_with_retries(lambda body: {"status": 503, "error": "busy", "events": []}, {}, sleep=waits.append)
    assert (run["status"], run["start_retries"], len(waits)) == (503, START_RETRY_LIMIT, START_RETRY_LIMIT)
