"""What a Markdown file written from text nobody controls must not hold, read the way a
renderer reads it: live HTML (CommonMark with HTML allowed, as GitHub parses it before its
sanitizer) and raw control characters or characters that disguise text."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

from workbench.escapes import UNSAFE

PARSER = MarkdownIt("commonmark", {"html": True})


def _tokens(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        yield from _tokens(token.children or [])


def live_html(markdown: str) -> list[str]:
    """The raw HTML a renderer would pass through (inline tags, HTML blocks, autolinks)."""
    return [
        token.content or token.markup
        for token in _tokens(PARSER.parse(markdown))
        if token.type in ("html_inline", "html_block") or token.markup == "autolink"
    ]


def raw_unsafe(text: str) -> list[str]:
    """The control characters and disguising characters ``text`` holds raw."""
    return UNSAFE.findall(text)


def rendered_text(markdown: str) -> str:
    """The text a reader sees in the rendered ``markdown`` (text and code, in order)."""
    kinds = ("text", "code_inline", "fence", "code_block")
    return "".join(t.content for t in _tokens(PARSER.parse(markdown)) if t.type in kinds)
