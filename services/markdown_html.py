"""The assistant's Markdown answer as HTML for Discuss, where messages are HTML.

markdown-it-py with CommonMark and GitHub's pipe tables, close to what the chat widget renders
(static/src/chat/logic/markdown.js): raw HTML in the answer is escaped, not passed through; links keep
http(s) and mailto targets, and the web client's record links `/odoo/<model>/<id>`, which carry the
record as Discuss marks its own (`data-oe-model`, `data-oe-id`) so a click opens the record's form;
images are not rendered at all, since every reader's browser would fetch the URL, which text a tool
slipped into the answer could use to send data out. The caller still runs Odoo's HTML sanitizer
over the result before posting it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

LINK_SCHEMES = ("http://", "https://", "mailto:")
# the same rule as recordLink() in static/src/logic/markdown.js: a model's technical name, an id
RECORD_URL = re.compile(r"/odoo/([a-z][a-z0-9_]{0,63}(?:\.[a-z0-9_]{1,64}){0,8})/([1-9][0-9]{0,9})")


def record_link(url: str) -> tuple[str, int] | None:
    """(model, id) of a link to a record's form in the web client, else None."""
    found = RECORD_URL.fullmatch(url)
    return (found[1], int(found[2])) if found else None


def _valid_link(url: str) -> bool:
    return url.strip().lower().startswith(LINK_SCHEMES) or record_link(url) is not None


def _link_open(renderer: RendererHTML, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[index]
    record = record_link(str(token.attrGet("href") or ""))
    if record is not None:
        token.attrSet("data-oe-model", record[0])
        token.attrSet("data-oe-id", str(record[1]))
    return renderer.renderToken(tokens, index, options, env)


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table").disable("image")
    md.validateLink = _valid_link
    md.add_render_rule("link_open", _link_open)
    return md


def markdown_to_html(text: str) -> str:
    return _renderer().render(text)
