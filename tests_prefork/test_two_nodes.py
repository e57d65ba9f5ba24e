"""Two Odoo nodes on one database behind nginx, as deploy/ describes them, and the chat used as the
widget uses it, its requests landing on either node.

testing/odoo_cluster.py starts two prefork nodes (each --workers=2 and its gevent worker) with
deploy/odoo-node.conf, on one database and one data dir, and nginx with deploy/nginx.conf. Every
request goes through nginx; the tests choose the node a request lands on (`pin`) and check which
process answered (X-Upstream). The MCP servers and the OAuth server are real, the model is the
scripted one. What is checked: a stream read again from the other node; a call stopped, an approval,
a server's question answered and an OAuth sign-in finished on the node that does not run the turn;
what one node changes is what the other one's next turn uses; a chat-stream process killed in the
middle of an answer, whose turn the route an open tab polls ends once its heartbeat is stale, after
every number the tab was sent; and a node killed in the middle of a call, whose conversation the
other node takes over.

Conditions are waited for with generous deadlines; no duration is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.sse import SseDecoder, SseEvent  # noqa: E402
from testing.mcp_servers import HttpServer, serve_http  # noqa: E402
from testing.oauth_server import OAuthServer  # noqa: E402
from testing.odoo_cluster import NginxNotFound, OdooCluster  # noqa: E402
from testing.odoo_http import OdooNotFound, WebClient, create_ai_user  # noqa: E402
from testing.prerequisites import missing  # noqa: E402
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn  # noqa: E402

API_KEY = "two-nodes-key"
A, B = 0, 1
# the nodes' [ai_mcp] turn_stale_after: a killed node's turn is taken over after this many seconds
STALE = 12
WAIT = 90
FINAL = {"done", "error", "approval_required", "confirm_continue", "auth_required"}
EventRow = tuple[int, str, dict]


def responder(body: dict) -> Turn:
    """By the user's message: `call TOOL {json args}` calls that tool, then answers with its result;
    `tools?` lists the tools offered; `slowly N` answers N words, one a second; anything else is
    repeated."""
    messages = body.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    asked = messages[last_user]["content"]
    results = [m["content"] for m in messages[last_user:] if m.get("role") == "tool"]
    names = sorted(t["function"]["name"] for t in body.get("tools") or [])
    if results:
        return Turn(text="Results: " + " | ".join(results))
    if asked == "tools?":
        return Turn(text="Tools: " + ", ".join(names))
    if asked.startswith("slowly "):
        words = int(asked.split()[1])
        return Turn(text=" ".join(f"w{n}" for n in range(words)), chunks=words, chunk_delay=1.0)
    if asked.startswith("call "):
        _call, tool, *arguments = asked.split(" ", 2)
        if tool not in names:
            return Turn(text=f"No {tool} among {names}.")
        return Turn(text="Calling.", tool_calls=(ToolCall(tool, json.loads(arguments[0]) if arguments else {}),))
    return Turn(text=f"You said {asked}.")


# -- the cluster and its configuration -------------------------------------------------------------


@pytest.fixture(scope="module")
def ctx(state_dir: Path) -> Iterator[dict]:
    try:
        # a server that failed stays down on a node far longer than the tests last: only what an
        # admin does may bring it back
        cluster = OdooCluster(
            "two-nodes",
            nodes=2,
            # beside node A, a chat-stream process of its own: `odoo-bin gevent -c odoo.conf --gevent-port=...`
            extra_gevent=1,
            options={"turn_stale_after": STALE, "mcp_failure_cooldown": 3600},
        )
    except (OdooNotFound, NginxNotFound) as exc:
        missing(str(exc))
    flaky = HttpServer("streamable-http", "--name", "flaky")
    with (
        ScriptedLLM(responder=responder, api_key=API_KEY) as llm,
        serve_http("streamable-http", "--name", "work", "--notifying", "--state-dir", str(state_dir)) as work,
        serve_http("streamable-http", "--name", "first") as first,
        serve_http("streamable-http", "--name", "second") as second,
        OAuthServer(name="notes") as oauth,
    ):
        try:
            flaky.start()
            cluster.start()
            ctx = {"cluster": cluster, "llm": llm, "oauth": oauth, "flaky": flaky, "first": first, "second": second}
            _configure(ctx, {"Work": work.url, "Moving": first.url, "Flaky": flaky.url, "Notes": oauth.url})
            yield ctx
        finally:
            flaky.stop()
            errors = cluster.log_errors()
            cluster.close()
    assert not errors, f"ERROR lines in the nodes' logs: {errors[:3]}"


def _configure(ctx: dict, urls: dict[str, str]) -> None:
    """Through nginx, as an admin in the browser: the provider, one assistant per server, a user."""
    cluster: OdooCluster = ctx["cluster"]
    admin = WebClient(cluster.url, cluster.db, "admin", "admin")
    # the OAuth redirect URI is Odoo's address as the browser reaches it: nginx
    admin.call("ir.config_parameter", "set_param", "web.base.url", cluster.url)
    provider = admin.call(
        "ai.provider",
        "create",
        {"name": "scripted", "base_url": ctx["llm"].base_url, "api_key": API_KEY, "default_model": "scripted"},
    )
    servers = {}
    for name, url in urls.items():
        values = {"name": name, "scope": "system", "url": url}
        if name == "Notes":
            values.update(auth_type="oauth", oauth_token_scope="user")
        servers[name] = admin.call("mcp.server", "create", values)
    ctx["admin"] = admin
    _browser_sign_in(ctx, admin, f"/ai_mcp/oauth/start?server_id={servers['Notes']}", "manager")
    for server_id in servers.values():
        admin.call("mcp.server", "action_sync_tools", [server_id])
    tools = admin.call("mcp.tool", "search", [("server_id", "in", list(servers.values()))])
    assert len(tools) > 10, "every server's tools are synced"
    admin.call("mcp.tool", "write", tools, {"requires_approval": False})
    create_ai_user(admin, "node_user", "Node user")
    ctx["servers"] = servers
    ctx["provider"] = provider
    ctx["assistants"] = {
        name: admin.call(
            "ai.assistant",
            "create",
            {"name": name, "provider_id": provider, "mcp_server_ids": [(6, 0, [server_id])]},
        )
        for name, server_id in servers.items()
    }
    ctx["user"] = WebClient(cluster.url, cluster.db, "node_user", "node_user")


def _browser_sign_in(ctx: dict, client: WebClient, start: str, account: str) -> None:
    """A sign-in as the browser does it: Odoo's start route, the provider's consent, Odoo's callback."""
    status, _body = client.get(start)
    assert status == 303, status
    back = urlsplit(ctx["oauth"].consent(client.last_headers["Location"], user=account))
    status, page = client.get(f"{back.path}?{back.query}")
    assert status == 200 and "You are signed in to Notes" in page, page[:500]


