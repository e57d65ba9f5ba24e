"""The tools of one turn: the servers' sessions opened together, each tool bound under the name the
model calls it by, and what is known before the first round about servers that cannot serve now
(unreachable, a stdio server that could not start included: a warning, its tools not offered and a
call of one answered with why; a per-user OAuth server without the user's sign-in: a pause when
called; declined by the user: not offered, a waiting call answered with why)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field

from ..errors import AuthRequired, ErrorCode, McpError
from ..events import WarningEvent
from ..mcp import McpHub, McpSession
from ..oauth import RefreshingTokens, with_token
from ..server_spec import AuthType, ServerSpec, Transport
from ..tool_info import ToolInfo
from .presets import schema_without
from .skill_tools import SKILL_TOOLS, SkillBinding, SkillShelf
from .tool_names import ToolNameMap, ToolRef
from .tool_runner import BoundTool


class ToolBinding(BaseModel):
    """A tool this turn may offer (the Odoo layer decides which)."""

    model_config = ConfigDict(frozen=True)

    server: ServerSpec
    tool: ToolInfo
    requires_approval: bool = False
    # why its calls run without asking ("read_only", "not_required", "conversation": remembered
    # by the user), for the audit; None when they ask
    approval: str | None = None
    # resolved preset arguments: hidden from the model, merged over what it sends
    fixed_arguments: dict[str, Any] = Field(default_factory=dict)
    # offered in every round even when the model finds the others by searching (offered_tools.py)
    always_offered: bool = False


class SignInLink(BaseModel):
    """Where the user of this turn signs in to one OAuth server: Odoo's route, opened in a new tab."""

    model_config = ConfigDict(frozen=True)

    server_id: int
    url: str


@dataclass
class TurnTools:
    """What `bind` found: the tools offered (by model name), those of declined servers and of
    servers that could not be reached (with why), the OpenAI tools bind_tools sends, and the servers
    that need the user's sign-in first."""

    hub: McpHub
    grants: Mapping[str, RefreshingTokens]
    sign_in_links: Mapping[str, SignInLink]
    declined: frozenset[str]
    tools: dict[str, BoundTool] = field(default_factory=dict)
    declined_tools: dict[str, BoundTool] = field(default_factory=dict)
    unreachable_tools: dict[str, tuple[BoundTool, McpError]] = field(default_factory=dict)
    offered: list[dict[str, Any]] = field(default_factory=list)
    needs_sign_in: dict[str, AuthRequired] = field(default_factory=dict)
    # by model name: each offered tool's OpenAI tool and its size in bytes, the always offered ones
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    always: set[str] = field(default_factory=set)

    async def bind(
        self, bindings: list[ToolBinding], skills: Sequence[SkillBinding] = ()
    ) -> AsyncIterator[WarningEvent]:
        """Bind `bindings`, and `load_skill` and `read_skill_file` for each server with `skills`,
        yielding a warning for each server or tool left out."""
        sessions: dict[str, McpSession] = {}
        unreachable: dict[str, McpError] = {}
        async for item in self._open_sessions(bindings):
            if isinstance(item, tuple):
                spec, error = item
                unreachable[spec.key] = error
                yield WarningEvent(code=error.code.value, message=_unavailable(spec, error))
            else:
                sessions[item.spec.key] = item
        usable: list[ToolBinding] = []
        for binding in bindings:
            key = binding.server.key
            if (
                key not in sessions
                and binding.server.transport is not Transport.ODOO
                and key not in self.needs_sign_in
                and key not in self.declined
            ):
                if key in unreachable:
                    usable.append(binding)
                continue
            problem = binding.tool.schema_problem()
            if problem:
                yield _left_out(binding, problem)
            else:
                usable.append(binding)
        shelves = self._shelves(usable, skills)
        skill_refs = [
            ToolRef(shelf.server.key, shelf.server.name, info.name) for shelf in shelves for info in shelf.tools()
        ]
        # declined servers keep their names, so that a call waiting for the sign-in still matches
        names = ToolNameMap.build([*(ToolRef(b.server.key, b.server.name, b.tool.name) for b in usable), *skill_refs])
        for binding in usable:
            spec = binding.server
            model_name = names.model_name(ToolRef(spec.key, spec.name, binding.tool.name))
            tool = BoundTool(
                model_name,
                spec,
                binding.tool,
                binding.requires_approval,
                binding.fixed_arguments,
                self.grants.get(spec.key),
                binding.approval,
            )
            if spec.key in self.declined:
                self.declined_tools[model_name] = tool
                continue
            if spec.key in unreachable:
                self.unreachable_tools[model_name] = (tool, unreachable[spec.key])
                continue
            shown = binding.tool.model_copy(
                update={"input_schema": schema_without(binding.tool.input_schema, binding.fixed_arguments)}
            )
            try:
                offered, size = _offered_tool(shown, model_name)
            except (ValueError, KeyError) as exc:
                # LangChain's dereferencing refuses what the schema check let through (e.g. an anchor)
                yield _left_out(binding, f"its input schema cannot be offered to a model: {exc}")
                continue
            self.tools[model_name] = tool
            self.offered.append(offered)
            self.definitions[model_name] = offered
            self.sizes[model_name] = size
            if binding.always_offered:
                self.always.add(model_name)

        for shelf in shelves:
            for info in shelf.tools():
                model_name = names.model_name(ToolRef(shelf.server.key, shelf.server.name, info.name))
                offered, size = _offered_tool(info, model_name)
                self.tools[model_name] = BoundTool(model_name, shelf.server, info, skills=shelf)
                self.offered.append(offered)
                self.definitions[model_name] = offered
                self.sizes[model_name] = size
                # the skills' names and descriptions are what the model finds them by: never searched for
                self.always.add(model_name)

    def _shelves(self, usable: list[ToolBinding], skills: Sequence[SkillBinding]) -> list[SkillShelf]:
        """The skills of each server but a declined one, whose own tools leave their names free."""
        by_server: dict[str, list[SkillBinding]] = {}
        for binding in skills:
            if binding.server.key not in self.declined:
                by_server.setdefault(binding.server.key, []).append(binding)
        shelves = []
        for key, bound in by_server.items():
            taken = {b.tool.name for b in usable if b.server.key == key}
            if taken & set(SKILL_TOOLS):
                continue
            shelves.append(SkillShelf.of(bound[0].server, [b.skill for b in bound], self.grants.get(key)))
        return shelves

    def waits_for_sign_in(self, spec: ServerSpec) -> bool:
        """Whether a refusal of `spec` is for the user to answer by signing in (a per-user OAuth
        server the turn has a sign-in link for) rather than a failure the model reads."""
        return bool(spec.token_owner) and spec.key in self.sign_in_links

    async def _open_sessions(
        self, bindings: list[ToolBinding]
    ) -> AsyncIterator[McpSession | tuple[ServerSpec, McpError]]:
        """Pooled sessions of the turn's servers, connected together, and each unreachable one with
        its error; a per-user OAuth server without a usable sign-in is noted in needs_sign_in."""
        # This Odoo's tools run in-process: there is no session to open
        servers = [
            spec
            for spec in {b.server.key: b.server for b in bindings}.values()
            if spec.key not in self.declined and spec.transport is not Transport.ODOO
        ]
        outcomes = await asyncio.gather(*(self._connect(spec) for spec in servers))
        for spec, outcome in zip(servers, outcomes, strict=True):
            if isinstance(outcome, AuthRequired) and self.waits_for_sign_in(spec):
                self.needs_sign_in[spec.key] = outcome
            elif isinstance(outcome, McpError):
                yield spec, outcome
            else:
                yield outcome

    async def _connect(self, spec: ServerSpec) -> McpSession | McpError:
        try:
            if spec.auth_type is AuthType.OAUTH:
                grant = self.grants.get(spec.key)
                if grant is None:
                    return AuthRequired(spec.key, spec.name, owner=spec.token_owner)
                return await with_token(spec, grant, self.hub.pool.acquire)
            return await self.hub.pool.acquire(spec)
        except McpError as exc:
            return exc


