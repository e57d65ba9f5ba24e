"""What an MCP App tells the model: its content as text (other blocks named, structured content as
JSON), malformed contexts refused saying what to send, and the system prompt's section of them."""

from __future__ import annotations

import pytest

from services.apps import AppContext, context_text, prompt_section
from services.apps.context import PROMPT_INTRO


def test_an_apps_context_is_its_text_with_other_blocks_named_and_structured_content_as_json() -> None:
    content = [{"type": "text", "text": "Picked: ship it"}, {"type": "image", "data": "iVBO", "mimeType": "image/png"}]
    assert context_text(content, {"picked": "ship it", "board": "alpha"}) == (
        'Picked: ship it\n[image content not included]\n{"board": "alpha", "picked": "ship it"}'
    )
    assert context_text(None, None) == ""
    assert context_text([], {}) == ""


@pytest.mark.parametrize(
    ("content", "structured", "problem"),
    [
        ("Picked", None, "content must be a list of content blocks"),
        ([], ["picked"], "structuredContent must be an object"),
        (["Picked"], None, "each content block must be an object with a type"),
        ([{"text": "Picked"}], None, "each content block must be an object with a type"),
        ([{"type": "text", "text": 5}], None, "a text block must have a text"),
    ],
)
def test_a_malformed_context_says_what_to_send(content: object, structured: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        context_text(content, structured)


def test_the_prompt_gives_each_apps_context_under_its_title() -> None:
    contexts = [AppContext(title="Task board", text="Picked: ship it"), AppContext(title="Clock", text="")]
    assert prompt_section(contexts) == f"{PROMPT_INTRO}\n\n[App: Task board]\nPicked: ship it"
    assert prompt_section([]) == ""
