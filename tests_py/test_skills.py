"""Skills a server publishes (extension io.modelcontextprotocol/skills): the sync lists them without
reading a file; a turn offers their names and descriptions in `load_skill`'s description, reads a
skill's SKILL.md only when the model loads it and a supporting file only when it reads it, and
refuses a file whose size, digest or front matter is not what the server listed, naming the check
and the file, so that the model never reads it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from test_agent_loop import run, settings

from services.loop import SkillBinding, ToolBinding, TurnRequest
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn
from testing.skills_server import (
    BODY_LINE,
    CHECKLIST_LINE,
    CHECKLIST_URI,
    SKILL_URI,
    SkillsServer,
)


@pytest.fixture
def skills_server() -> Iterator[SkillsServer]:
    with SkillsServer() as server:
        yield server


def synced(hub: McpHub, spec: ServerSpec) -> tuple[list[ToolBinding], list[SkillBinding]]:
    """The tools and skills as "Sync tools" records them (a session of its own)."""
    report = hub.run(hub.atest_connection(spec))
    tools = [ToolBinding(server=spec, tool=tool) for tool in report.tools]
    return tools, [SkillBinding(server=spec, skill=skill) for skill in report.skills]


def spec_of(server: SkillsServer) -> ServerSpec:
    return build_server_spec(key="sk", name="Invoices", transport="streamable_http", url=server.url)


def results(events: list) -> list:
    return [e for e in events if e.type == "tool_result"]


def test_the_sync_lists_a_skill_without_reading_any_of_its_files(hub: McpHub, skills_server: SkillsServer) -> None:
    _tools, skills = synced(hub, spec_of(skills_server))

    assert [(s.skill.uri, s.skill.name, s.skill.description) for s in skills] == [
        (SKILL_URI, "invoice-review", "Review a supplier invoice before it is posted")
    ]
    assert [f.uri for f in skills[0].skill.files] == [SKILL_URI, CHECKLIST_URI]
    assert "skills/list" in [method for method, _ in skills_server.requests]
    assert skills_server.reads() == []


def test_the_model_loads_a_skill_then_reads_its_file_each_fetched_only_when_asked(
    hub: McpHub, llm: ScriptedLLM, skills_server: SkillsServer
) -> None:
    tools, skills = synced(hub, spec_of(skills_server))
    llm.queue(
        Turn(tool_calls=(ToolCall("load_skill", {"skill": "invoice-review"}),)),
        Turn(tool_calls=(ToolCall("read_skill_file", {"skill": "invoice-review", "path": "references/CHECKLIST.md"}),)),
        Turn(text="Reviewed."),
    )

    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools, skills=skills, user_message="Review it"))

    # offered by name and description, nothing of the skill read before the model asked
    first = llm.requests[0]
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert "invoice-review: Review a supplier invoice before it is posted" in offered["load_skill"]["description"]
    assert BODY_LINE not in json.dumps(first)
    loaded, read = results(events)
    assert loaded.ok and BODY_LINE in loaded.model_text and "description:" not in loaded.model_text
    assert read.ok and CHECKLIST_LINE in read.model_text
    assert skills_server.reads() == [SKILL_URI, CHECKLIST_URI]
    calls = [e for e in events if e.type == "tool_call"]
    assert [(c.server, c.tool) for c in calls] == [("Invoices", "load_skill"), ("Invoices", "read_skill_file")]
    # the chat's block titles say which skill, and which of its files, without being opened
    assert [c.title for c in calls] == [
        "Load skill: invoice-review",
        "Read skill file: invoice-review/references/CHECKLIST.md",
    ]


@pytest.mark.parametrize(
    ("tamper", "check"), [("digest", "digest check"), ("size", "size check"), ("frontmatter", "front matter check")]
)
def test_a_tampered_skill_is_refused_naming_the_check_and_none_of_its_files_is_read(
    hub: McpHub, llm: ScriptedLLM, skills_server: SkillsServer, tamper: str, check: str
) -> None:
    skills_server.tamper = tamper  # type: ignore[assignment]
    tools, skills = synced(hub, spec_of(skills_server))
    llm.queue(
        Turn(tool_calls=(ToolCall("load_skill", {"skill": "invoice-review"}),)),
        Turn(tool_calls=(ToolCall("read_skill_file", {"skill": "invoice-review", "path": "references/CHECKLIST.md"}),)),
        Turn(text="I cannot use it."),
    )

    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools, skills=skills, user_message="Review it"))

    loaded, read = results(events)
    for refused in (loaded, read):
        assert not refused.ok
        assert refused.error_code == "SKILL_VERIFICATION_FAILED"
        assert f"{check} failed for {SKILL_URI}" in refused.model_text
        assert "VAT" not in refused.model_text and "BIC" not in refused.model_text
    # the supporting file of a skill that failed its checks is never fetched
    assert CHECKLIST_URI not in skills_server.reads()


def test_a_file_the_skill_does_not_list_is_refused_without_a_request(
    hub: McpHub, llm: ScriptedLLM, skills_server: SkillsServer
) -> None:
    tools, skills = synced(hub, spec_of(skills_server))
    llm.queue(
        Turn(tool_calls=(ToolCall("read_skill_file", {"skill": "invoice-review", "path": "../../etc/passwd"}),)),
        Turn(text="No."),
    )

    events = run(hub, TurnRequest(assistant=settings(llm), tools=tools, skills=skills, user_message="Read it"))

    (refused,) = results(events)
    assert not refused.ok and "references/CHECKLIST.md" in refused.model_text
    assert skills_server.reads() == []


def test_the_skills_are_offered_even_when_the_model_searches_the_tools(
    hub: McpHub, llm: ScriptedLLM, skills_server: SkillsServer
) -> None:
    tools, skills = synced(hub, spec_of(skills_server))
    llm.queue(Turn(text="Nothing to do."))

    run(
        hub,
        TurnRequest(assistant=settings(llm, tool_search_threshold=1), tools=tools, skills=skills, user_message="Hi"),
    )

    offered = [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert "search_tools" in offered and "post_invoice" not in offered
    assert {"load_skill", "read_skill_file"} <= set(offered)
