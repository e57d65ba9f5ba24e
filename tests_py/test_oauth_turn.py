"""A turn that needs a per-user OAuth sign-in: it pauses with auth_required before the call, and
after the user signs in (or declines) it resumes from the stored history, as the Odoo layer does.
Real OAuth-protected server, real sign-in over HTTP, scripted LLM."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import ManualClock
from test_agent_loop import settings

from services.events import AuthRequiredEvent, parse_event
from services.loop import Resume, SignInLink, ToolBinding, TurnRequest, history_from_events, run_turn
from services.mcp import McpHub
from services.oauth import GuardedHttp, RefreshingTokens
from services.server_spec import ServerSpec, build_server_spec
from testing.oauth_server import STEP_UP_TOOL, OAuthServer
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn
from tests_py.oauth_helpers import MemoryStore, SignedIn, sign_in

LINK = SignInLink(server_id=7, url="/ai_mcp/oauth/start?server_id=7&conversation_id=3")


@pytest.fixture
def server() -> Iterator[OAuthServer]:
    with OAuthServer() as server:
        yield server


@pytest.fixture
def guard() -> GuardedHttp:
    return GuardedHttp(["127.0.0.1"])


def spec_for(server: OAuthServer, owner: str) -> ServerSpec:
    return build_server_spec(
        key="notes", name="Notes", transport="streamable_http", url=server.url, auth_type="oauth", token_owner=owner
    )


def bindings(hub: McpHub, server: OAuthServer, owner: str, admin: SignedIn, guard: GuardedHttp) -> list[ToolBinding]:
    """The tools as an administrator synced them (with their own sign-in), bound for `owner`."""
    listing = hub.run(hub.alist_tools(spec_for(server, "admin"), admin.source(guard)))
    return [ToolBinding(server=spec_for(server, owner), tool=tool) for tool in listing.tools]


def grant(signed: SignedIn, guard: GuardedHttp, store: MemoryStore) -> RefreshingTokens:
    return RefreshingTokens(
        store, signed.registration, signed.discovery.endpoint("token_endpoint") or "", signed.discovery.resource, guard
    )


def run(hub: McpHub, request: TurnRequest) -> list[Any]:
    events = list(hub.iterate(lambda: run_turn(request, hub)))
    return [parse_event(json.loads(json.dumps(e.data()))) for e in events]  # as stored and read back


def test_a_user_without_a_sign_in_is_asked_and_the_turn_resumes_as_that_user(
    hub: McpHub, llm: ScriptedLLM, server: OAuthServer, guard: GuardedHttp
) -> None:
    admin = sign_in(server, guard, user="admin")
    tools = bindings(hub, server, "bob", admin, guard)
    bob = MemoryStore()  # bob has never signed in; the registration is Odoo's, shared by its users
    request = dict(assistant=settings(llm), tools=tools, sign_in_links={"notes": LINK})

    llm.queue(Turn(text="Let me look. ", tool_calls=(ToolCall("whoami", {}, id="c1"),)))
    paused = run(
        hub, TurnRequest(**request, user_message="Who am I there?", grants={"notes": grant(admin, guard, bob)})
    )

    assert [t for t, _ in itertools.groupby(e.type for e in paused)] == [
        "start",
        "round",
        "text",
        "usage",
        "tool_call",
        "auth_required",
    ]
    event = paused[-1]
    assert isinstance(event, AuthRequiredEvent)
    assert [(s.server_id, s.server, s.url, s.step_up) for s in event.servers] == [(7, "Notes", LINK.url, False)]
    assert "Sign in to Notes" in event.servers[0].message
    assert [c.id for c in event.calls] == ["c1"]
    # the administrator's grant was never used for bob: the server saw no call from bob
    assert not [e for e in paused if e.type == "tool_result"]

    bob.tokens = sign_in(server, guard, user="bob", registration=admin.registration).tokens
    history = history_from_events(paused[1:], user_message="Who am I there?")
    llm.queue(Turn(text="You are bob."))
    resumed = run(
        hub,
        TurnRequest(
            **request, history=history, resume=Resume(signed_in=True), grants={"notes": grant(admin, guard, bob)}
        ),
    )

    results = [e for e in resumed if e.type == "tool_result"]
    assert [(r.id, r.ok, r.content[0].text) for r in results] == [("c1", True, "bob")]
    assert resumed[-1].type == "done"
    told = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert told[0]["content"] == "bob"


def test_a_sign_in_left_open_for_an_hour_costs_the_turn_nothing(
    clocked_hub: McpHub, clock: ManualClock, llm: ScriptedLLM, server: OAuthServer, guard: GuardedHttp
) -> None:
    hub = clocked_hub
    admin = sign_in(server, guard, user="admin")
    tools = bindings(hub, server, "bob", admin, guard)
    bob = MemoryStore()
    request = dict(assistant=settings(llm, turn_timeout=100.0), tools=tools, sign_in_links={"notes": LINK})
    llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="c1"),)))
    first = TurnRequest(**request, user_message="Who am I?", grants={"notes": grant(admin, guard, bob)})
    paused = []
    for event in hub.iterate(lambda: run_turn(first, hub)):
        paused.append(event)
        if event.type == "round":
            clock.advance(70)  # the model thinks for 70 s
    assert paused[-1].type == "auth_required" and paused[-1].turn_ms == 70_000
    clock.advance(3600)  # the user signs in an hour later
    bob.tokens = sign_in(server, guard, user="bob", registration=admin.registration).tokens
    llm.queue(Turn(text="You are bob."))
    resume = TurnRequest(
        **request,
        history=history_from_events(paused[1:], user_message="Who am I?"),
        resume=Resume(signed_in=True),
        grants={"notes": grant(admin, guard, bob)},
        spent=paused[-1].turn_ms / 1000,
    )
    resumed = []
    for event in hub.iterate(lambda: run_turn(resume, hub)):
        resumed.append(event)
        if event.type == "start":
            clock.advance(29)  # 30 s of the turn's 100 were left
    assert [(e.id, e.ok) for e in resumed if e.type == "tool_result"] == [("c1", True)]
    assert resumed[-1].type == "done"


def test_declining_the_sign_in_answers_without_that_server_and_tells_the_model_why(
    hub: McpHub, llm: ScriptedLLM, server: OAuthServer, guard: GuardedHttp
) -> None:
    admin = sign_in(server, guard, user="admin")
    tools = bindings(hub, server, "bob", admin, guard)
    llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "hi"}, id="c1"),)))
    paused = run(
        hub, TurnRequest(assistant=settings(llm), tools=tools, sign_in_links={"notes": LINK}, user_message="Echo hi")
    )
    assert paused[-1].type == "auth_required"

    llm.queue(Turn(text="I answer without Notes."))
    resumed = run(
        hub,
        TurnRequest(
            assistant=settings(llm),
            tools=tools,
            sign_in_links={"notes": LINK},
            declined=frozenset({"notes"}),
            history=history_from_events(paused[1:], user_message="Echo hi"),
            resume=Resume(signed_in=True),
        ),
    )
    result = next(e for e in resumed if e.type == "tool_result")
    assert result.error_code == "MCP_AUTH_REQUIRED" and "chose not to sign in to Notes" in result.model_text
    assert resumed[-1].type == "done"
    final = llm.requests[-1]
    assert not final.get("tools"), "a declined server's tools are not offered again in this turn"
    told = [m["content"] for m in final["messages"] if m["role"] == "tool"]
    assert "chose not to sign in to Notes" in told[0]


def test_a_call_needing_a_wider_scope_pauses_for_a_step_up_sign_in(
    hub: McpHub, llm: ScriptedLLM, server: OAuthServer, guard: GuardedHttp
) -> None:
    admin = sign_in(server, guard, user="admin")
    tools = bindings(hub, server, "bob", admin, guard)
    bob = MemoryStore(sign_in(server, guard, user="bob", registration=admin.registration).tokens)
    llm.queue(Turn(tool_calls=(ToolCall(STEP_UP_TOOL, {}, id="c2"),)))

    paused = run(
        hub,
        TurnRequest(
            assistant=settings(llm),
            tools=tools,
            sign_in_links={"notes": LINK},
            user_message="Report",
            grants={"notes": grant(admin, guard, bob)},
        ),
    )

    # the call refused for its scope has no result: it waits for the new consent and runs after it
    assert not [e for e in paused if e.type == "tool_result"]
    event = paused[-1]
    assert isinstance(event, AuthRequiredEvent) and [c.id for c in event.calls] == ["c2"]
    step = event.servers[0]
    assert step.step_up and step.scope and "admin" in step.scope.split()
    assert step.url.startswith(LINK.url + "&") and "step_up=1" in step.url and "admin" in step.url


def test_a_revoked_refresh_token_asks_the_user_to_sign_in_again(
    hub: McpHub, llm: ScriptedLLM, server: OAuthServer, guard: GuardedHttp
) -> None:
    admin = sign_in(server, guard, user="admin")
    tools = bindings(hub, server, "bob", admin, guard)
    bob = MemoryStore(sign_in(server, guard, user="bob", registration=admin.registration).tokens)
    server.provider.expire_access_tokens()
    server.provider.revoke_refresh_tokens()
    llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="c1"),)))

    paused = run(
        hub,
        TurnRequest(
            assistant=settings(llm),
            tools=tools,
            sign_in_links={"notes": LINK},
            user_message="Who?",
            grants={"notes": grant(admin, guard, bob)},
        ),
    )

    assert paused[-1].type == "auth_required" and not paused[-1].servers[0].step_up
    assert bob.tokens is None, "the refused grant is dropped so that the next sign-in starts clean"