# -- the chat as the widget speaks it ---------------------------------------------------------------


def on(ctx: dict, who: str, node: int, chat: str = "gevent") -> WebClient:
    """`who`'s browser session, its requests led by nginx to `node` (its streams to its own gevent
    worker, or with `chat="extra"` to the extra gevent process beside it)."""
    return ctx[who].with_headers(ctx["cluster"].pin(node, chat))


def served_by(ctx: dict, headers: dict[str, str]) -> tuple[int, str]:
    return ctx["cluster"].served_by(headers)


def send(client: WebClient, assistant: int, message: str, **kwargs) -> dict:
    body = {"assistant_id": assistant, "message": message}
    if "conversation_id" in kwargs:
        body["conversation_id"] = kwargs.pop("conversation_id")
    return client.stream(body, timeout=WAIT, **kwargs)


def resume(client: WebClient, conversation_id: int, **answer) -> dict:
    return client.stream({"conversation_id": conversation_id, **answer}, path="/ai_mcp/chat/resume", timeout=WAIT)


class Watch:
    """The events of a stream read in the background, as they come."""

    def __init__(self) -> None:
        self.events: list[SseEvent] = []
        self.ended = False
        self.changed = threading.Condition()

    def __call__(self, event: SseEvent) -> bool:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()
        return False  # read on

    def end(self, _future: Future) -> None:
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def wait_for(self, kind: str) -> SseEvent:
        with self.changed:
            self.changed.wait_for(lambda: self.ended or any(e.event == kind for e in self.events), WAIT)
            found = [e for e in self.events if e.event == kind]
            assert found, f"no {kind} event: {[(e.event, e.data) for e in self.events][-3:]}"
            return found[0]


