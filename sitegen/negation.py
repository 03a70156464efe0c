"""Negated keywords (eval/README.md, "Negated keywords"): whether an answer affirms or denies each expected keyword,
NegEx-style (Chapman et al., 2001).

A *trigger* ("并非", "没有", "not", "ruled out" …) negates a keyword that follows it in the same clause (clauses end
at line breaks and at `。！？；，.!?;,`) within a window — characters (each Latin word one) after a CJK trigger,
words after a Latin one — unless a *terminator* ("但", "而是", "but", "instead" …) comes between them. A
*pseudo-trigger* ("无法", "not only" …) contains a trigger and is not one. The characters of an expected keyword's
own occurrence are never a trigger nor a terminator ("未发现证书问题" affirms both "未发现" and "证书").

Matching is the rules' (textmatch.normalise: NFKC + casefold); positions are in the normalised answer. The work is
done only where a keyword occurs: its clause, up to the occurrence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from sitegen.defaults import (
    NEGATION_CJK_WINDOW,
    NEGATION_LATIN_WINDOW,
    NEGATION_PSEUDO_TRIGGERS,
    NEGATION_TERMINATORS,
    NEGATION_TRIGGERS,
    Choice,
)
from sitegen.textmatch import SIMPLE_TEXT, normalise


class Polarity(Choice):
    """How an answer mentions an expected keyword (a result's `keywordPolarity`), and whether that counts toward
    keyword_coverage: every occurrence affirmed, every one denied, some of each, or none at all."""

    # value        counts toward keyword_coverage
    AFFIRMED = "affirmed", True
    NEGATED = "negated", False
    BOTH = "both", True
    ABSENT = "absent", False

    counts: bool


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and ideographs, not CJK punctuation
_UNITS = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")  # a CJK character, or a Latin word (digits and letters)
# Clause ends, in normalised text (NFKC makes "，" ",", "；" ";" …): a full stop or comma that is not inside a word
# or a number ("3.5s", "1,000") nor part of an ellipsis ("..." is what NFKC makes of "…").
_CLAUSE_END = re.compile(r"\n|\r|。|[!?;]|(?<![.])[.,](?![.0-9a-z_])")
_LEADING_MARKUP = re.compile(r"^[\W_]+")  # Markdown's `**`, `- `, `> ` before a quote's first word
_QUOTE_BEFORE, _QUOTE_AFTER = 4, 2  # units of context a quote keeps before the trigger and after the keyword


_CJK_CHAR = re.compile(f"[{_CJK}]")


def _is_cjk(char: str) -> bool:
    return _CJK_CHAR.match(char) is not None


def _pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for the phrases (normalised, longest first); a Latin edge must be a word's edge."""
    parts = []
    for phrase in sorted({normalise(p) for p in phrases if normalise(p)}, key=len, reverse=True):
        clitic = phrase[:2] in ("n'", "n’")  # "n't" ends a word ("wasn't"): it has no left edge of its own
        left = r"(?<![0-9a-z_])" if phrase[0].isascii() and phrase[0].isalnum() and not clitic else ""
        right = r"(?![0-9a-z_])" if phrase[-1].isascii() and phrase[-1].isalnum() else ""
        parts.append(left + re.escape(phrase) + right)
    return re.compile("|".join(parts)) if parts else None


@dataclass(frozen=True)
class Lexicon:
    """The lists and windows a suite detects negation with (`[answer]` of eval/sitegen.toml); `enabled` False: every
    keyword found is affirmed."""

    triggers: tuple[str, ...] = NEGATION_TRIGGERS
    pseudo_triggers: tuple[str, ...] = NEGATION_PSEUDO_TRIGGERS
    terminators: tuple[str, ...] = NEGATION_TERMINATORS
    cjk_window: int = NEGATION_CJK_WINDOW
    latin_window: int = NEGATION_LATIN_WINDOW
    enabled: bool = True


DEFAULT_LEXICON = Lexicon()


@lru_cache(maxsize=16)
def _patterns(lexicon: Lexicon) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None, re.Pattern[str] | None]:
    return _pattern(lexicon.triggers), _pattern(lexicon.pseudo_triggers), _pattern(lexicon.terminators)


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a keyword in the normalised answer, and the trigger that denies it (None: affirmed)."""

    start: int
    end: int
    trigger: str | None = None
    trigger_start: int = -1
    quote: str = ""  # the denial as the answer writes it, from a little before the trigger to the keyword's end
    denied: str = ""  # the answer's text from the trigger to the keyword's end, as a page marks it


@dataclass(frozen=True)
class Reading:
    """How the answer mentions one expected keyword: its polarity and each occurrence."""

    keyword: str
    polarity: Polarity
    occurrences: tuple[Occurrence, ...] = ()

    @property
    def denial(self) -> Occurrence | None:
        """The first negated occurrence (None: none is)."""
        return next((o for o in self.occurrences if o.trigger is not None), None)


def _spans(normal: str, needle: str) -> list[tuple[int, int]]:
    spans, at = [], normal.find(needle)
    while at != -1:
        spans.append((at, at + len(needle)))
        at = normal.find(needle, at + 1)
    return spans


def _clause_start(normal: str, position: int, ends: list[int]) -> int:
    start = 0
    for end in ends:
        if end >= position:
            break
        start = end + 1
    return start


def _clause_ends(normal: str) -> list[int]:
    return [match.start() for match in _CLAUSE_END.finditer(normal)]


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def _quote(normal: str, shown: str, clause: int, trigger_start: int, end: int) -> str:
    """The denial as a reader recognises it: up to a few units before the trigger, to the keyword and, in CJK text,
    the two characters that run on from it ("根因并非支付渠道"); as written when `shown` (the answer) keeps the
    normal form's positions, else in normal form."""
    units = list(_UNITS.finditer(normal, clause, trigger_start))
    start = units[-_QUOTE_BEFORE].start() if len(units) > _QUOTE_BEFORE else clause
    stop = end
    while stop < len(normal) and stop - end < _QUOTE_AFTER and _is_cjk(normal[stop]):
        stop += 1
    return _LEADING_MARKUP.sub("", shown[start:stop]).strip()


