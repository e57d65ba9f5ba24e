"""The client under test of the MCP conformance suite (`scripts/conformance`): this addon's own
MCP client, driven as Odoo drives it, against the suite's scenario server.

The suite runs `conformance_client.py <server url>` with the scenario in MCP_CONFORMANCE_SCENARIO
and its data in MCP_CONFORMANCE_CONTEXT (JSON). Everything goes through the product's code paths:
the server is a `ServerSpec` as a record makes it; its tools are listed by the hub (`McpHub`) and
bound as a turn binds them (`TurnTools`: a tool whose schema cannot be given to a model is left
out); calls go through the agent loop's tool runner (arguments checked against the tool's schema,
nulls of optional properties dropped, progress and questions observed); a question's form is
answered as the chat answers it (defaults applied, the answer checked); an OAuth sign-in is the
one `mcp.server` runs (discovery, registration: an entered client id, else Odoo's client metadata
document, else dynamic registration; the authorization-code flow with PKCE; the code exchange),
tokens are refreshed by `RefreshingTokens`, and a step-up asks for a wider sign-in.

What stands in for a person or a model, and only that: the "browser" opens the authorization URL
and reads where the provider sends it back (the suite's provider approves at once), the "user"
accepts a question's form as shown (its defaults) and visits no page a question names (declined),
and the "model" picks the arguments (the scenario's, else values made from the schema). A scenario
that needs what the product does not do fails: this client never does anything the product would
not.

The protocol version the suite names (MCP_CONFORMANCE_PROTOCOL_VERSION) is only logged: the
product agrees on a revision with each server (`server/discover`, else the `initialize` handshake).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Hashable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# held until the process ends: the slot of the run this client runs in (hold_a_slot)
_SLOT: list[Any] = []


def hold_a_slot() -> None:
    """Wait for one of the run's slots: the suite starts every scenario of a run at once, and forty
    clients importing the addon together on two cores leave each too little time to answer its
    server, whose clock runs (`AI_MCP_CONFORMANCE_SLOTS` clients at a time, locks in
    `AI_MCP_CONFORMANCE_SLOTS_DIR`; scripts/conformance sets both)."""
    folder = os.environ.get("AI_MCP_CONFORMANCE_SLOTS_DIR")
    count = int(os.environ.get("AI_MCP_CONFORMANCE_SLOTS") or 0)
    if not folder or count < 1:
        return
    while True:
        for slot in range(count):
            handle = open(os.path.join(folder, f"slot-{slot}"), "w")  # noqa: SIM115 - held until exit
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            _SLOT.append(handle)
            return
        time.sleep(0.1)


hold_a_slot()

import httpx2  # noqa: E402

from services.call_clock import TurnBudget  # noqa: E402
from services.errors import AiMcpError, AuthRequired  # noqa: E402
from services.events import ElicitationRequiredEvent, ToolCallEvent, ToolResultEvent  # noqa: E402
from services.limits import TURN_TIMEOUT  # noqa: E402
from services.loop import ToolBinding  # noqa: E402
from services.loop.tool_runner import BoundTool, RunLimits, ToolRunner, check_arguments  # noqa: E402
from services.loop.turn_tools import TurnTools  # noqa: E402
from services.mcp import McpHub, apply_defaults, elicitation_errors  # noqa: E402
from services.oauth import (  # noqa: E402
    ClientRegistration,
    GuardedHttp,
    RefreshingTokens,
    TokenSet,
    client_metadata,
    discover,
    exchange_code,
    oauth_allowed_hosts,
    read_callback,
    register,
    same_issuer,
    start_authorization,
)
from services.oauth.discovery import Discovery  # noqa: E402
from services.oauth.tokens import Renewal  # noqa: E402
from services.server_spec import ServerSpec, build_server_spec  # noqa: E402
from services.tool_info import ToolInfo  # noqa: E402
from testing.json_document import serve_document  # noqa: E402

_logger = logging.getLogger("conformance_client")
T = TypeVar("T")

# Odoo's paths (models/server/oauth.py), served by the stand-in for Odoo below
CALLBACK_PATH = "/ai_mcp/oauth/callback"
CLIENT_METADATA_PATH = "/ai_mcp/oauth/client-metadata.json"
CLIENT_NAME = "Odoo"
# a user asked to sign in again and again gives up: the suite checks that a client stops
MAX_SIGN_INS = 3


class ScenarioFailed(Exception):
    """What the client could not do; the suite's checks say what it should have done."""


class Grant:
    """One owner's tokens, kept in memory (Odoo keeps them in mcp.oauth.token)."""

    def __init__(self) -> None:
        self.tokens: TokenSet | None = None

    @property
    def key(self) -> Hashable:
        return id(self)

    async def load(self) -> TokenSet | None:
        return self.tokens

    async def renew(self, renewal: Renewal) -> TokenSet | None:
        stored = self.tokens
        kept = await renewal(stored)
        if kept is None and self.tokens is stored:
            self.tokens = None
        elif kept is not None:
            self.tokens = kept
        return self.tokens


