"""Escaping text for GitHub-flavoured Markdown so data can never break a table or inject markup."""

from __future__ import annotations

import re

# Characters that start emphasis, code, links, strikethrough or table cells anywhere in a line.
_MD_PUNCT = re.compile(r"([\\`*_\[\]~|])")
# Characters that only mean something at the start of a line: lists, headings, ordered lists.
_LEADING_BLOCK = re.compile(r"^(\s*)([-+#=])")
_LEADING_ORDINAL = re.compile(r"^(\s*\d+)([.)])")
_NEWLINES = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
# Anything _escape changes inside a line (its newlines are not printable): a cell without any is itself.
_CHANGED_IN_LINE = re.compile(r"[\\`*_\[\]~|&<>]")


def _escape(text: str, *, line_start: bool) -> str:
    text = _NEWLINES.sub(" ", text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() or ch == " " else " " for ch in text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_PUNCT.sub(r"\\\1", text)
    if line_start:
        # "- x" or "1. x" at the start of a list item would open a nested list.
        text = _LEADING_BLOCK.sub(r"\1\\\2", text)
        text = _LEADING_ORDINAL.sub(r"\1\\\2", text)
    return text


def escape_inline(text: str) -> str:
    """Escape text for a Markdown paragraph, heading or list item: no HTML, no links, no emphasis, no nesting."""
    return _escape(text, line_start=True)


def escape_cell(text: str) -> str:
    """Escape text for one table cell: single line, `|` escaped, never empty-looking."""
    plain = text.isprintable() and not _CHANGED_IN_LINE.search(text)  # most cells (a diff.md has thousands)
    escaped = (text if plain else _escape(text, line_start=False)).strip()
    return escaped if escaped else " "


def table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A GFM table from already-escaped cells."""
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
