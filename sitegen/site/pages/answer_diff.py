"""Two answers as the comparison shows them: each side's text as escaped HTML with its removed (`<del>`) or added
(`<ins>`) runs, the expected keywords and forbidden phrases marked (`<mark>`, as the Answer section marks them),
and long unchanged stretches folded into `<details>`.

The markup is made here from escaped pieces only: a piece of an answer is always text, never HTML.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.site.html.escaping import element_escaped
from sitegen.site.html.highlight import Highlight, needles, segments
from sitegen.site.html.phrase_diff import REMOVED, SAME, Run

FOLD_AT = 600  # characters: an unchanged stretch longer than this is folded …
CONTEXT = 160  # … but for this many characters next to each change
_CUT_SLACK = 40  # how far past CONTEXT a fold may start to fall on a space rather than inside a word


class Chunk(NamedTuple):
    """A stretch of one side's text as HTML; `folded` is its summary when it is an unchanged stretch folded away."""

    html: Markup
    folded: str | None = None


class SideSpan(NamedTuple):
    """A stretch of one side: [start, end) in that side's text, changed (removed or added) or not."""

    start: int
    end: int
    changed: bool


def side_spans(runs: Sequence[Run], side: int) -> list[SideSpan]:
    """The stretches of one side's text (side REMOVED: the baseline's, ADDED: the current one's)."""
    spans, at = [], 0
    for run in runs:
        if run.op in (SAME, side):
            spans.append(SideSpan(at, at + len(run.text), run.op == side))
            at += len(run.text)
    return spans


def side_text(runs: Sequence[Run], side: int) -> str:
    """One side's whole text."""
    return "".join(run.text for run in runs if run.op in (SAME, side))


def cut_spans(spans: Sequence[SideSpan], end: int) -> list[SideSpan]:
    """The spans as far as the first `end` characters of their text reach (what a page's budget shows)."""
    return [SideSpan(span.start, min(span.end, end), span.changed) for span in spans if span.start < end]


def side_chunks(text: str, spans: Sequence[SideSpan], side: int, highlights: Sequence[Highlight]) -> tuple[Chunk, ...]:
    """One side of the diff (its text and its spans, as far as they are shown) as chunks of HTML: its changes in
    `<del>` (side REMOVED) or `<ins>` (side ADDED), phrases marked, unchanged stretches longer than FOLD_AT folded
    but for CONTEXT characters by each change."""
    marks = _Marks(text, highlights)
    tag = "del" if side == REMOVED else "ins"
    chunks: list[Chunk] = []
    pending: list[str] = []
    for index, span in enumerate(spans):
        if span.changed:
            pending.append(f"<{tag}>{marks.html(span.start, span.end)}</{tag}>")
            continue
        keep_head = CONTEXT if index > 0 else 0  # context after the change before it
        keep_tail = CONTEXT if index + 1 < len(spans) else 0  # context before the change after it
        if span.end - span.start <= max(FOLD_AT, keep_head + keep_tail + CONTEXT):
            pending.append(marks.html(span.start, span.end))
            continue
        fold_start = _cut(text, span.start + keep_head, forward=True) if keep_head else span.start
        fold_end = _cut(text, span.end - keep_tail, forward=False) if keep_tail else span.end
        pending.append(marks.html(span.start, fold_start))
        if any(pending):
            chunks.append(Chunk(Markup("".join(pending))))
        summary = f"{fmt.count(fold_end - fold_start)} unchanged characters"
        chunks.append(Chunk(Markup(marks.html(fold_start, fold_end)), summary))
        pending = [marks.html(fold_end, span.end)]
    if any(pending):
        chunks.append(Chunk(Markup("".join(pending))))
    return tuple(chunks)


def _cut(text: str, position: int, *, forward: bool) -> int:
    """`position` moved to the nearest space within _CUT_SLACK (away from the change), so a fold does not
    start or end inside a word; CJK text has no spaces and is cut where it is."""
    window = text[position : position + _CUT_SLACK] if forward else text[max(0, position - _CUT_SLACK) : position]
    spaces = [i for i, ch in enumerate(window) if ch.isspace()]
    if not spaces:
        return position
    return position + spaces[0] + 1 if forward else position - len(window) + spaces[-1] + 1


def _as_it_is(text: str) -> str:
    return text


class _Marks:
    """One side's text with its phrases found once, giving the escaped HTML of any stretch of it."""

    def __init__(self, text: str, highlights: Sequence[Highlight]) -> None:
        self.text = text
        # Most answers hold none of `&`, `<` and `>`: their pieces are then their own HTML (one scan here instead
        # of three per piece).
        plain = "&" not in text and "<" not in text and ">" not in text
        self.escaped: Callable[[str], str] = _as_it_is if plain else element_escaped
        found = needles(highlights)
        self.starts: list[int] = []
        self.pieces: list[tuple[int, int, str]] = []  # only the marked pieces: (start, end, css)
        at = 0
        for piece, css in segments(text, found) if found else ():
            if css is not None:
                self.pieces.append((at, at + len(piece), css))
                self.starts.append(at)
            at += len(piece)

    def html(self, start: int, end: int) -> str:
        """The escaped text of [start, end) with the marked phrases in it in `<mark class=…>` (HTML, as a str:
        the chunks it goes into are made Markup once; every piece is an element's content, so `&`, `<` and `>`
        are what is escaped; the CSS classes are the page's own, as highlight.marked_html takes them)."""
        if start >= end:
            return ""
        text, escaped = self.text, self.escaped
        if not self.pieces:
            return escaped(text[start:end])
        out, at = [], start
        first = max(0, bisect_right(self.starts, start) - 1)
        for mark_start, mark_end, css in self.pieces[first:]:
            if mark_start >= end:
                break
            if mark_end <= at:
                continue
            lo, hi = max(mark_start, at), min(mark_end, end)
            if lo > at:
                out.append(escaped(text[at:lo]))
            out.append(f'<mark class="{css}">{escaped(text[lo:hi])}</mark>')
            at = hi
        if at < end:
            out.append(escaped(text[at:end]))
        return "".join(out)