def _unavailable(spec: ServerSpec, error: McpError) -> str:
    """What the user is told of a server the turn could not reach. A stdio server that wrote to
    its standard error only gets a sentence: what it wrote is for the admin (it may hold the
    secrets of its environment), who reads it on the server's form."""
    if error.output:
        return (
            f"{spec.name} could not start, so its tools are left out of this answer; an administrator can see why "
            "on the server's form."
        )
    return f"{spec.name} is unavailable, so its tools are left out of this answer: {error.message}"


def _left_out(binding: ToolBinding, problem: str) -> WarningEvent:
    return WarningEvent(
        code=ErrorCode.MCP_PROTOCOL_ERROR.value,
        message=f"{binding.server.name}: the tool {binding.tool.name!r} is left out because {problem}.",
    )


# Turning a tool into what bind_tools sends walks and dereferences its whole schema: about half a
# millisecond a tool, on every turn, for a result that only changes with what the model is told.
OFFERED_TOOL_CACHE_SIZE = 2048


def _offered_tool(info: ToolInfo, model_name: str) -> tuple[dict[str, Any], int]:
    """The OpenAI tool bind_tools sends for `info` under `model_name` (a new copy each time, as the
    request may change what it is given) and its size in bytes."""
    told = json.dumps([model_name, info.description, info.input_schema])
    offered = _offered_tool_json(told)
    return json.loads(offered), len(offered.encode())


@functools.lru_cache(maxsize=OFFERED_TOOL_CACHE_SIZE)
def _offered_tool_json(told: str) -> str:
    """LangChain turns the tool into the OpenAI tool, as bind_tools would: a StructuredTool whose
    argument schema is the server's input schema as it is, which LangChain dereferences and strips
    of titles. The StructuredTool itself is never called: the loop executes calls through the hub,
    which times them, tells the server of a cancel and keeps the error codes and typed parts the
    events carry."""
    model_name, description, input_schema = json.loads(told)
    tool = StructuredTool(
        name=model_name, description=description or "", args_schema=input_schema, coroutine=_never_called
    )
    return json.dumps(convert_to_openai_tool(tool))


async def _never_called(**_arguments: Any) -> None:
    raise NotImplementedError("tools are called through the hub")
