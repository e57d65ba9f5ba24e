"""Skills a server publishes (the extension io.modelcontextprotocol/skills): listed at sync with
`skills/list`, each entry a manifest of the skill's files (their URI, SHA-256 digest and size) and
the front matter of its SKILL.md; its files read with `resources/read` only when the model asks,
each checked against the entry before anything of it is used.

A file is used only when its size, its digest and, for a SKILL.md, its front matter are those of
the entry the sync stored; otherwise a SkillRefused names the check that failed and the file. A
skill whose files are generated ("dynamic": no digests) is not kept: nothing of it could be checked.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
from typing import Any, Literal

import yaml
from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ErrorCode, McpError
from .session import McpSession

_logger = logging.getLogger(__name__)

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
# what a host must accept of one skill (the extension's limits); more is not listed
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
MAX_SKILLS = 200
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_FRONTMATTER = re.compile(r"^---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class SkillFile(BaseModel):
    """One file of a skill as its entry lists it."""

    model_config = ConfigDict(frozen=True)

    uri: str
    digest: str = Field(pattern=_DIGEST.pattern)
    size: int = Field(ge=0)


class SkillEntry(BaseModel):
    """A skill as `skills/list` describes it: where its SKILL.md is, its front matter verbatim and
    every one of its files."""

    model_config = ConfigDict(frozen=True)

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name") or "")

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description") or "")

    @property
    def root(self) -> str:
        """The skill's directory: its SKILL.md's URI without the file name."""
        return self.uri.removesuffix("/" + SKILL_FILE)

    def file(self, path: str) -> SkillFile | None:
        """The listed file at `path` (relative to the skill's root, or its full URI)."""
        uri = path if "://" in path else f"{self.root}/{path.lstrip('/')}"
        return next((f for f in self.files if f.uri == uri), None)

    def relative(self, uri: str) -> str:
        return uri.removeprefix(self.root + "/")


class SkillListing(BaseModel):
    model_config = ConfigDict(frozen=True)

    skills: list[SkillEntry] = []
    warnings: list[str] = []


class SkillRefused(McpError):
    """A skill file that failed a check of the extension: `check` is "digest", "size",
    "frontmatter" or "unlisted", `uri` the file."""

    def __init__(self, check: str, uri: str, message: str) -> None:
        super().__init__(ErrorCode.SKILL_VERIFICATION_FAILED, message)
        self.check = check
        self.uri = uri


class _ListSkillsResult(mcp_types.PaginatedResult):
    skills: list[dict[str, Any]] = []


class _ListSkillsRequest(mcp_types.Request[mcp_types.PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: mcp_types.PaginatedRequestParams | None = None


def publishes_skills(capabilities: dict[str, Any]) -> bool:
    """Whether the server declared the skills extension (a host asks for skills only then)."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and SKILLS_EXTENSION in extensions


async def list_skills(session: McpSession) -> SkillListing:
    """The skills the server lists, page after page (none when it does not declare the extension).
    An entry that cannot be checked later (no manifest, "dynamic", over the limits) is left out
    with a warning, as the extension lets a host decline it."""
    if session.info is None or not publishes_skills(session.info.capabilities):
        return SkillListing()
    raw = await session.list_pages(
        lambda client, cursor: client.session.send_request(
            _ListSkillsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None),
            _ListSkillsResult,
        ),
        lambda page: page.skills,
        MAX_SKILLS,
    )
    skills: list[SkillEntry] = []
    warnings: list[str] = []
    for item in raw:
        entry, problem = _entry(item)
        if entry is None:
            warnings.append(f"{session.spec.name}: the skill {_label(item)} is left out because {problem}.")
        elif any(known.uri == entry.uri for known in skills):
            warnings.append(f"{session.spec.name} lists the skill {entry.uri} twice; the first one is kept.")
        else:
            skills.append(entry)
    for message in warnings:
        _logger.warning("MCP skills/list: server=%s %s", session.spec.label(), message)
    return SkillListing(skills=skills, warnings=warnings)


def _label(item: Any) -> str:
    return str(item.get("uri")) if isinstance(item, dict) and item.get("uri") else "without a URI"


def _entry(item: Any) -> tuple[SkillEntry | None, str]:
    """The entry `item` describes, or None and why it cannot be used."""
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        return None, "it has no URI"
    frontmatter = item.get("frontmatter")
    if not isinstance(frontmatter, dict) or not frontmatter.get("name") or not frontmatter.get("description"):
        return None, "its front matter has no name or description"
    uri = item["uri"]
    if not uri.endswith("/" + SKILL_FILE) or uri.rsplit("/", 2)[-2] != frontmatter["name"]:
        return None, "its URI does not end in its name and SKILL.md"
    resources = item.get("resources")
    if resources == "dynamic":
        return None, "its files are generated, with no digest to check them against"
    if not isinstance(resources, list):
        return None, "it lists no files"
    try:
        files = tuple(SkillFile.model_validate(r) for r in resources)
    except ValueError:
        return None, "a file of it has no valid SHA-256 digest or size"
    if uri not in {f.uri for f in files}:
        return None, "its files do not include its SKILL.md"
    if len(files) > MAX_SKILL_FILES or sum(f.size for f in files) > MAX_SKILL_BYTES:
        return None, f"it has more than {MAX_SKILL_FILES} files or {MAX_SKILL_BYTES // (1024 * 1024)} MiB"
    return SkillEntry(uri=uri, frontmatter=frontmatter, files=files), ""


async def read_skill_file(session: McpSession, entry: SkillEntry, uri: str) -> str:
    """The text of the skill's file `uri`, read now and checked against `entry` (its SKILL.md's
    front matter too). Raises SkillRefused naming the failed check."""
    listed = next((f for f in entry.files if f.uri == uri), None)
    if listed is None:
        raise SkillRefused("unlisted", uri, f"{uri} is not one of the files the skill {entry.name} lists.")
    result = await session.send(session.client.read_resource(uri))
    data = _bytes(result, uri, session.spec.name)
    verify(entry, listed, data)
    return data.decode("utf-8", errors="replace")


def _bytes(result: mcp_types.ReadResourceResult, uri: str, server: str) -> bytes:
    for content in result.contents:
        if isinstance(content, mcp_types.TextResourceContents):
            return content.text.encode("utf-8")
        if isinstance(content, mcp_types.BlobResourceContents):
            return base64.b64decode(content.blob)
    raise McpError(ErrorCode.MCP_PROTOCOL_ERROR, f"{server} returned nothing for {uri}.")


def verify(entry: SkillEntry, listed: SkillFile, data: bytes) -> None:
    """Raise SkillRefused unless `data` is the file `listed` describes: its size, then its digest,
    and for the skill's SKILL.md its front matter, field by field, against the entry's."""
    if len(data) != listed.size:
        raise SkillRefused(
            "size",
            listed.uri,
            f"size check failed for {listed.uri}: the server sent {len(data)} bytes where the skill's manifest "
            f"says {listed.size}.",
        )
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != listed.digest:
        raise SkillRefused(
            "digest",
            listed.uri,
            f"digest check failed for {listed.uri}: its content is not what the skill's manifest describes.",
        )
    if listed.uri == entry.uri:
        differing = frontmatter_differences(entry.frontmatter, data.decode("utf-8", errors="replace"))
        if differing:
            raise SkillRefused(
                "frontmatter",
                listed.uri,
                f"front matter check failed for {listed.uri}: {', '.join(differing)} "
                f"{'differs' if len(differing) == 1 else 'differ'} from the skill's listing.",
            )


def parse_frontmatter(text: str) -> dict[str, Any] | None:
    """The YAML front matter a SKILL.md begins with, or None when it has none that parses."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        return None
    try:
        parsed = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    return parsed if isinstance(parsed, dict) else None


def frontmatter_differences(listed: dict[str, Any], text: str) -> list[str]:
    """The fields whose value in the file's front matter is not the listing's (["front matter"]
    when the file has none)."""
    parsed = parse_frontmatter(text)
    if parsed is None:
        return ["the front matter itself (missing, or not YAML)"]
    return sorted(key for key in {*parsed, *listed} if _json_like(parsed.get(key)) != listed.get(key))


def _json_like(value: Any) -> Any:
    """YAML's value as JSON carries it (a date as its ISO text), for the field-by-field comparison."""
    if isinstance(value, dict):
        return {str(k): _json_like(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_like(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def body_of(text: str) -> str:
    """A SKILL.md without its front matter: the instructions the model reads."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    return text[match.end() :].lstrip("\n") if match else text