def in_background(client: WebClient, assistant: int, message: str) -> tuple[Watch, Future]:
    """A message sent from another thread: its events as they come, and the stream's result."""
    watch = Watch()
    pool = ThreadPoolExecutor(1)
    running = pool.submit(send, client, assistant, message, until=watch)
    running.add_done_callback(watch.end)
    pool.shutdown(wait=False)
    return watch, running


def gated_turn(ctx: dict, state_dir: Path, limit: int) -> tuple[Watch, Future, int]:
    """A turn of the user's on node A, held in a call of the gate tool (closed) for up to `limit`
    seconds: (its events as they come, the stream's result, its conversation)."""
    open_gate(state_dir, False)
    watch, running = in_background(on(ctx, "user", A), ctx["assistants"]["Work"], f'call gate {{"limit": {limit}}}')
    watch.wait_for("tool_call")
    return watch, running, conversation_of(watch)


def rows(run: dict) -> list[EventRow]:
    return [(event.id, event.event, event.data) for _t, event in run["events"]]


def kinds(run: dict) -> list[str]:
    return [event.event for _t, event in run["events"] if event.event not in ("text", "usage")]


def text(run: dict) -> str:
    return "".join(event.data["delta"] for _t, event in run["events"] if event.event == "text")


def conversation_of(run_or_watch: dict | Watch) -> int:
    events = run_or_watch.events if isinstance(run_or_watch, Watch) else [e for _t, e in run_or_watch["events"]]
    return events[0].data["conversation_id"]


def history(client: WebClient, conversation_id: int) -> dict:
    return client.jsonrpc(f"/ai_mcp/conversation/{conversation_id}/history", {})


def stored(client: WebClient, conversation_id: int) -> list[EventRow]:
    return [(e.pop("seq"), e["type"], e) for e in history(client, conversation_id)["events"]]


def read_again(client: WebClient, conversation_id: int, after: int) -> list[EventRow]:
    """What a tab that lost its stream reads: the stored events after the last one it has."""
    status, body = client.get(f"/ai_mcp/chat/{conversation_id}/events?after={after}")
    assert status == 200, body[:300]
    return [(e.id, e.event, e.data) for e in SseDecoder().feed(body.encode())]


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        time.sleep(0.2)