@contextlib.contextmanager
def odoo_side() -> Iterator[str]:
    """Odoo's base URL as a provider sees it: serves the client metadata document at its path
    (the callback is never reached: the browser stand-in reads the redirect)."""

    def document(url: str) -> dict[str, Any]:
        base = url.removesuffix(CLIENT_METADATA_PATH)
        return client_metadata(base + CALLBACK_PATH, CLIENT_NAME, client_id=url, client_uri=base)

    with serve_document(CLIENT_METADATA_PATH, document) as url:
        yield url.removesuffix(CLIENT_METADATA_PATH)


class Client:
    """One scenario's run: an MCP server as configured in Odoo, and what a user and a model do with it."""

    def __init__(self, url: str, scenario: str, context: dict[str, Any], hub: McpHub, odoo_url: str) -> None:
        self.url = url
        self.scenario = scenario
        self.context = context
        self.hub = hub
        self.odoo_url = odoo_url
        self.oauth = scenario.startswith("auth/")
        self.spec: ServerSpec = build_server_spec(
            key="conformance",
            name="Conformance",
            transport="streamable_http",
            url=url,
            auth_type="oauth" if self.oauth else "none",
            token_owner="user" if self.oauth else None,
        )
        self.http = GuardedHttp(oauth_allowed_hosts(url, (), public_only=False))
        self.store = Grant()
        self.registration: ClientRegistration | None = None
        self.grant: RefreshingTokens | None = None
        self.sign_ins = 0

    # -- what the product does ---------------------------------------------------------------

    async def run(self) -> None:
        """Sync the server's tools, then a turn: its tools bound, the model's calls run."""
        listing = await self.signed_in(lambda: self.hub.alist_tools(self.spec, self.grant))
        _logger.info("tools listed: %s", [t.name for t in listing.tools])
        offered = await self.bind(listing.tools)
        for name, arguments in self.calls(listing.tools, offered):
            if name not in offered:
                raise ScenarioFailed(f"the turn offers no tool {name!r}: see the warnings above")
            await self.call(offered[name], arguments)
        if self.scenario == "http-standard-headers":
            await self.prompts_and_resources()

    async def bind(self, tools: list[ToolInfo]) -> dict[str, BoundTool]:
        """The tools a turn offers the model, by tool name: those whose schema a model can be given."""
        bound = TurnTools(self.hub, {self.spec.key: self.grant} if self.grant else {}, {}, frozenset())
        async for warning in bound.bind([ToolBinding(server=self.spec, tool=tool) for tool in tools]):
            _logger.info("turn warning: %s", warning.message)
        return {tool.info.name: tool for tool in bound.tools.values()}

    async def signed_in(self, action: Callable[[], Awaitable[T]]) -> T:
        """`action()`, after the sign-in it asks for, as a user does when the chat asks."""
        while True:
            try:
                return await action()
            except AuthRequired as exc:
                await self.sign_in(exc)

    async def sign_in(self, refusal: AuthRequired) -> None:
        """models/server/oauth.py `_oauth_begin` then `_oauth_finish`, the browser in between."""
        if self.sign_ins >= MAX_SIGN_INS:
            raise ScenarioFailed(f"still asked to sign in after {self.sign_ins} sign-ins: {refusal.message}")
        self.sign_ins += 1
        _logger.info("sign-in %d asked: step_up=%s scope=%s", self.sign_ins, refusal.step_up, refusal.scope)
        discovery = await discover(self.url, self.http)
        registration = await self.registered(discovery)
        granted = self.store.tokens.scope if self.store.tokens else None
        scope = refusal.scope if refusal.step_up else None
        url, pending = await start_authorization(discovery, registration, self.http, scope=scope, granted=granted)
        params = await browse(url)
        code = read_callback(params, pending)
        self.store.tokens = await exchange_code(code, pending, registration, self.http)
        self.grant = RefreshingTokens(
            self.store, registration, discovery.endpoint("token_endpoint") or "", discovery.resource, self.http
        )
        await self.hub.aclose_server(self.spec.key, self.spec.token_owner)
        _logger.info("signed in: scope=%s", self.store.tokens.scope)

    async def registered(self, discovery: Discovery) -> ClientRegistration:
        """`_oauth_register`: the registration kept for this issuer, else a new one."""
        if self.registration is not None and same_issuer(self.registration.issuer, discovery.issuer):
            return self.registration
        self.registration = await register(
            discovery,
            self.http,
            self.odoo_url + CALLBACK_PATH,
            CLIENT_NAME,
            metadata_url=self.odoo_url + CLIENT_METADATA_PATH,
            client_id=self.context.get("client_id"),
            client_secret=self.context.get("client_secret"),
        )
        return self.registration

    async def call(self, tool: BoundTool, arguments: dict[str, Any]) -> None:
        """One call as a turn makes it: checked, run by the tool runner, its questions answered; a
        refusal that wants a sign-in is answered by one, and the call made again (the turn resumes)."""
        for _ in range(MAX_SIGN_INS + 1):
            event = ToolCallEvent(
                id="c1",
                name=tool.model_name,
                tool=tool.info.name,
                title=tool.info.name,
                server=self.spec.name,
                arguments=arguments,
                round=1,
            )
            refused = check_arguments(tool, event)
            if refused is not None:
                raise ScenarioFailed(refused.error_message or "arguments refused")
            runner = ToolRunner(self.hub, RunLimits(), TurnBudget(TURN_TIMEOUT.default))
            result = await self.run_call(runner, event, tool)
            refusal = runner.sign_ins.get(event.id)
            if refusal is None:
                _logger.info("tool %s: ok=%s %s", tool.info.name, result.ok, result.model_text[:300])
                return
            await self.sign_in(refusal)
            tool = dataclasses.replace(tool, grant=self.grant)
        raise ScenarioFailed(f"{tool.info.name}: still refused after {MAX_SIGN_INS} sign-ins")

    async def run_call(self, runner: ToolRunner, event: ToolCallEvent, tool: BoundTool) -> ToolResultEvent:
        result: ToolResultEvent | None = None
        async for step in runner.run([(event, tool)]):
            if isinstance(step, ElicitationRequiredEvent):
                self.answer(runner, step)
            elif isinstance(step, ToolResultEvent):
                result = step
            else:
                _logger.info("call event: %s", step.model_dump(mode="json"))
        assert result is not None
        return result

    def answer(self, runner: ToolRunner, question: ElicitationRequiredEvent) -> None:
        """The chat's answer (`_chat_answer_elicitation`): the form accepted as shown, its defaults in."""
        _logger.info("question: %s schema=%s", question.message, question.requested_schema)
        if question.mode != "form":
            runner.answer(question.elicitation, "decline")
            return
        schema = question.requested_schema or {}
        content = apply_defaults(schema, {})
        errors = elicitation_errors(schema, content)
        if errors:
            _logger.info("form not sendable as shown: %s", errors)
            runner.answer(question.elicitation, "decline")
            return
        runner.answer(question.elicitation, "accept", content)

    async def prompts_and_resources(self) -> None:
        """What a user picks from the chat's prompt and resource menus: each of them, one after the
        other, whatever the one before answered (a refusal is shown and the user goes on)."""
        for prompt in await self.hub.alist_prompts(self.spec, self.grant):
            arguments = {a.name: "test" for a in prompt.arguments if a.required}
            await self.shown(f"prompt {prompt.name}", self.hub.aget_prompt(self.spec, prompt, arguments, self.grant))
        listing = await self.hub.alist_resources(self.spec, self.grant)
        for resource in listing.resources:
            await self.shown(f"resource {resource.uri}", self.hub.aread_resource(self.spec, resource.uri, self.grant))

    async def shown(self, what: str, action: Awaitable[Any]) -> None:
        try:
            _logger.info("%s: %s", what, str(await action)[:300])
        except AiMcpError as exc:
            _logger.info("%s: the user is told %s: %s", what, exc.code.value, exc.message)

    # -- what the model asks for -------------------------------------------------------------

    def calls(self, listed: list[ToolInfo], offered: dict[str, BoundTool]) -> list[tuple[str, dict[str, Any]]]:
        """The scenario's own calls (its context names them), else every tool offered, with
        arguments made from its schema, as a model writes them."""
        named = self.context.get("toolCalls")
        if isinstance(named, list):
            return [(c["name"], dict(c.get("arguments") or {})) for c in named]
        if self.scenario == "json-schema-2020-12-preservation":
            # the model is asked to echo the schema it was shown
            focal = next((t for t in listed if t.name == "json_schema_2020_12_tool"), None)
            if focal is None:
                raise ScenarioFailed("the server lists no json_schema_2020_12_tool")
            return [("json_schema_echo", {"schema": focal.input_schema})]
        return [(name, sample_arguments(tool.info.input_schema)) for name, tool in offered.items()]


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each required property, of its type: what a model writes when it has nothing
    better to go on."""
    properties = schema.get("properties") or {}
    numbers = iter(range(2, 100))
    samples = {"string": "test", "boolean": True, "object": {}, "array": []}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type")
        arguments[name] = next(numbers) if kind in ("number", "integer") else samples.get(kind, "test")
    return arguments


async def browse(url: str) -> dict[str, str]:
    """The browser's part: open the provider's page, and read where the provider sends it back
    (the suite's provider approves without asking)."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=15) as browser:
        response = await browser.get(url)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise ScenarioFailed(f"the authorization page answered HTTP {response.status_code} without a redirect")
    return dict(parse_qsl(urlsplit(location).query))


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if len(argv) < 2:
        sys.stderr.write("usage: conformance_client.py <server url> (scenario in MCP_CONFORMANCE_SCENARIO)\n")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    _logger.info(
        "scenario=%s url=%s protocol=%s (agreed with the server, not set)",
        scenario,
        argv[-1],
        os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"),
    )
    hub = McpHub()
    try:
        with odoo_side() as odoo_url:
            client = Client(argv[-1], scenario, context, hub, odoo_url)
            # no limit of its own: the suite ends a client that takes longer than its timeout
            hub.run(client.run())
    except (AiMcpError, ScenarioFailed) as exc:
        _logger.error("scenario %s failed: %s: %s", scenario, type(exc).__name__, exc)
        return 1
    finally:
        hub.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
