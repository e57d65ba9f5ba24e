"""The assistant's Markdown answer as HTML for Discuss, where messages are HTML.

markdown-it-py with CommonMark, close to what the chat widget renders (static/src/chat/logic/markdown.js):
raw HTML in the answer is escaped, not passed through; links keep http(s) and mailto targets only;
images are not rendered at all, since every reader's browser would fetch the URL, which text a tool
slipped into the answer could use to send data out. The caller still runs Odoo's HTML sanitizer
over the result before posting it.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt

LINK_SCHEMES = ("http://", "https://", "mailto:")


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).disable("image")
    md.validateLink = lambda url: url.strip().lower().startswith(LINK_SCHEMES)
    return md


def markdown_to_html(text: str) -> str:
    return _renderer().render(text)
