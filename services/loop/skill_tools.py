"""The skills of a turn (extension io.modelcontextprotocol/skills), offered to the model as two
tools per server that publishes them: `load_skill`, whose description lists each skill's name and
description, and `read_skill_file`. Nothing of a skill is read before the model asks: its
SKILL.md when it loads the skill, a supporting file when it reads it, each checked against the
manifest the sync stored (services/mcp/skills.py) before the model sees a byte of it.

A supporting file is read only for a skill whose SKILL.md passes its checks: the same turn's load
counts, else the SKILL.md is read and checked again first, so a skill refused once gives the model
none of its files. The calls are ordinary tool calls: shown in the chat, audited, timed."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode, McpError
from ..mcp import McpHub, SkillEntry, SkillRefused, body_of
from ..oauth import RefreshingTokens
from ..server_spec import ServerSpec
from ..tool_info import ToolAnnotations, ToolInfo
from ..tool_result import TextPart, ToolResult

_logger = logging.getLogger(__name__)

LOAD_SKILL = "load_skill"
READ_SKILL_FILE = "read_skill_file"
SKILL_TOOLS = (LOAD_SKILL, READ_SKILL_FILE)


class SkillBinding(BaseModel):
    """A skill this turn may offer (the Odoo layer decides which), as its server's sync listed it."""

    model_config = ConfigDict(frozen=True)

    server: ServerSpec
    skill: SkillEntry


@dataclass
class SkillShelf:
    """The skills of one server in a turn, by the label the model names them with (their name, or
    their path where two share a name), and the SKILL.md texts this turn checked."""

    server: ServerSpec
    skills: dict[str, SkillEntry]
    grant: RefreshingTokens | None = None
    _checked: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, server: ServerSpec, entries: list[SkillEntry], grant: RefreshingTokens | None) -> SkillShelf:
        names = [entry.name for entry in entries]
        # names are labels, not identities: two skills of one server may share one
        labels = {
            (entry.name if names.count(entry.name) == 1 else entry.root.split("://", 1)[-1]): entry for entry in entries
        }
        return cls(server, labels, grant)

    def tools(self) -> list[ToolInfo]:
        """`load_skill` and `read_skill_file` as the model is shown them."""
        labels = sorted(self.skills)
        listed = "\n".join(f"- {label}: {self.skills[label].description}" for label in labels)
        skill = {"type": "string", "enum": labels, "description": "The skill's name, as listed."}
        read_only = ToolAnnotations(read_only=True)
        return [
            ToolInfo(
                name=LOAD_SKILL,
                title="Load skill",
                description=(
                    f"Load the instructions of one of the skills {self.server.name} publishes, before doing what it "
                    f"is for. Its instructions may name further files: read them with {READ_SKILL_FILE}. "
                    f"Skills:\n{listed}"
                ),
                input_schema={"type": "object", "properties": {"skill": skill}, "required": ["skill"]},
                annotations=read_only,
            ),
            ToolInfo(
                name=READ_SKILL_FILE,
                title="Read skill file",
                description=(
                    f"Read a file of a skill of {self.server.name} that its instructions name, by its path in the "
                    "skill (e.g. references/GUIDE.md)."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "skill": skill,
                        "path": {"type": "string", "description": "The file's path relative to the skill."},
                    },
                    "required": ["skill", "path"],
                },
                annotations=read_only,
            ),
        ]

    async def call(self, hub: McpHub, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run `load_skill` or `read_skill_file`; raises McpError (SkillRefused for a failed check)."""
        entry = self._entry(arguments.get("skill"))
        if tool == LOAD_SKILL:
            text = await self._skill_md(hub, entry)
            return _text(f"Skill {entry.name} loaded. Its instructions:\n\n{body_of(text)}")
        path = arguments.get("path")
        listed = entry.file(path) if isinstance(path, str) and path.strip() else None
        if listed is None:
            files = ", ".join(entry.relative(f.uri) for f in entry.files)
            raise McpError(
                ErrorCode.MCP_INVALID_PARAMS, f"The skill {entry.name} has no file {path!r}; its files: {files}."
            )
        if listed.uri == entry.uri:
            return _text(await self._skill_md(hub, entry))
        # a supporting file only within a skill whose SKILL.md passes its checks
        await self._skill_md(hub, entry)
        return _text(await self._read(hub, entry, listed.uri))

    def _entry(self, label: Any) -> SkillEntry:
        entry = self.skills.get(label) if isinstance(label, str) else None
        if entry is None:
            raise McpError(
                ErrorCode.MCP_INVALID_PARAMS,
                f"{self.server.name} publishes no skill {label!r}; its skills: {', '.join(sorted(self.skills))}.",
            )
        return entry

    async def _skill_md(self, hub: McpHub, entry: SkillEntry) -> str:
        if entry.uri not in self._checked:
            self._checked[entry.uri] = await self._read(hub, entry, entry.uri)
        return self._checked[entry.uri]

    async def _read(self, hub: McpHub, entry: SkillEntry, uri: str) -> str:
        try:
            return await hub.aread_skill_file(self.server, entry, uri, self.grant)
        except SkillRefused as exc:
            # the admin's line: which check failed, for which file of which server
            _logger.warning(
                "Skill file refused: server=%s skill=%s file=%s check=%s",
                self.server.label(),
                entry.uri,
                exc.uri,
                exc.check,
            )
            raise


def skill_call_title(title: str, arguments: Mapping[str, Any]) -> str:
    """`title` followed by the skill the call names, and the file within it for `read_skill_file`."""
    skill, path = arguments.get("skill"), arguments.get("path")
    if not isinstance(skill, str) or not skill:
        return title
    return f"{title}: {skill}/{path}" if isinstance(path, str) and path else f"{title}: {skill}"


def _text(text: str) -> ToolResult:
    return ToolResult(parts=[TextPart(text=text)])
