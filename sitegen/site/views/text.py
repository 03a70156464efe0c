"""Untrusted text on a page: cut to a byte budget with a note saying so, JSON pretty-printed for reading.

A trace can put megabytes anywhere; these limits keep every page small whatever the trace holds.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sitegen import jsontext
from sitegen.formatting import byte_size
from sitegen.site.render import Bounded

TEXT_LIMIT = 64 * 1024          # an answer, a question, one tool input or output
PAGE_PAYLOAD_BUDGET = 1024 * 1024  # all tool inputs/outputs of one page together
MAX_TOOL_CALLS = 500            # rows of the timeline (and of claim checks); the rest are counted, not shown
CELL_LIMIT = 16 * 1024          # one table cell (a claim's detail, say)
VERIFIER_BUDGET = 256 * 1024    # all claim checks and summary entries of one page together
BUDGET_SPENT = "not shown: this page already shows its limit of trace data; see the raw trace"


class Clipped(NamedTuple):
    """Text cut to a byte budget, with the note saying how much is shown."""

    text: str
    note: str | None
    size: int


def clip(text: str, limit: int) -> Clipped:
    """The first `limit` UTF-8 bytes of `text` (cut on a character boundary) and a note when cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return Clipped(Bounded(text), None, len(data))
    shown = Bounded(data[:limit].decode("utf-8", "ignore"))
    return Clipped(shown, f"showing first {byte_size(limit)} of {byte_size(len(data))}", len(data))


def pretty(value: Any) -> str:
    """A JSON value pretty-printed; a string that holds a JSON object or array is unpacked first."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) < 50 * 1024 * 1024:
            try:
                return jsontext.pretty(json.loads(stripped))
            except (ValueError, RecursionError):
                return value
        return value
    try:
        return jsontext.pretty(value)
    except (ValueError, RecursionError):
        return repr(value)


class TextBlock(NamedTuple):
    """Text shown verbatim (possibly clipped), with its size and note."""

    text: str
    note: str | None
    size: str
    empty: bool


def text_block(text: str, limit: int = TEXT_LIMIT) -> TextBlock:
    """Text shown as it is, cut to `limit` bytes."""
    clipped = clip(text, limit)
    return TextBlock(clipped.text, clipped.note, byte_size(clipped.size), not text.strip())


class Budget:
    """How many bytes of untrusted text a page may still show, so no trace can make a page huge."""

    def __init__(self, total: int) -> None:
        self.left = total

    def clip(self, text: str, limit: int) -> Clipped | None:
        """The text cut to `limit` and to what is left of the budget; None when the budget is spent."""
        allowed = min(limit, self.left)
        if allowed <= 0:
            return None
        clipped = clip(text, allowed)
        self.left -= min(clipped.size, allowed)
        return clipped

    def cell(self, value: Any) -> str:
        """A value for a table cell, cut with a note."""
        if value is None:
            return "—"
        text = value if isinstance(value, str) else pretty(value)
        clipped = self.clip(text, CELL_LIMIT)
        if clipped is None:
            return f"({BUDGET_SPENT})"
        return clipped.text if clipped.note is None else Bounded(f"{clipped.text}… ({clipped.note})")
