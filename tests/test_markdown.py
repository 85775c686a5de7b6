"""Markdown written from text nobody controls: whatever the text holds, the file keeps its
structure, holds no raw control character and no live HTML, and still shows the text (the
escaped characters as themselves, the control characters as ``\\x1b``)."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.written_markdown import PARSER, live_html, raw_unsafe, rendered_text
from workbench.escapes import RAW_IN_JSON, json_dumps, shown
from workbench.markdown import (
    code_span,
    escaped,
    fenced,
    front_matter,
    inline,
    literal,
    prose,
    read_front_matter,
)

HOSTILE = (
    "\x1b[2J",  # clear the screen
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard, ended by BEL
    "\x9b31m",  # C1 CSI: an escape sequence in one character
    "\x7f",
    "\u202etxt.exe",  # right-to-left override: shows 'exe.txt'
    "\u2028",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<iframe src=//x>",
    "<!-- the rest is hidden",
    "<https://example.com/x>",
    "&lt;script&gt;",
    "\\<b>",  # a backslash the data holds, before a tag
)
"""One of each kind of hostile text: terminal escapes, disguising characters, live HTML."""

TRICKY = st.sampled_from(
    [
        *("<", ">", "&", "\\", "`", "*", "_", "#", "-", "[", "]", "(", ")", "!", "|", "~", "="),
        *("1.", "a", "b", " ", "\n", "\r", "\t", ":", "/", "?", ";", "x", "amp", "#x3c"),
        *HOSTILE,
    ]
)
TEXT = st.one_of(st.text(), st.lists(TRICKY, max_size=30).map("".join))
"""Any text, and text built from the characters Markdown, HTML and terminals act on."""


def folded(text: str) -> str:
    """What a one-line writer shows of ``text``: whitespace folded, controls shown."""
    return shown(" ".join(text.split()))


def blocks(markdown: str) -> list[str]:
    """The kinds of block ``markdown`` parses to (paragraphs, headings, lists...)."""
    return [t.type for t in PARSER.parse(markdown) if t.type.endswith("_open") or t.block]


def assert_safe(markdown: str) -> None:
    assert not raw_unsafe(markdown), markdown
    assert not live_html(markdown), markdown


# -- each kind of hostile text ----------------------------------------------------------------


def test_control_characters_are_shown_not_written() -> None:
    assert literal("a\x1b[2Jb") == "a\\\\x1b\\[2Jb"  # the backslash escaped: shows \x1b
    assert inline("a\x1b]52;c;ZXZpbA==\x07 \x9b31m") == "a\\x1b]52;c;ZXZpbA==\\x07 \\x9b31m"
    assert escaped("\u202etxt.exe") == "\\\\u202etxt.exe"
    assert code_span("ls\x1b[2J") == "`ls\\x1b[2J`"
    assert fenced("one\r\ntwo\rthree\tfour\x7f") == "```text\none\ntwo\\x0dthree\tfour\\x7f\n```"


def test_html_from_data_is_shown_as_text() -> None:
    line = inline("run <script>alert(1)</script> then <img src=x onerror=alert(1)>")
    assert line == "run \\<script>alert(1)\\</script> then \\<img src=x onerror=alert(1)>"
    assert rendered_text(line) == "run <script>alert(1)</script> then <img src=x onerror=alert(1)>"
    assert not live_html(line)


def test_placeholders_read_as_placeholders_and_comparisons_stay_as_written() -> None:
    line = inline("go to <X> with <E4>; only if 3 < 4 & 5 > 2")
    assert line == "go to \\<X> with \\<E4>; only if 3 < 4 & 5 > 2"
    assert rendered_text(line) == "go to <X> with <E4>; only if 3 < 4 & 5 > 2"


def test_an_entity_shows_as_written_and_a_backslash_before_a_tag_cannot_unescape_it() -> None:
    assert rendered_text(inline("&lt;script&gt; &#x3c;b&#62;")) == "&lt;script&gt; &#x3c;b&#62;"
    for data in ("\\<b>x", "\\\\<b>x", "\\\\\\<b>x"):
        assert_safe(inline(data))


def test_a_comment_opener_hides_nothing_after_it() -> None:
    markdown = inline("<!-- the rest is hidden") + "\n\n# Still a heading\n"
    assert blocks(markdown).count("heading_open") == 1 and not live_html(markdown)


def test_every_hostile_text_is_inert_in_every_writer() -> None:
    for text in HOSTILE:
        for writer in (literal, escaped, inline, prose, code_span):
            assert_safe(f"x {writer(text)}")
        assert_safe(fenced(text))
        assert_safe(front_matter({"value": text}))


# -- whatever the text ------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_a_literal_heading_is_one_heading_showing_the_text(text: str) -> None:
    markdown = f"# {literal(text)}"
    assert_safe(markdown)
    assert blocks(markdown) == ["heading_open", "inline", "heading_close"]
    assert rendered_text(markdown) == folded(text)


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_an_escaped_line_renders_as_the_text(text: str) -> None:
    markdown = f"x {escaped(text)}"
    assert_safe(markdown)
    assert blocks(markdown) == ["paragraph_open", "inline", "paragraph_close"]
    assert rendered_text(markdown) == f"x {folded(text)}".rstrip()


PREFIXES = {
    "": (),
    "**Owns.** ": (),
    "- When: ": ("bullet_list", "list_item"),
    "- ": ("bullet_list", "list_item"),
    "1. ": ("ordered_list", "list_item"),
    "> ": ("blockquote",),
}
"""What the exports write before an inline line, with the blocks that prefix opens."""


@settings(max_examples=300, deadline=None)
@given(text=TEXT, prefix=st.sampled_from(sorted(PREFIXES)))
@example(text="--", prefix="- ")  # ("- --" is a thematic break; hypothesis found it in CI)
def test_an_inline_line_starts_no_block_and_holds_no_html(text: str, prefix: str) -> None:
    line = inline(text)
    assert "\n" not in line
    markdown = prefix + line
    assert_safe(markdown)
    allowed = {"paragraph", "inline", *PREFIXES[prefix]}
    found = {k.removesuffix("_open").removesuffix("_close") for k in blocks(markdown)}
    assert found <= allowed, (markdown, found)


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_prose_keeps_its_lines_in_one_paragraph(text: str) -> None:
    markdown = prose(text)
    assert_safe(markdown)
    lines = [folded(line) for line in text.strip().splitlines() if line.strip()]
    if not lines:
        assert markdown == ""
        return
    assert blocks(markdown) == ["paragraph_open", "inline", "paragraph_close"]
    assert rendered_text(markdown) == "".join(lines)


@settings(max_examples=300, deadline=None)
@given(text=TEXT.filter(lambda t: t.strip()))
def test_a_code_span_holds_the_text_on_one_line(text: str) -> None:
    markdown = f"x {code_span(text)}"
    assert_safe(markdown)
    (paragraph,) = [t for t in PARSER.parse(markdown) if t.type == "inline"]
    assert [c.content for c in paragraph.children if c.type == "code_inline"] == [folded(text)]


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_a_fenced_block_holds_the_text_and_closes_where_it_should(text: str) -> None:
    markdown = fenced(text) + "\n\n# After\n"
    assert_safe(markdown)
    (fence,) = [t for t in PARSER.parse(markdown) if t.type == "fence"]
    assert fence.content == shown(text.replace("\r\n", "\n")).rstrip() + "\n"
    assert blocks(markdown)[-3:] == ["heading_open", "inline", "heading_close"]


VALUES = st.one_of(TEXT, st.lists(TEXT, max_size=4), st.integers(), st.none(), st.booleans())


@settings(max_examples=200, deadline=None)
@given(values=st.dictionaries(st.from_regex(r"[a-z_]{1,10}", fullmatch=True), VALUES))
def test_front_matter_reads_back_the_same_values_and_holds_no_raw_control(values: dict) -> None:
    block = front_matter(values)
    assert not raw_unsafe(block)
    assert read_front_matter(block + "# Body\n") == values


@settings(max_examples=300, deadline=None)
@given(value=st.recursive(VALUES, lambda inner: st.dictionaries(TEXT, inner, max_size=3)))
def test_json_dumps_escapes_raw_controls_and_reads_back_the_same(value: object) -> None:
    text, plain = json_dumps(value), json.dumps(value, ensure_ascii=False)
    assert not RAW_IN_JSON.search(text) and not raw_unsafe(text)
    assert json.loads(text) == value
    if not RAW_IN_JSON.search(plain):
        assert text == plain
