"""Marking phrases in text: `<mark class=…>` around every occurrence, found the way the rules find them.

The rules match after NFKC + casefold (textmatch.normalise), which can change the text's length ("ﬁ" is
"fi", "ẞ" is "ss") and so its positions. A match is mapped back to the characters the reader sees: directly
when normalising keeps every position (the common case, checked first), else cluster by cluster (a base
character with its combining marks, normalised together as whole-text NFKC would).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from sitegen.site.html.escaping import element_escaped
from sitegen.textmatch import SIMPLE_TEXT, normalise

Highlight = tuple[str, str]  # (phrase as written, CSS class: one of the page's own, put in the HTML as it is)
Needle = tuple[str, str]  # (phrase in normal form, CSS class)
Segment = tuple[str, str | None]  # (piece of the text, CSS class or None)

_normalise_cluster = lru_cache(maxsize=1 << 16)(normalise)


def needles(highlights: Sequence[Highlight]) -> tuple[Needle, ...]:
    """Each highlight's phrase in normal form with its CSS class; phrases that normalise to nothing dropped."""
    return tuple((normal, css) for phrase, css in highlights if (normal := normalise(phrase)))


def marked_html(text: str, found: Sequence[Needle]) -> str:
    """Text escaped as element content (site/html/escaping.py) with `<mark class=…>` around the phrases found (needles
    as `needles` makes them; their CSS classes are the page's own)."""
    pieces = segments(text, found)
    if len(pieces) == 1 and pieces[0][1] is None:  # most text has none of the phrases
        return element_escaped(text)
    return "".join(f'<mark class="{css}">{element_escaped(piece)}</mark>' if css else element_escaped(piece) for piece, css in pieces)


def segments(text: str, found: Sequence[Needle]) -> list[Segment]:
    """Text split into (piece, CSS class or None), marking every normalised occurrence of each needle.

    Later needles win where matches overlap; adjacent matches of one class make one piece.
    """
    if not text:
        return []
    whole = normalise(text)
    found = [(needle, css) for needle, css in found if needle in whole]
    if not found:  # the common case: decide on the whole text before mapping it character by character
        return [(text, None)]
    if len(whole) == len(text) and SIMPLE_TEXT.fullmatch(text):  # textmatch.SIMPLE_CHARACTERS: positions kept
        return _painted(text, whole, found)
    if not any(map(unicodedata.combining, text)):  # every character a cluster of its own
        if whole == text or positions_are_kept(text, whole):
            return _painted(text, whole, found)
        parts = list(map(_normalise_cluster, text))
        if set(map(len, parts)) == {1}:
            # Each character normalises to one (fullwidth punctuation, say): positions are kept after all.
            return _painted(text, "".join(parts), found)
    return segments_by_cluster(text, found)


def positions_are_kept(text: str, whole: str) -> bool:
    """True when character i of `text` is character i of its normal form `whole`, for every i.

    So when the text is already NFKC, has no combining marks, and case folding maps each character to
    exactly one (folding is per character, and never maps one to none, so equal lengths mean one each).
    """
    return (
        len(whole) == len(text)
        and unicodedata.is_normalized("NFKC", text)
        and whole == text.casefold()
        and not any(map(unicodedata.combining, text))
    )


def segments_by_cluster(text: str, found: Sequence[Needle]) -> list[Segment]:
    """`segments` the long way, for any text: each cluster normalised on its own, matches mapped back to them."""
    spans = _clusters(text)
    normal_parts = [_normalise_cluster(text[start:end]) for start, end in spans]
    owner: list[int] = []  # normalised char index -> original cluster index
    for cluster_index, piece in enumerate(normal_parts):
        owner.extend([cluster_index] * len(piece))
    normal = "".join(normal_parts)
    labels: list[str | None] = [None] * len(spans)
    for needle, css in found:
        position = normal.find(needle)
        while position != -1:
            for cluster_index in range(owner[position], owner[position + len(needle) - 1] + 1):
                labels[cluster_index] = css
            position = normal.find(needle, position + 1)
    return _runs(text, spans, labels)


def _clusters(text: str) -> list[tuple[int, int]]:
    """Spans of a base character plus its combining marks (normalised together, as whole-text NFKC would)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            spans.append((start, index))
            start = index
    return spans if text else []


def _painted(text: str, normal: str, found: Sequence[Needle]) -> list[Segment]:
    """The segments of `text` when character i of `text` is character i of `normal`."""
    marks = []
    for needle, css in found:
        position = normal.find(needle)
        while position != -1:
            marks.append((position, position + len(needle), css))
            position = normal.find(needle, position + 1)
    marks.sort()
    if all(before[1] <= after[0] for before, after in zip(marks, marks[1:])):
        # No two matches overlap (the common case): cut the text around them.
        pieces: list[Segment] = []
        at = 0
        for start, end, css in marks:
            if start > at:
                pieces.append((text[at:start], None))
            elif pieces and pieces[-1][1] == css:  # adjacent matches of one kind make one mark
                pieces[-1] = (pieces[-1][0] + text[start:end], css)
                at = end
                continue
            pieces.append((text[start:end], css))
            at = end
        if at < len(text):
            pieces.append((text[at:], None))
        return pieces
    # Overlapping matches: paint them in order (the later highlight wins), then cut at their edges.
    labels: list[str | None] = [None] * len(text)
    edges = {0, len(text)}
    for needle, css in found:
        position = normal.find(needle)
        while position != -1:
            end = position + len(needle)
            labels[position:end] = [css] * len(needle)
            edges.update((position, end))
            position = normal.find(needle, position + 1)
    cuts = sorted(edges)
    return _runs(text, list(zip(cuts, cuts[1:])), [labels[start] for start in cuts[:-1]])


def _runs(text: str, spans: Sequence[tuple[int, int]], labels: Sequence[str | None]) -> list[Segment]:
    """Adjacent spans with the same label joined into one (piece, label)."""
    pieces: list[Segment] = []
    run_start, run_label = 0, labels[0]
    for (start, _end), label in zip(spans, labels):
        if label != run_label:
            pieces.append((text[run_start:start], run_label))
            run_start, run_label = start, label
    pieces.append((text[run_start:], run_label))
    return pieces
