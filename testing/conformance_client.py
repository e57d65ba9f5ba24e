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

import atexit
import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Hashable, Iterator
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
from pydantic import SecretStr  # noqa: E402

from services.call_clock import TurnBudget  # noqa: E402
from services.errors import AiMcpError, AuthRequired  # noqa: E402
from services.events import ElicitationRequiredEvent, ToolCallEvent, ToolResultEvent  # noqa: E402
from services.limits import TURN_TIMEOUT  # noqa: E402
from services.loop import SkillBinding, ToolBinding  # noqa: E402
from services.loop.skill_tools import LOAD_SKILL, READ_SKILL_FILE  # noqa: E402
from services.loop.tool_runner import (  # noqa: E402
    BoundTool,
    RunLimits,
    ToolRunner,
    argument_problems,
    check_arguments,
    without_null_optionals,
)
from services.loop.turn_tools import TurnTools  # noqa: E402
from services.mcp import CallObserver, McpHub, SkillEntry, apply_defaults, elicitation_errors  # noqa: E402
from services.oauth import (  # noqa: E402
    ClientAuth,
    ClientCredentialsTokens,
    ClientRegistration,
    EnterpriseClient,
    EnterpriseTokens,
    GuardedHttp,
    IdentityProvider,
    MachineClient,
    RefreshingTokens,
    TokenSet,
    WorkloadClient,
    WorkloadTokens,
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
# a new mcp.server's defaults (models/server/mcp_server.py log_level, models/server/app.py apps_enabled,
# models/server/sampling.py sampling_enabled: sampling is offered until an admin turns it off)
LOG_LEVEL = "info"
APPS = True
SAMPLING = True
QUESTION_CARD = ROOT / "testing" / "question_card.mjs"


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

    async def save(self, tokens: TokenSet) -> TokenSet:
        self.tokens = tokens
        return tokens

    async def renew(self, renewal: Renewal) -> TokenSet | None:
        stored = self.tokens
        kept = await renewal(stored)
        if kept is None and self.tokens is stored:
            self.tokens = None
        elif kept is not None:
            self.tokens = kept
        return self.tokens


class SignedIn:
    """The user's sign-in at her company's identity provider, as Odoo keeps it (`mcp.identity.grant`):
    the ID token the provider issued her."""

    def __init__(self, id_token: str | None) -> None:
        self._id_token = id_token

    async def id_token(self) -> SecretStr:
        if not self._id_token:
            raise ScenarioFailed("the scenario gives no ID token of the user")
        return SecretStr(self._id_token)


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
        # the admin's choice on the form: Signs In As a company client (client credentials), on a
        # shared server, for the suite's scenarios of that extension
        # or Signs In As this deployment (workload identity), the platform's JWT in a file
        self.workload = scenario == "auth/wif-jwt-bearer"
        self.company_client = scenario.startswith("auth/client-credentials") or self.workload
        # or Signs In As the user, vouched for by the company's identity provider (enterprise-managed
        # authorization): a per-user grant that no browser step makes
        self.enterprise = scenario == "auth/enterprise-managed-authorization"
        # the admin's choice on the form: DPoP on, for the suite's scenarios of that extension
        self.dpop = scenario.startswith("auth/dpop")
        self.spec: ServerSpec = build_server_spec(
            key="conformance",
            name="Conformance",
            transport="streamable_http",
            url=url,
            auth_type="oauth" if self.oauth else "none",
            token_owner="user" if self.oauth and not self.company_client else None,
            log_level=LOG_LEVEL,
            apps=APPS,
            sampling=SAMPLING,
        )
        self.http = GuardedHttp(oauth_allowed_hosts(url, (), public_only=False))
        self.store = Grant()
        self.registration: ClientRegistration | None = None
        self.grant: RefreshingTokens | None = None
        # the form's Scopes field: empty (what the server advertises) until an admin enters some
        self.form_scopes: str | None = None
        self.sign_ins = 0
        # the skills the sync listed (`mcp.skill`), their files not read
        self.skills: list[SkillEntry] = []

    # -- what the product does ---------------------------------------------------------------

    async def run(self) -> None:
        """Sign in from the form, sync the tools, then a turn: the synced tools bound, the model's calls run."""
        if self.workload:
            self.grant = self.workload_grant()
        elif self.enterprise:
            self.grant = self.enterprise_grant()
        elif self.company_client:
            self.grant = self.company_grant()
        elif self.oauth:
            await self.sign_in(self.form_scopes, "the server's form")
        synced = await self.sync()
        _logger.info("tools synced: %s; skills: %s", [t.name for t in synced], [s.uri for s in self.skills])
        turn = await self.bind(synced)
        offered = {tool.info.name: tool for tool in turn.tools.values()}
        by_name = {tool.name: tool for tool in synced}
        for name, arguments in self.calls(synced, turn):
            if name in offered:
                await self.call(offered[name], arguments)
                await self.show_app(offered[name].info)
            elif name in by_name and by_name[name].visibility == "app":
                await self.app_call(by_name[name], arguments)
            else:
                raise ScenarioFailed(f"the turn offers no tool {name!r}: see the warnings above")
        for tool, arguments in self.skill_calls(turn):
            await self.call(tool, arguments)
        if self.scenario == "http-standard-headers":
            await self.prompts_and_resources()

    async def sync(self) -> list[ToolInfo]:
        """ "Sync tools" (`_sync_tools`): a session of its own lists the tools, with the grant's
        token. A refusal is shown on the form; the admin signs in from it again, entering the
        scope a step-up names in the form's Scopes, as its message says."""
        while True:
            spec, granted = await self.bearing()
            try:
                report = await self.hub.atest_connection(spec, granted)
            except AuthRequired as exc:
                _logger.info("sync refused: %s", exc.message)
                if self.company_client:
                    raise ScenarioFailed(f"the company client's token was refused: {exc.message}") from None
                if exc.step_up and exc.scope:
                    self.form_scopes = exc.scope
                await self.sign_in(self.form_scopes, "the server's form")
                continue
            for warning in report.warnings:
                _logger.info("sync warning: %s", warning)
            self.skills = report.skills
            return report.tools

    async def bearing(self) -> tuple[ServerSpec, TokenSet | None]:
        """`_oauth_bearing`: the spec with the grant's token, refreshed when about to expire."""
        if not self.oauth:
            return self.spec, None
        assert self.grant is not None
        tokens = await self.grant.current()
        if tokens is None:
            raise ScenarioFailed("the sign-in left no tokens")
        return self.spec.model_copy(update={"token": tokens.access_token, "dpop_key": tokens.dpop_key}), tokens

    async def bind(self, tools: list[ToolInfo]) -> TurnTools:
        """The tools a turn offers the model (`_tool_bindings`, audience "model": no app-only tool)."""
        bound = TurnTools(self.hub, {self.spec.key: self.grant} if self.grant else {}, {}, frozenset())
        bindings = [ToolBinding(server=self.spec, tool=tool) for tool in tools if tool.model_visible]
        # the assistant is given every skill the server publishes (`_skill_bindings`)
        skills = [SkillBinding(server=self.spec, skill=skill) for skill in self.skills]
        async for warning in bound.bind(bindings, skills):
            _logger.info("turn warning: %s", warning.message)
        return bound

    async def sign_in(self, scope: str | None, where: str) -> None:
        """models/server/oauth.py `_oauth_begin(scope=...)` then `_oauth_finish`, the browser in between."""
        self.sign_ins += 1
        _logger.info("sign-in %d from %s: scope=%s", self.sign_ins, where, scope)
        discovery = await discover(self.url, self.http)
        registration = await self.registered(discovery)
        granted = self.store.tokens.scope if self.store.tokens else None
        url, pending = await start_authorization(
            discovery, registration, self.http, scope=scope, granted=granted, dpop_bound=self.dpop
        )
        params = await browse(url)
        code = read_callback(params, pending)
        self.store.tokens = await exchange_code(code, pending, registration, self.http)
        self.grant = RefreshingTokens(
            self.store, registration, discovery.endpoint("token_endpoint") or "", discovery.resource, self.http
        )
        await self.hub.aclose_server(self.spec.key, self.spec.token_owner)
        _logger.info("signed in: scope=%s", self.store.tokens.scope)

    def company_grant(self) -> ClientCredentialsTokens:
        """`_oauth_machine_grant`: the form's Client ID and its Client Secret, or the Private Key
        pasted in (the scenario's key pair is made by the suite, as an identity provider may)."""
        key = self.context.get("private_key_pem")
        secret = self.context.get("client_secret")
        client = MachineClient(
            server_name=self.spec.name,
            client_id=self.context.get("client_id") or "",
            auth=ClientAuth.PRIVATE_KEY if key else ClientAuth.SECRET,
            client_secret=secret,
            private_key=key,
            scope=self.form_scopes,
            dpop=self.dpop,
        )
        return ClientCredentialsTokens(self.store, client, self.url, self.http)

    def workload_grant(self) -> WorkloadTokens:
        """`_oauth_machine_grant` of a workload identity: the form's Workload Token names the file
        the platform writes the deployment's JWT to (here the scenario's JWT, written as a platform
        would), and its Client ID."""
        folder = tempfile.mkdtemp(prefix="ai-mcp-workload-")
        atexit.register(shutil.rmtree, folder, True)
        path = os.path.join(folder, "token")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.context.get("valid_jwt") or "")
        client = WorkloadClient(
            server_name=self.spec.name,
            token_source=path,
            client_id=self.context.get("client_id"),
            scope=self.form_scopes,
        )
        return WorkloadTokens(self.store, client, self.url, self.http)

    def enterprise_grant(self) -> EnterpriseTokens:
        """`_oauth_grant` of a server the company's identity provider vouches for users at: the
        provider's form (issuer, token endpoint, Odoo's client there), the server form's Client ID and
        Client Secret (Odoo's client at the authorization server), and the user's ID token as her
        one sign-in to the provider left it (here the scenario's, which its provider issued)."""
        provider = IdentityProvider(
            name="Identity provider",
            issuer=self.context.get("idp_issuer") or "",
            token_endpoint=self.context.get("idp_token_endpoint") or "",
            client_id=self.context.get("idp_client_id") or "",
        )
        client = EnterpriseClient(
            server_name=self.spec.name,
            provider=provider,
            client_id=self.context.get("client_id") or "",
            client_secret=self.context.get("client_secret"),
            scope=self.form_scopes,
        )
        return EnterpriseTokens(self.store, client, self.url, self.http, SignedIn(self.context.get("idp_id_token")))

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
        refusal that wants a sign-in pauses the turn, the user signs in from the link it shows
        (the challenge's scope for a step-up), and the call is made again as the turn resumes."""
        while True:
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
            await self.sign_in(refusal.scope if refusal.step_up else None, "the paused turn's link")
            tool = dataclasses.replace(tool, grant=self.grant)

    async def run_call(self, runner: ToolRunner, event: ToolCallEvent, tool: BoundTool) -> ToolResultEvent:
        result: ToolResultEvent | None = None
        async for step in runner.run([(event, tool)]):
            if isinstance(step, ElicitationRequiredEvent):
                await self.answer(runner, step)
            elif isinstance(step, ToolResultEvent):
                result = step
            else:
                _logger.info("call event: %s", step.model_dump(mode="json"))
        assert result is not None
        return result

    async def answer(self, runner: ToolRunner, question: ElicitationRequiredEvent) -> None:
        """The user's answer through the question card: a URL question's page opened, then "done";
        a form sent as the card shows it, then `_chat_answer_elicitation`'s defaults and check."""
        _logger.info("question (%s): %s schema=%s", question.mode, question.message, question.requested_schema)
        if question.mode != "form":
            await self.visit(question.url or "")
            runner.answer(question.elicitation, "accept")
            return
        schema = question.requested_schema or {}
        card = question_card(schema)
        if "content" not in card:
            _logger.info("the card does not send the form as shown: %s", card.get("problems"))
            runner.answer(question.elicitation, "decline")
            return
        content = apply_defaults(schema, card["content"])
        errors = elicitation_errors(schema, content)
        if errors:
            _logger.info("the chat refuses the answer: %s", errors)
            runner.answer(question.elicitation, "decline")
            return
        runner.answer(question.elicitation, "accept", content)

    async def visit(self, url: str) -> None:
        """The page a URL question names, opened in a new tab (what it asks there is the server's)."""
        try:
            async with httpx2.AsyncClient(follow_redirects=True, timeout=15) as browser:
                response = await browser.get(url)
            _logger.info("page %s: HTTP %d", url, response.status_code)
        except httpx2.HTTPError as exc:
            _logger.info("page %s not opened: %s", url, exc)

    async def show_app(self, tool: ToolInfo) -> None:
        """The chat shows a called tool's MCP App (`_chat_app`): its resource read from the server."""
        if not (self.spec.apps and tool.app_uri):
            return
        await self.shown(f"app {tool.app_uri}", self.hub.aread_app(self.spec, tool.app_uri, self.grant))

    async def app_call(self, tool: ToolInfo, arguments: dict[str, Any]) -> None:
        """A call an app makes (`_app_run`): checked, then on the pooled session with no card to
        show it, so its server's questions are declined at once."""
        problems = argument_problems(tool.input_schema, without_null_optionals(tool.input_schema, arguments))
        if problems:
            raise ScenarioFailed(f"{tool.name}: the app's arguments are refused: {problems}")
        result = await self.hub.acall_tool(
            self.spec,
            tool.name,
            without_null_optionals(tool.input_schema, arguments),
            timeout=min(RunLimits().call_timeout, self.spec.call_timeout),
            retry_safe=tool.annotations.retry_safe,
            observer=CallObserver("app-call", _unseen),
            tokens=self.grant,
        )
        _logger.info("app call %s: error=%s", tool.name, result.is_error)

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

    def calls(self, synced: list[ToolInfo], turn: TurnTools) -> list[tuple[str, dict[str, Any]]]:
        """The scenario's own calls (its context names them), else every tool offered, with
        arguments made from the schema the model is shown, as a model writes them."""
        named = self.context.get("toolCalls")
        if isinstance(named, list):
            return [(c["name"], dict(c.get("arguments") or {})) for c in named]
        shown = {
            tool.info.name: turn.definitions[name]["function"].get("parameters") or {}
            for name, tool in turn.tools.items()
            if tool.skills is None
        }
        if self.scenario == "json-schema-2020-12-preservation":
            # the model is asked to echo the schema it was shown: LangChain's conversion of the listed one
            if "json_schema_2020_12_tool" not in shown:
                raise ScenarioFailed("the turn offers no json_schema_2020_12_tool")
            return [("json_schema_echo", {"schema": shown["json_schema_2020_12_tool"]})]
        return [(name, sample_arguments(schema)) for name, schema in shown.items()]

    def skill_calls(self, turn: TurnTools) -> list[tuple[BoundTool, dict[str, Any]]]:
        """What the model asks of the skills it is offered: in the scenarios about a skill once it is
        loaded (sep-2640-client-verify-*), it loads each, then reads each file its SKILL.md may name;
        otherwise the user asks for nothing a skill is for, and the model loads none."""
        if not self.scenario.startswith("sep-2640-client-verify-"):
            return []
        tools = {tool.info.name: tool for tool in turn.tools.values() if tool.skills is not None}
        if LOAD_SKILL not in tools:
            raise ScenarioFailed("the turn offers no load_skill: see the warnings above")
        calls: list[tuple[BoundTool, dict[str, Any]]] = []
        for label, entry in tools[LOAD_SKILL].skills.skills.items():  # type: ignore[union-attr]
            calls.append((tools[LOAD_SKILL], {"skill": label}))
            for listed in entry.files:
                if listed.uri != entry.uri:
                    calls.append((tools[READ_SKILL_FILE], {"skill": label, "path": entry.relative(listed.uri)}))
        return calls


def question_card(schema: dict[str, Any]) -> dict[str, Any]:
    """What the chat's card sends for the form `schema` accepted as shown (testing/question_card.mjs)."""
    node = shutil.which("node")
    if node is None:
        raise ScenarioFailed("node is needed to fill in a question's form as the chat's card does")
    done = subprocess.run(
        [node, str(QUESTION_CARD), json.dumps(schema)], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise ScenarioFailed(f"the question card could not read the form: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout)


def _unseen(_event: Any) -> None:
    """Where an app's call's progress and log messages go: no tool block shows them."""


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