def sql(ctx: dict, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", ctx["cluster"].db, "-c", query]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def open_gate(state_dir: Path, is_open: bool) -> None:
    gate = state_dir / "gate-open"
    if is_open:
        gate.touch()
    else:
        gate.unlink(missing_ok=True)


def tool_id(ctx: dict, server: str, name: str) -> int:
    found = ctx["admin"].call("mcp.tool", "search", [("server_id", "=", ctx["servers"][server]), ("name", "=", name)])
    assert len(found) == 1, (server, name, found)
    return found[0]


# -- a stream read again from the other node -------------------------------------------------------


def test_a_tab_reading_again_from_the_other_node_misses_nothing_and_repeats_nothing(ctx: dict, state_dir: Path) -> None:
    work = ctx["assistants"]["Work"]
    watch, running, conversation_id = gated_turn(ctx, state_dir, limit=60)

    # a second tab follows the turn from node B by sequence number while node A streams it
    tab = on(ctx, "user", B)
    followed: list[EventRow] = []

    def caught_up() -> bool:
        followed.extend(read_again(tab, conversation_id, followed[-1][0] if followed else 0))
        assert served_by(ctx, tab.last_headers) == (B, "gevent")
        if any(kind == "tool_call" for _id, kind, _data in followed):
            open_gate(state_dir, True)  # the call ends once the follower has seen it
        return bool(followed) and followed[-1][1] in FINAL

    wait_until(caught_up, "the follower reads the end of the turn")
    run = running.result(WAIT)
    assert run["status"] == 200 and kinds(run)[-1] == "done", run["error"]
    assert served_by(ctx, run["headers"]) == (A, "gevent")
    assert text(run).endswith("Results: the gate was opened")
    assert followed == rows(run), "the follower read every event once, in order"
    assert stored(tab, conversation_id) == rows(run)

    # a tab whose stream broke (its connection dropped after the call) reads the rest from node B
    open_gate(state_dir, False)
    broken = send(on(ctx, "user", A), work, 'call gate {"limit": 60}', until=lambda e: e.event == "tool_call")
    conversation_id = conversation_of(broken)
    rest: list[EventRow] = []

    def ended() -> bool:
        rest.extend(read_again(tab, conversation_id, (rest or rows(broken))[-1][0]))
        return bool(rest) and rest[-1][1] in FINAL

    # node A notices the closed connection through nginx and ends the turn
    wait_until(ended, "the broken stream's turn ends")
    assert [row[0] for row in rows(broken) + rest] == list(range(1, len(rows(broken)) + len(rest) + 1))
    assert (rest[-1][1], rest[-1][2]["code"]) == ("error", "CANCELLED")
    assert stored(tab, conversation_id) == rows(broken) + rest


def test_an_extra_gevent_process_streams_turns_beside_the_nodes_own(ctx: dict) -> None:
    run = send(on(ctx, "user", A, chat="extra"), ctx["assistants"]["Work"], 'call echo {"text": "extra"}')
    assert served_by(ctx, run["headers"]) == (A, "extra")
    assert kinds(run)[-1] == "done", run["error"]
    assert text(run).endswith("Results: extra")
    assert read_again(on(ctx, "user", B), conversation_of(run), 0) == rows(run)


# -- what the user sends about a turn reaches the node that runs it --------------------------------


def test_a_stop_sent_to_the_other_node_stops_the_running_call(ctx: dict, state_dir: Path) -> None:
    open_gate(state_dir, False)
    watch, running = in_background(on(ctx, "user", A), ctx["assistants"]["Work"], 'call gate {"limit": 60}')
    call = watch.wait_for("tool_call")
    stop = on(ctx, "user", B)
    answer = stop.jsonrpc(
        "/ai_mcp/chat/cancel_call", {"conversation_id": conversation_of(watch), "call_id": call.data["id"]}
    )
    assert answer == {"cancelling": True}
    assert served_by(ctx, stop.last_headers) == (B, "http")
    run = running.result(WAIT)
    assert served_by(ctx, run["headers"]) == (A, "gevent")
    result = next(e.data for _t, e in run["events"] if e.event == "tool_result")
    assert (result["id"], result["ok"], result["error_code"]) == (call.data["id"], False, "CANCELLED")
    assert kinds(run)[-1] == "done", run["error"]


def test_an_approval_sent_to_the_other_node_resumes_the_turn_there(ctx: dict) -> None:
    admin = ctx["admin"]
    add = tool_id(ctx, "Work", "add")
    admin.call("mcp.tool", "write", [add], {"requires_approval": True})
    try:
        asked = send(on(ctx, "user", A), ctx["assistants"]["Work"], 'call add {"a": 2, "b": 3}')
        assert kinds(asked)[-1] == "approval_required", asked["error"]
        assert served_by(ctx, asked["headers"]) == (A, "gevent")
        call_id = asked["events"][-1][1].data["calls"][0]["id"]
        resumed = resume(on(ctx, "user", B), conversation_of(asked), approvals={call_id: True})
        assert served_by(ctx, resumed["headers"]) == (B, "gevent")
        assert kinds(resumed)[-1] == "done", resumed["error"]
        result = next(e.data for _t, e in resumed["events"] if e.event == "tool_result")
        assert (result["id"], result["ok"], result["model_text"]) == (call_id, True, "5.0")
        assert rows(resumed)[0][0] == rows(asked)[-1][0] + 1, "one sequence across both nodes"
        assert stored(ctx["user"], conversation_of(asked)) == rows(asked) + rows(resumed)
    finally:
        admin.call("mcp.tool", "write", [add], {"requires_approval": False})


def test_an_answer_to_a_servers_question_sent_to_the_other_node_reaches_the_call(ctx: dict) -> None:
    watch, running = in_background(on(ctx, "user", A), ctx["assistants"]["Work"], "call ask_preferences")
    question = watch.wait_for("elicitation_required")
    assert question.data["mode"] == "form"
    answering = on(ctx, "user", B)
    answer = answering.jsonrpc(
        "/ai_mcp/chat/elicitation",
        {
            "conversation_id": conversation_of(watch),
            "call_id": question.data["id"],
            "elicitation": question.data["elicitation"],
            "action": "accept",
            "content": {"name": "Ada", "color": "blue", "newsletter": False},
        },
    )
    assert answer["answered"] is True, answer
    assert served_by(ctx, answering.last_headers) == (B, "http")
    run = running.result(WAIT)
    assert served_by(ctx, run["headers"]) == (A, "gevent")
    result = next(e.data for _t, e in run["events"] if e.event == "tool_result")
    assert (result["ok"], result["model_text"]) == (True, "hello Ada, blue")
    assert kinds(run)[-1] == "done", run["error"]


def test_a_sign_in_finished_on_the_other_node_lets_the_turn_go_on(ctx: dict) -> None:
    notes = ctx["assistants"]["Notes"]
    paused = send(on(ctx, "user", A), notes, "call whoami")
    assert kinds(paused)[-1] == "auth_required", paused["error"]
    assert served_by(ctx, paused["headers"]) == (A, "gevent")
    conversation_id = conversation_of(paused)
    link = paused["events"][-1][1].data["servers"][0]["url"]

    # the sign-in tab: Odoo's start route on node A, the provider, Odoo's callback on node B
    browser = on(ctx, "user", A)
    status, _body = browser.get(link)
    assert status == 303 and served_by(ctx, browser.last_headers) == (A, "http")
    back = urlsplit(ctx["oauth"].consent(browser.last_headers["Location"], user="alice"))
    callback = on(ctx, "user", B)
    status, page = callback.get(f"{back.path}?{back.query}")
    assert status == 200 and "You are signed in to Notes" in page, page[:500]
    assert served_by(ctx, callback.last_headers) == (B, "http")
    # the chat learns of it through the bus, which every node's websocket reads from the database
    assert sql(ctx, "SELECT count(*) FROM bus_bus WHERE message LIKE '%ai_mcp.oauth_signed_in%'") != "0"

    # and the tab answers the pause: node A calls with the grant node B stored
    resumed = resume(on(ctx, "user", A), conversation_id, sign_in={"declined": []})
    assert served_by(ctx, resumed["headers"]) == (A, "gevent")
    result = next(e.data for _t, e in resumed["events"] if e.event == "tool_result")
    assert (result["ok"], result["model_text"]) == (True, "alice")
    assert kinds(resumed)[-1] == "done", resumed["error"]


# -- what one node changes is what the other one's next turn uses ----------------------------------


def test_a_change_made_through_one_node_is_what_the_other_nodes_next_turn_uses(ctx: dict) -> None:
    work = ctx["assistants"]["Work"]
    admin_a = on(ctx, "admin", A)
    user_b = on(ctx, "user", B)

    def offered() -> set[str]:
        run = send(user_b, work, "tools?")
        assert served_by(ctx, run["headers"]) == (B, "gevent")
        assert kinds(run)[-1] == "done", run["error"]
        return set(filter(None, text(run).removeprefix("Tools: ").split(", ")))

    assert {"add", "echo", "gate"} <= offered()
    echo = tool_id(ctx, "Work", "echo")
    admin_a.call("mcp.tool", "write", [echo], {"enabled": False})
    assert served_by(ctx, admin_a.last_headers) == (A, "http")
    assert "echo" not in offered()
    admin_a.call("mcp.tool", "write", [echo], {"enabled": True})
    assert "echo" in offered()

    add = tool_id(ctx, "Work", "add")
    admin_a.call("mcp.tool", "write", [add], {"requires_approval": True})
    try:
        asked = send(user_b, work, 'call add {"a": 1, "b": 1}')
        assert kinds(asked)[-1] == "approval_required", asked["error"]
    finally:
        admin_a.call("mcp.tool", "write", [add], {"requires_approval": False})

    server = ctx["servers"]["Work"]
    admin_a.call("mcp.server", "write", [server], {"active": False})
    assert offered() == set()
    admin_a.call("mcp.server", "write", [server], {"active": True})
    assert {"add", "echo", "gate"} <= offered()

    admin_a.call("ai.provider", "write", [ctx["provider"]], {"default_model": "scripted-2"})
    try:
        assert kinds(send(user_b, work, "hello"))[-1] == "done"
        assert ctx["llm"].requests[-1]["model"] == "scripted-2"
    finally:
        admin_a.call("ai.provider", "write", [ctx["provider"]], {"default_model": "scripted"})


def test_a_server_moved_through_one_node_is_where_the_other_nodes_next_call_goes(ctx: dict) -> None:
    moving = ctx["assistants"]["Moving"]
    user_b = on(ctx, "user", B)
    admin_a = on(ctx, "admin", A)

    def pid() -> str:
        run = send(user_b, moving, "call pid")
        assert served_by(ctx, run["headers"]) == (B, "gevent")
        result = next(e.data for _t, e in run["events"] if e.event == "tool_result")
        return result["model_text"]

    assert pid() == str(ctx["first"].process.pid)  # node B holds a session to the first server now
    server = ctx["servers"]["Moving"]
    admin_a.call("mcp.server", "write", [server], {"url": ctx["second"].url})
    tested = admin_a.call("mcp.server", "action_test_connection", [server])
    assert tested["params"]["type"] == "success", tested
    assert pid() == str(ctx["second"].process.pid)


def test_a_server_down_on_one_node_is_back_there_once_an_admin_fixes_it_through_the_other(ctx: dict) -> None:
    flaky: HttpServer = ctx["flaky"]
    assistant = ctx["assistants"]["Flaky"]
    user_b = on(ctx, "user", B)
    admin_a = on(ctx, "admin", A)
    server = ctx["servers"]["Flaky"]

    def echo(words: str) -> dict:
        run = send(user_b, assistant, f'call echo {{"text": "{words}"}}')
        assert served_by(ctx, run["headers"]) == (B, "gevent")
        assert kinds(run)[-1] == "done", run["error"]
        return run

    def result(run: dict) -> dict:
        return next(e.data for _t, e in run["events"] if e.event == "tool_result")

    assert result(echo("up"))["model_text"] == "up"
    flaky.stop()
    # node B tries every connection again, then marks the server down: the call fails, or, when
    # the session's listen stream (2026-07-28) already told it the server went away, the server's
    # tools are left out with a warning
    down = echo("down")
    failed = [e.data for _t, e in down["events"] if e.event in ("tool_result", "warning")]
    assert failed and failed[0]["code" if "code" in failed[0] else "error_code"] == "MCP_UNREACHABLE", rows(down)
    assert not any(f.get("ok") for f in failed), rows(down)
    status, stats = ctx["admin"].get("/ai_mcp/hub/stats", port=ctx["cluster"].nodes[B].gevent_port)
    assert status == 200 and json.loads(stats)["hub"]["servers_down"] == 1, stats
    # within the cooldown its tools are left out at once, without trying
    left_out = echo("still down")
    warnings = [e.data for _t, e in left_out["events"] if e.event == "warning"]
    assert "tool_result" not in kinds(left_out) and warnings, rows(left_out)
    assert warnings[0]["code"] == "MCP_UNREACHABLE" and "tried again in" in warnings[0]["message"], warnings

    # the admin starts the server again and tests it through node A
    flaky.start()
    tested = admin_a.call("mcp.server", "action_test_connection", [server])
    assert served_by(ctx, admin_a.last_headers) == (A, "http")
    assert tested["params"]["type"] == "success", tested
    back = echo("back")
    assert "warning" not in kinds(back), rows(back)
    assert result(back)["model_text"] == "back"


# -- a node that dies in the middle of a turn ------------------------------------------------------


def test_a_killed_chat_process_s_turn_is_ended_by_the_route_an_open_tab_polls_after_every_number_it_sent(
    ctx: dict,
) -> None:
    cluster: OdooCluster = ctx["cluster"]
    work = ctx["assistants"]["Work"]
    tab = on(ctx, "user", B)
    seen: list[SseEvent] = []

    def kill_mid_answer(event: SseEvent) -> bool:
        seen.append(event)
        # a word of the answer just came, in a batch the process has not written yet (0.25 s)
        if event.event == "text" and sum(e.event == "text" for e in seen) == 3:
            cluster.kill_extra(A)
        return False

    try:
        run = send(on(ctx, "user", A, chat="extra"), work, "slowly 40", until=kill_mid_answer)
        assert served_by(ctx, run["headers"]) == (A, "extra")
        assert run["error"] and "done" not in kinds(run), "the stream broke with its process"
        conversation_id = conversation_of(run)
        last_seen = max(event.id for event in seen if event.id is not None)

        # alive as far as anyone can tell: a message is refused, the tab's poll finds nothing yet
        assert send(tab, work, "are you there?", conversation_id=conversation_id)["status"] == 409
        ended: list[EventRow] = []

        def polled_end() -> bool:
            ended.extend(read_again(tab, conversation_id, last_seen))
            return bool(ended)

        # the tab polls the events route only (the widget's follow and catch-up): it ends the turn
        wait_until(polled_end, "the events route ends the dead turn", timeout=WAIT + STALE)
        assert [(kind, data["code"]) for _id, kind, data in ended] == [("error", "CANCELLED")]
        assert "the server running it stopped" in ended[0][2]["message"]
        assert ended[0][0] > last_seen, "the takeover's error comes after every number the tab was sent"

        # the next answer too, so the tab that stayed open shows it rather than skipping it as seen
        again = send(tab, work, "hello again", conversation_id=conversation_id)
        assert kinds(again)[-1] == "done", again["error"]
        assert text(again) == "You said hello again."
        assert rows(again)[0][0] > ended[0][0]
        numbers = [row[0] for row in stored(tab, conversation_id)]
        assert numbers == sorted(set(numbers)), "one event per number"
        assert [row for row in stored(tab, conversation_id) if row[0] > last_seen] == ended + rows(again)
    finally:
        cluster.restart_extra(A)


def test_a_turn_of_a_killed_node_is_taken_over_by_the_other_once_its_heartbeat_is_stale(
    ctx: dict, state_dir: Path
) -> None:
    cluster: OdooCluster = ctx["cluster"]
    work = ctx["assistants"]["Work"]
    watch, running, conversation_id = gated_turn(ctx, state_dir, limit=600)
    user_b = on(ctx, "user", B)

    # alive: its heartbeat is renewed while it waits for the tool, and node B does not take it over
    heartbeat = f"SELECT turn_heartbeat FROM ai_conversation WHERE id = {conversation_id}"
    first = sql(ctx, heartbeat)
    wait_until(lambda: sql(ctx, heartbeat) not in (first, ""), "the running turn renews its heartbeat")
    busy = send(user_b, work, "are you there?", conversation_id=conversation_id)
    assert busy["status"] == 409, busy
    before = stored(user_b, conversation_id)
    assert [kind for _id, kind, _data in before][-1] == "tool_call"

    cluster.kill(A)
    run = running.result(WAIT)
    assert run["error"] and kinds(run)[-1] == "tool_call", "the stream broke with its node"
    last_seen = max(event.id for event in watch.events if event.id is not None)

    # Stop in a tab that opened the conversation meanwhile: nothing to stop while the turn may
    # live; once its heartbeat is older than turn_stale_after, node B ends it
    def stop() -> dict:
        return user_b.jsonrpc("/ai_mcp/chat/stop", {"conversation_id": conversation_id})

    assert stop() == {"stopped": False}
    wait_until(lambda: stop() == {"stopped": True}, "Stop through node B ends the dead turn", timeout=WAIT + STALE)
    after = history(user_b, conversation_id)
    assert [m["text"] for m in after["messages"]] == ['call gate {"limit": 600}']
    events = [(e.pop("seq"), e["type"], e) for e in after["events"]]
    assert events[: len(before)] == before, "every event stored before the kill is kept"
    assert [(kind, data["code"]) for _seq, kind, data in events[len(before) :]] == [("error", "CANCELLED")]
    assert "the server running it stopped" in events[-1][2]["message"]
    assert events[-1][0] > last_seen, "the takeover's error comes after every number the tab was sent"

    # and the conversation answers again, wherever nginx sends the message (node A is gone), after
    # the takeover's error (numbers skip what the dead turn had reserved)
    again = send(ctx["user"], work, "hello again", conversation_id=conversation_id)
    assert served_by(ctx, again["headers"]) == (B, "gevent")
    assert kinds(again)[-1] == "done", again["error"]
    assert text(again) == "You said hello again."
    assert rows(again)[0][0] == events[-1][0] + 1