def _denied_by(
    normal: str, start: int, clause: int, lexicon: Lexicon, keyword_spans: list[tuple[int, int]]
) -> tuple[str, int] | None:
    """The nearest trigger denying the keyword at `start` (its text and position), else None."""
    triggers, pseudo, terminators = _patterns(lexicon)
    if triggers is None:
        return None
    segment = normal[clause:start]
    found = [m for m in triggers.finditer(segment) if not _overlaps(clause + m.start(), clause + m.end(), keyword_spans)]
    if not found:
        return None
    if pseudo is not None:
        # A pseudo-trigger may run on past the keyword's start ("不仅" before "仅…"): look at the whole clause.
        fakes = [(clause + m.start(), clause + m.end()) for m in pseudo.finditer(normal, clause, start + 16)]
        found = [m for m in found if not _overlaps(clause + m.start(), clause + m.end(), fakes)]
    for match in reversed(found):
        gap = segment[match.end() :]
        window = lexicon.cjk_window if _is_cjk(match.group()[0]) else lexicon.latin_window
        if len(_UNITS.findall(gap)) > window:
            return None  # nearer triggers were checked first; farther ones reach no further
        if terminators is not None and any(
            not _overlaps(clause + match.end() + m.start(), clause + match.end() + m.end(), keyword_spans)
            for m in terminators.finditer(gap)
        ):
            return None
        return match.group(), clause + match.start()
    return None


@lru_cache(maxsize=1024)
def read_keywords(answer: str, keywords: tuple[str, ...], lexicon: Lexicon = DEFAULT_LEXICON) -> tuple[Reading, ...]:
    """How `answer` mentions each keyword (its polarity and occurrences), in the keywords' order."""
    normal = normalise(answer)
    shown = answer if len(answer) == len(normal) and SIMPLE_TEXT.fullmatch(answer) else normal
    needles = [normalise(keyword) for keyword in keywords]
    found = {needle: _spans(normal, needle) for needle in needles if needle and needle in normal}
    if not found:
        return tuple(Reading(keyword, Polarity.ABSENT) for keyword in keywords)
    keyword_spans = [span for spans in found.values() for span in spans]
    ends = _clause_ends(normal) if lexicon.enabled else []
    readings = []
    for keyword, needle in zip(keywords, needles):
        spans = found.get(needle)
        if not spans:
            readings.append(Reading(keyword, Polarity.ABSENT))
            continue
        occurrences = []
        for start, end in spans:
            denied = None
            if lexicon.enabled:
                clause = _clause_start(normal, start, ends)
                denied = _denied_by(normal, start, clause, lexicon, keyword_spans)
            if denied is None:
                occurrences.append(Occurrence(start, end))
            else:
                trigger, at = denied
                quote = _quote(normal, shown, clause, at, end)
                occurrences.append(Occurrence(start, end, trigger, at, quote, shown[at:end]))
        negated = sum(1 for o in occurrences if o.trigger is not None)
        polarity = Polarity.AFFIRMED if not negated else Polarity.NEGATED if negated == len(occurrences) else Polarity.BOTH
        readings.append(Reading(keyword, polarity, tuple(occurrences)))
    return tuple(readings)
