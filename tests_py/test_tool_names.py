"""Model-facing tool names: always valid, unique, reversible and independent of the tools' order."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.loop import ToolNameMap, ToolRef, tool_names
from services.loop.tool_names import MODEL_NAME_RE


def _names(refs: list[ToolRef]) -> list[str]:
    name_map = ToolNameMap.build(refs)
    return [name_map.model_name(ref) for ref in refs]


def test_unique_names_are_untouched() -> None:
    refs = [ToolRef("gh", "GitHub", "search_issues"), ToolRef("jira", "Jira", "create-ticket")]
    assert _names(refs) == ["search_issues", "create-ticket"]


def test_invalid_characters_become_underscores() -> None:
    refs = [ToolRef("fs", "Files", "files/read.text"), ToolRef("x", "X", "…"), ToolRef("y", "Y", "")]
    assert _names(refs) == ["files_read_text", "_", "tool"]


def test_same_tool_on_two_servers_gets_both_prefixed() -> None:
    refs = [ToolRef("gh", "github", "search"), ToolRef("jira", "jira", "search"), ToolRef("gh", "github", "list")]
    assert _names(refs) == ["github__search", "jira__search", "list"]


def test_names_equal_after_sanitizing_collide_too() -> None:
    refs = [ToolRef("s1", "One", "a.b"), ToolRef("s2", "Two", "a_b")]
    assert _names(refs) == ["One__a_b", "Two__a_b"]


def test_same_server_name_falls_back_to_a_hash() -> None:
    refs = [ToolRef("k1", "GitHub", "search"), ToolRef("k2", "GitHub", "search")]
    first, second = _names(refs)
    assert first == "GitHub__search_" + hashlib.sha256(b"k1\0search").hexdigest()[:8]
    assert second.startswith("GitHub__search_") and second != first


def test_a_tool_named_like_a_prefixed_name_moves_aside() -> None:
    refs = [ToolRef("a", "a", "x"), ToolRef("b", "b", "x"), ToolRef("c", "c", "a__x")]
    names = _names(refs)
    assert len(set(names)) == 3
    assert names[2] == "c__a__x"


def test_long_name_is_shortened_to_64() -> None:
    long_tool = "fetch_" + "very_long_" * 12
    [name] = _names([ToolRef("srv", "Server", long_tool)])
    digest = hashlib.sha256(f"srv\0{long_tool}".encode()).hexdigest()[:8]
    assert name == f"{long_tool[:55]}_{digest}"
    assert len(name) == 64


def test_long_names_sharing_a_start_stay_apart() -> None:
    stem = "x" * 70
    names = _names([ToolRef("s", "S", stem + "1"), ToolRef("s", "S", stem + "2")])
    assert len(set(names)) == 2 and all(len(name) == 64 for name in names)


def test_resolve_maps_back_and_refuses_invented_names() -> None:
    refs = [ToolRef("gh", "github", "search"), ToolRef("jira", "jira", "search")]
    name_map = ToolNameMap.build(refs)
    assert name_map.resolve("jira__search") == refs[1]
    assert name_map.resolve("search") is None
    assert name_map.items() == [("github__search", refs[0]), ("jira__search", refs[1])]


def test_a_ref_given_twice_is_named_once() -> None:
    ref = ToolRef("gh", "github", "search")
    assert ToolNameMap.build([ref, ref]).items() == [("search", ref)]


def test_one_tool_under_two_server_names_is_refused() -> None:
    with pytest.raises(ValueError, match="two names"):
        ToolNameMap.build([ToolRef("gh", "GitHub", "search"), ToolRef("gh", "GH", "search")])


def test_a_hash_clash_is_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_names, "_digest", lambda ref: "00000000")
    with pytest.raises(ValueError, match="clash even with their hash"):
        ToolNameMap.build([ToolRef("k1", "S", "t"), ToolRef("k2", "S", "t")])


# Any code point, lone surrogates included: tool names come from untrusted JSON.
_ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=130)
# Few distinct values, so that clashes at every level are common.
_CLASHING_TEXT = st.sampled_from(["", "search", "a.b", "a_b", "a/b", "é", "s" * 128, "x" * 60 + ".", "x" * 60 + "/"])
_TEXT = st.one_of(_ANY_TEXT, _CLASHING_TEXT)
_REFS = st.lists(st.builds(ToolRef, server_key=_TEXT, server_name=_TEXT, tool=_TEXT), max_size=25).map(
    # One server name per (key, tool): anything else is refused, as tested above.
    lambda refs: list({(r.server_key, r.tool): r for r in refs}.values())
)


@settings(max_examples=200, deadline=None)
@given(_REFS)
def test_names_are_valid_unique_and_reversible(refs: list[ToolRef]) -> None:
    name_map = ToolNameMap.build(refs)
    names = [name_map.model_name(ref) for ref in refs]
    assert all(MODEL_NAME_RE.fullmatch(name) for name in names)
    assert len(set(names)) == len(names)
    assert all(name_map.resolve(name_map.model_name(ref)) == ref for ref in refs)
    assert [ref for _, ref in name_map.items()] == refs


@settings(max_examples=100, deadline=None)
@given(_REFS, st.randoms(use_true_random=False))
def test_names_depend_only_on_the_set_of_tools(refs: list[ToolRef], rnd) -> None:
    shuffled = list(refs)
    rnd.shuffle(shuffled)
    first = ToolNameMap.build(refs)
    again = ToolNameMap.build(shuffled)
    assert {ref: first.model_name(ref) for ref in refs} == {ref: again.model_name(ref) for ref in refs}
    assert ToolNameMap.build(refs).items() == first.items()
