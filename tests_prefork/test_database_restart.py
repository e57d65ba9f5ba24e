"""PostgreSQL restarted under a prefork Odoo answering several chats at once: what each user sees.

The database is a cluster of this test's own (testing/postgres.py: initdb in a temporary folder, on
a free port), never the machine's shared server, which the other tests and the other Odoo series
use meanwhile. One prefork node (`--workers=2`, its gevent worker serving the chat streams) runs on
it with ai_mcp installed; the MCP server is real, the model the scripted one. Four turns run at
once, two in the middle of a streamed answer, two waiting in a tool call, when the cluster is
restarted (`pg_ctl restart -m fast`: every connection is cut). What is checked is what the users
notice: every turn ends (no conversation is left answering), each says that the database connection
was lost, every message they sent is kept, the next message is answered, and the budget counter
holds exactly what the usage rows record.

Conditions are waited for with generous deadlines; no duration is asserted (the times of one run
are printed for docs/operators.md).
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.sse import SseDecoder, SseEvent  # noqa: E402
from testing.mcp_servers import HttpServer  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient, create_ai_user, create_scripted_provider  # noqa: E402
from testing.postgres import PostgresNotFound, PrivatePostgres  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

_logger = logging.getLogger(__name__)

API_KEY = "db-restart-key"
# the node's [ai_mcp] turn_stale_after: a turn that could write no more is taken over after this
STALE = 10
WAIT = 120
FINAL = {"done", "error"}
LOST = "lost its database connection"
MID_ANSWER = "slowly 24"
MID_CALL = 'call gate {"limit": 30}'


def responder(body: dict) -> Turn:
    """`slowly N`: N words, two a second; `call TOOL {json}`: that call, then its result; else an echo."""
    messages = body.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    asked = messages[last_user]["content"]
    results = [m["content"] for m in messages[last_user:] if m.get("role") == "tool"]
    if results:
        return Turn(text="Results: " + " | ".join(results))
    if asked.startswith("slowly "):
        words = int(asked.split()[1])
        return Turn(text=" ".join(f"w{n}" for n in range(words)), chunks=words, chunk_delay=0.5)
    if asked.startswith("call "):
        _call, tool, arguments = asked.split(" ", 2)
        return Turn(text="Calling.", tool_calls=(ToolCall(tool, json.loads(arguments)),))
    return Turn(text=f"You said {asked}.")


@pytest.fixture(scope="module")
def ctx(state_dir: Path) -> Iterator[dict]:
    pg_tmp = Path(tempfile.mkdtemp(prefix="ai_mcp-pg-restart."))
    try:
        postgres = PrivatePostgres(pg_tmp)
    except PostgresNotFound as exc:
        missing(str(exc))
    try:
        server = OdooServer("db-restart", env=postgres.env)
    except OdooNotFound as exc:
        postgres.stop()
        shutil.rmtree(pg_tmp, ignore_errors=True)
        missing(str(exc))
    conf = server.tmp / "odoo.conf"
    # a busy machine builds the web client's assets on the first page for longer than Odoo's limits
    conf.write_text(f"[options]\nlimit_time_real = 900\nlimit_time_cpu = 900\n\n[ai_mcp]\nturn_stale_after = {STALE}\n")
    work = HttpServer("streamable-http", "--name", "work", "--notifying", "--state-dir", str(state_dir))
    with ScriptedLLM(responder=responder, api_key=API_KEY) as llm:
        try:
            # a machine busy with Odoo's install starts the server slowly
            work.start(wait=WAIT)
            server.install()
            server.start("prefork", workers=2, extra=("-c", str(conf)))
            yield {"server": server, "postgres": postgres, **_configure(server, llm, work.url)}
        finally:
            (state_dir / "gate-open").touch()
            work.stop()
            server.close()
            postgres.stop()
            shutil.rmtree(pg_tmp, ignore_errors=True)


def _configure(server: OdooServer, llm: ScriptedLLM, url: str) -> dict:
    admin = WebClient(server.url, server.db, "admin", "admin")
    provider = create_scripted_provider(admin, llm.base_url, API_KEY)
    admin.call("ai.provider.model", "create", {"provider_id": provider, "name": "scripted", "price_input": 2.5})
    mcp = admin.call("mcp.server", "create", {"name": "Work", "scope": "system", "url": url})
    admin.call("mcp.server", "action_sync_tools", [mcp])
    admin.call(
        "mcp.tool", "write", admin.call("mcp.tool", "search", [("server_id", "=", mcp)]), {"requires_approval": False}
    )
    assistant = admin.call(
        "ai.assistant", "create", {"name": "Work", "provider_id": provider, "mcp_server_ids": [(6, 0, [mcp])]}
    )
    budget = admin.call("ai.budget", "create", {"name": "Company", "scope": "company", "amount": 1000.0})
    create_ai_user(admin, "restart_user", "Restart user")
    user = WebClient(server.url, server.db, "restart_user", "restart_user")
    return {"admin": admin, "user": user, "assistant": assistant, "budget": budget}


# -- the chat as the widget speaks it ---------------------------------------------------------------


class Watch:
    """The events of a stream read in the background, as they come."""

    def __init__(self) -> None:
        self.events: list[SseEvent] = []
        self.changed = threading.Condition()

    def __call__(self, event: SseEvent) -> bool:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()
        return False

    def wait_for(self, ready: Callable[[list[SseEvent]], bool], what: str) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: ready(self.events), WAIT), f"{what}: {[e.event for e in self.events]}"


def send(ctx: dict, message: str, conversation_id: int | None = None, until=None) -> dict:
    body = {"assistant_id": ctx["assistant"], "message": message}
    if conversation_id:
        body["conversation_id"] = conversation_id
    # the chat streams go to the gevent worker, as the reverse proxy of docs/operators.md sends them
    return ctx["user"].stream(body, port=ctx["server"].gevent_port, timeout=WAIT, until=until)


def read_again(ctx: dict, conversation_id: int, after: int) -> list[SseEvent] | None:
    """What a tab that lost its stream polls: the stored events after the last one it has (None
    while the server cannot answer)."""
    try:
        status, body = ctx["user"].get(f"/ai_mcp/chat/{conversation_id}/events?after={after}")
    except OSError:
        return None
    return list(SseDecoder().feed(body.encode())) if status == 200 else None


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        time.sleep(0.3)


def _turns_under_way(ctx: dict, messages: list[str]) -> tuple[list[Future], list[Watch], dict[int, float]]:
    """Starts a turn per message and waits until each answers or runs its call: (the requests, what
    each streamed so far, when each stream ended)."""
    watches = [Watch() for _ in messages]
    pool = ThreadPoolExecutor(len(messages))
    runs: list[Future] = [pool.submit(send, ctx, m, None, w) for m, w in zip(messages, watches, strict=True)]
    pool.shutdown(wait=False)
    stream_ends: dict[int, float] = {}
    for index, run in enumerate(runs):
        run.add_done_callback(lambda _f, index=index: stream_ends.setdefault(index, time.monotonic()))
    for message, watch in zip(messages, watches, strict=True):
        if message == MID_CALL:
            watch.wait_for(lambda events: any(e.event == "tool_call" for e in events), "the call runs")
        else:
            watch.wait_for(lambda events: sum(e.event == "text" for e in events) >= 3, "the answer streams")
    running = [not any(e.event in FINAL or e.event == "tool_result" for e in watch.events) for watch in watches]
    assert all(running), "every turn is answering or in its call when the database restarts"
    return runs, watches, stream_ends


def _ends(
    ctx: dict, conversations: list[int], watches: list[Watch], outcomes: list[dict], stream_ends: dict, restarted: float
) -> tuple[dict[int, SseEvent], dict[int, float]]:
    """How each turn ended, and how long after the restart: on its own stream, or (the stream
    broken) on the events route a tab polls, which ends a turn silent for turn_stale_after."""
    ends: dict[int, SseEvent] = {}
    ended_after: dict[int, float] = {}
    for index, (conversation_id, watch, outcome) in enumerate(zip(conversations, watches, outcomes, strict=True)):
        finals = [e for _t, e in outcome["events"] if e.event in FINAL]
        if finals:
            ends[conversation_id] = finals[-1]
            ended_after[conversation_id] = stream_ends[index] - restarted
            continue
        last_seen = max(e.id for e in watch.events if e.id is not None)

        def polled_end(conversation_id: int = conversation_id, last_seen: int = last_seen) -> bool:
            found = [e for e in read_again(ctx, conversation_id, last_seen) or [] if e.event in FINAL]
            if found:
                ends[conversation_id] = found[-1]
            return bool(found)

        wait_until(polled_end, f"conversation {conversation_id} ends", timeout=WAIT + STALE)
        ended_after[conversation_id] = time.monotonic() - restarted
    return ends, ended_after


def _assert_kept(ctx: dict, conversations: list[int], outcomes: list[dict], messages: list[str], ends: dict) -> None:
    """A turn that wrote nothing while the database was away went on and stored all it showed;
    every other one says why it stopped; no conversation is left answering, no message lost."""
    assert [c for c in conversations if ends[c].event == "error"], "the restart cut at least one turn"
    for conversation_id, outcome, message in zip(conversations, outcomes, messages, strict=True):
        end = ends[conversation_id]
        history = ctx["user"].jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history", {})
        assert history["conversation"]["state"] == "idle", "no conversation is left answering"
        assert [m["text"] for m in history["messages"]] == [message], "the user's message is kept"
        if end.event == "error":
            assert (end.data["code"], LOST in end.data["message"]) == ("CANCELLED", True), end.data
        else:
            assert end.event == "done", end.data
            streamed = [(e.id, e.event, e.data) for _t, e in outcome["events"] if e.id is not None]
            stored = [(e.pop("seq"), e["type"], e) for e in history["events"]]
            assert stored == streamed, "a turn that went on stored all it showed"


def test_a_database_restart_under_several_turns_ends_each_saying_so_and_loses_nothing_sent(
    ctx: dict, state_dir: Path
) -> None:
    postgres: PrivatePostgres = ctx["postgres"]
    messages = [MID_ANSWER, MID_CALL, MID_ANSWER, MID_CALL]
    runs, watches, stream_ends = _turns_under_way(ctx, messages)
    restarted = time.monotonic()
    postgres.restart()
    back = time.monotonic() - restarted
    (state_dir / "gate-open").touch()  # the calls that survived end
    outcomes = [run.result(WAIT) for run in runs]
    conversations = [watch.events[0].data["conversation_id"] for watch in watches]
    ends, ended_after = _ends(ctx, conversations, watches, outcomes, stream_ends, restarted)
    # what docs/operators.md reports (pytest --log-cli-level=INFO shows it)
    _logger.info(
        "PostgreSQL back after %.1f s; %s",
        back,
        "; ".join(
            f"{m!r}: {'on its stream' if any(e.event in FINAL for _t, e in o['events']) else 'stream broken'}"
            f" after {ended_after[c]:.1f} s, {ends[c].event} {ends[c].data.get('message', '')!r}"
            for m, o, c in zip(messages, outcomes, conversations, strict=True)
        ),
    )
    _assert_kept(ctx, conversations, outcomes, messages, ends)

    # each conversation answers the next message
    for conversation_id in conversations:
        again = send(ctx, "hello again", conversation_id)
        kinds = [e.event for _t, e in again["events"]]
        assert again["status"] == 200 and kinds[-1] == "done", (again["error"], kinds)
        assert "".join(e.data["delta"] for _t, e in again["events"] if e.event == "text") == "You said hello again."

    # the budget's counter holds exactly the usage rows: none charged without its row, nor the reverse
    db = ctx["server"].db
    counter = Decimal(postgres.psql(db, f"SELECT spent FROM ai_budget_period WHERE budget_id = {ctx['budget']}"))
    recorded = Decimal(postgres.psql(db, "SELECT COALESCE(SUM(cost), 0) FROM ai_usage"))
    assert counter == recorded and counter > 0, (counter, recorded)
