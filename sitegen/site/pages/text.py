"""Untrusted text on a page: cut to a byte budget with a note saying so, JSON pretty-printed for reading.

A trace can put megabytes anywhere; these limits keep every page small whatever the trace holds.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import orjson
from markupsafe import Markup

from sitegen.formatting import byte_size
from sitegen.plumbing import jsontext
from sitegen.site.html.escaping import element_escaped
from sitegen.site.html.render import Bounded

TEXT_LIMIT = 64 * 1024          # an answer, a question, one tool input or output
PAGE_PAYLOAD_BUDGET = 1024 * 1024  # all tool inputs/outputs of one page together
MAX_TOOL_CALLS = 500            # rows of the timeline (and of claim checks); the rest are counted, not shown
CELL_LIMIT = 16 * 1024          # one table cell (a claim's detail, say)
VERIFIER_BUDGET = 256 * 1024    # all claim checks and summary entries of one page together
READABLE_WIDTH = 80             # the characters a line of JSON on a page holds before it is broken
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
    """A JSON value as `readable` writes it; a string that holds a JSON object or array is unpacked first."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) < 50 * 1024 * 1024:
            try:
                return readable(json.loads(stripped))
            except (ValueError, RecursionError):
                return value
        return value
    try:
        return readable(value)
    except (ValueError, RecursionError):
        return repr(value)


def readable(value: Any, width: int = READABLE_WIDTH) -> str:
    """JSON for reading in little room: an object or array on one line when it fits in `width` characters,
    else one member a line, two spaces in. A value too big to show whole (over TEXT_LIMIT) is indented as
    jsontext.pretty writes it, which is quicker."""
    compact = _compact(value)
    if len(compact) > TEXT_LIMIT:
        return jsontext.pretty(value)
    if not isinstance(value, (dict, list)):
        return compact
    return "\n".join(_readable_lines(value, compact, 0, 0, width))


def _readable_lines(value: dict[str, Any] | list[Any], compact: str, indent: int, column: int, width: int) -> list[str]:
    """A container's lines when its first line starts at `column` and its members are `indent` + 2 spaces in:
    the first line without its indent (it follows a key or starts a member's line), the others with theirs."""
    # The compact form (orjson, quick) is never longer than the one-line form with its spaces: only a container
    # that may fit is written again with them, so a payload costs a few C calls and a loop per line.
    if column + len(compact) <= width:
        line = _one_line(value)
        if column + len(line) <= width:
            return [line]
    if not value:
        return [compact]
    is_dict = isinstance(value, dict)
    if not _holds_containers(value.values() if is_dict else value):
        # Members that are all scalars: one a line is what orjson's indenting writes (JSON text holds no raw
        # newline, so every line break is one of its own), moved to this indent.
        try:
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
        except TypeError:
            text = json.dumps(value, ensure_ascii=False, indent=2)
        return (text.replace("\n", "\n" + " " * indent) if indent else text).split("\n")
    pad = " " * (indent + 2)
    out = ["{" if is_dict else "["]
    last = len(value) - 1
    for number, (key, item) in enumerate(value.items() if is_dict else enumerate(value)):
        start = (pad + _compact(key) + ": ") if is_dict else pad  # key: a list's index, not shown
        comma = "," if number < last else ""
        shown = _compact(item)
        if not isinstance(item, (dict, list)):
            out.append(start + shown + comma)
            continue
        lines = _readable_lines(item, shown, indent + 2, len(start), width)
        if len(lines) == 1:
            out.append(start + lines[0] + comma)
        else:
            out.append(start + lines[0])
            out.extend(lines[1:-1])
            out.append(lines[-1] + comma)
    out.append(" " * indent + ("}" if is_dict else "]"))
    return out


def _holds_containers(members: Any) -> bool:
    """Whether some member is a non-empty object or array (a loop: quicker than any() over a generator here)."""
    for member in members:
        if member and isinstance(member, (dict, list)):
            return True
    return False


# json.dumps(value, ensure_ascii=False) without making an encoder for every call.
_one_line = json.JSONEncoder(ensure_ascii=False).encode


def _compact(value: Any) -> str:
    """Compact JSON (no spaces), as orjson writes it, else json."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:  # an integer beyond 64 bits, a lone surrogate: json writes them
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def element_text(text: str) -> Markup:
    """Text as an element's content (never an attribute's), as site/html/escaping.py escapes it: quotes as they are,
    which in JSON are a fifth of the text and five bytes each as entities."""
    return Markup(element_escaped(text))


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
