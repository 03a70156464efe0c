"""Two answers diffed for reading: runs of removed, kept and added text, in words (Latin script) or characters
(CJK), merged into phrases.

The diff follows Google's diff-match-patch in its documented word mode: each token (a word with the spaces
after it, one CJK character, one other sign) is mapped to one character, the character strings are diffed,
`diff_cleanupSemantic` merges the small runs into phrases a reader takes in, and the runs are mapped back. The
diff itself, a shortest edit script (a longest common subsequence, as diff-match-patch's Myers diff finds), is
rapidfuzz's bit-parallel one in C++, a hundred times quicker than diff-match-patch's pure Python; the clean-up
is diff-match-patch's. difflib has no such clean-up, and a hand-written diff would be one more thing to keep right.

Deterministic and bounded: no time limit, so the same two texts always give the same runs; the work is
bounded by size instead. The diff costs about N × M ÷ 64 steps and bits of memory for N and M tokens, so
texts with more than MAX_WORD_TOKENS tokens left after their common start and end are diffed by sentences
instead, then by lines, and with more than MAX_WORD_TOKENS lines not marked at all; texts with too little in
common to be worth it are not marked either (REWRITTEN). docs/comparison.md says what the page shows in each case.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from diff_match_patch import diff_match_patch

REMOVED, SAME, ADDED = -1, 0, 1  # diff-match-patch's operation codes
WORDS, SENTENCES, LINES, REWRITTEN, UNMARKED = "words", "sentences", "lines", "rewritten", "unmarked"
# Tokens on each side at most: the semantic clean-up's pure Python grows with the runs a diff finds, and a
# page shows only so much of an answer anyway (benchmarks/RESULTS.md).
MAX_WORD_TOKENS = 2000
# Less than this share of the tokens in common (2 × common ÷ all): the semantic clean-up would leave one removed
# and one added run anyway, so the diff is not marked (a rewritten answer costs as little as an unchanged one).
MIN_COMMON_SHARE = 1 / 3
SMALL_DIFF = 64  # tokens: so few are always marked, whatever they share

# Han, kana and CJK punctuation/full-width forms are compared character by character (no spaces between words);
# Hangul is written with spaces, so it is compared in words like Latin script.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff"
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"  # combining marks stay on their letter
# CJK first and runs inside the word's repetition: the same tokens as `(?:[^\W{_CJK}]|[{_MARKS}])+\s*|[{_CJK}]…`
# (the alternatives start on different characters), found twice as fast.
_TOKEN = rf"[{_CJK}][{_MARKS}]*\s*|(?:[^\W{_CJK}]+|[{_MARKS}]+)+\s*|\s+|[^\w\s{_CJK}]\s*"
# Where a cut would fall inside a word: a word character (not CJK) on both sides of it.
_WORD_CHAR = rf"(?:[^\W{_CJK}]|[{_MARKS}])"
_WORD_END = rf"{_WORD_CHAR}{{2}}"
_WORD_TAIL = rf"{_WORD_CHAR}+\Z"
_WORD_HEAD = rf"{_WORD_CHAR}+"
_WORD_REACH = 64
_LINE = r"[^\n]*\n|[^\n]+"
_SENTENCE = r"[^\n.!?。！？]*(?:[.!?。！？]+\s*|\n)|[^\n.!?。！？]+"


@cache
def _compiled(source: str) -> re.Pattern[str]:
    """A pattern compiled when first used: the character classes above take milliseconds to compile, and most
    builds diff no answer at all (only a case whose trace changed is diffed)."""
    return re.compile(source)


# Tokens are coded from the private-use planes on: room for 2 × 65,534 (more than 2 × MAX_WORD_TOKENS), and no
# code is a letter, space or line break that the clean-up's scoring of boundaries would read meaning into.
_FIRST_CODE = 0xF0000


class Run(NamedTuple):
    """A stretch of text only in the first text (REMOVED), in both (SAME) or only in the second (ADDED)."""

    op: int
    text: str


class TextDiff(NamedTuple):
    """The runs turning one text into the other, and how finely they were found (WORDS, LINES or UNMARKED)."""

    runs: tuple[Run, ...]
    mode: str

    @property
    def changed(self) -> bool:
        """Whether the texts differ."""
        return any(run.op != SAME for run in self.runs)


def tokens(text: str) -> list[str]:
    """`text` cut into the units it is diffed in: words with their trailing spaces, CJK characters, signs."""
    return _compiled(_TOKEN).findall(text)


def diff_text(before: str, after: str) -> TextDiff:
    """The runs from `before` to `after`, merged into phrases; bounded in work whatever the texts hold."""
    if before == after:
        return TextDiff((Run(SAME, before),) if before else (), WORDS)
    start, end = _common_ends(before, after)
    head, tail = before[:start], before[len(before) - end :] if end else ""
    old, new = before[start : len(before) - end], after[start : len(after) - end]
    middle, mode = [(REMOVED, old), (ADDED, new)], UNMARKED
    # Every finer unit splits lines further, so with too many lines no unit is tried (counted in C, at once).
    if old.count("\n") + new.count("\n") < MAX_WORD_TOKENS:
        for unit_mode, source in ((WORDS, _TOKEN), (SENTENCES, _SENTENCE), (LINES, _LINE)):
            pattern = _compiled(source)
            old_units = _split(pattern, old, MAX_WORD_TOKENS)
            new_units = _split(pattern, new, MAX_WORD_TOKENS - len(old_units)) if old_units is not None else None
            if old_units is None or new_units is None:
                continue
            found = _diff_units(old_units, new_units, len(old_units) + len(new_units) > SMALL_DIFF)
            middle, mode = (middle, REWRITTEN) if found is None else (found, unit_mode)
            break
    return TextDiff(_spaces_kept(_joined([(SAME, head), *middle, (SAME, tail)])), mode)


def _split(pattern: re.Pattern[str], text: str, most: int) -> list[str] | None:
    """`text` cut into the pattern's units; None as soon as there are more than `most` (no long text is cut
    into units it will not be diffed in)."""
    if len(text) <= most:  # no more units than characters: cut at once
        found = pattern.findall(text)
        return found if len(found) <= most else None
    units = []
    for match in pattern.finditer(text):
        if len(units) == most:
            return None
        units.append(match.group())
    return units


def _joined(runs: list[tuple[int, str]]) -> tuple[Run, ...]:
    """The runs without empty ones, neighbours of one kind joined (removed text before added text)."""
    out: list[Run] = []
    for op, text in runs:
        if not text:
            continue
        if out and out[-1].op == op:
            out[-1] = Run(op, out[-1].text + text)
        else:
            out.append(Run(op, text))
    return tuple(out)


def _spaces_kept(runs: tuple[Run, ...]) -> tuple[Run, ...]:
    """A removed and an added run that end in the same spaces give them to the text after, so a replaced
    word is marked without the space it shares ("[connection→connexion] pool")."""
    out = list(runs)
    for index in range(len(out) - 2, -1, -1):
        removed, added = out[index], out[index + 1]
        if removed.op != REMOVED or added.op != ADDED:
            continue
        spaces = len(removed.text) - len(removed.text.rstrip())
        spaces = min(spaces, len(added.text) - len(added.text.rstrip()))
        while spaces and removed.text[-spaces:] != added.text[-spaces:]:
            spaces -= 1
        if not spaces or spaces == len(removed.text) or spaces == len(added.text):
            continue
        kept = removed.text[-spaces:]
        out[index], out[index + 1] = Run(REMOVED, removed.text[:-spaces]), Run(ADDED, added.text[:-spaces])
        if index + 2 < len(out) and out[index + 2].op == SAME:
            out[index + 2] = Run(SAME, kept + out[index + 2].text)
        else:
            out.insert(index + 2, Run(SAME, kept))
    return tuple(out)


def _common_ends(before: str, after: str) -> tuple[int, int]:
    """The lengths of the common start and end, cut back to whole tokens so no word is split across runs."""
    from rapidfuzz.distance import Postfix, Prefix  # imported when first needed, as in _diff_units

    start = _token_start(before, int(Prefix.similarity(before, after)))
    rest_before, rest_after = before[start:], after[start:]
    end = int(Postfix.similarity(rest_before, rest_after))
    end = len(rest_before) - _token_end(rest_before, len(rest_before) - end)
    return start, min(end, len(rest_after))


def _token_start(text: str, position: int) -> int:
    """`position` moved back to the start of the word it falls in (only words longer than _WORD_REACH are cut)."""
    if position == 0 or position >= len(text) or not _compiled(_WORD_END).search(text, max(0, position - 1), position + 1):
        return position
    found = _compiled(_WORD_TAIL).search(text, max(0, position - _WORD_REACH), position)
    return found.start() if found else position


def _token_end(text: str, position: int) -> int:
    """`position` moved on to the end of the word it falls in (the common end then starts on a word)."""
    if position <= 0 or position >= len(text) or not _compiled(_WORD_END).search(text, max(0, position - 1), position + 1):
        return position
    found = _compiled(_WORD_HEAD).match(text, position, position + _WORD_REACH)
    return found.end() if found else position


def _diff_units(old: list[str], new: list[str], check_share: bool) -> list[tuple[int, str]] | None:
    """The runs between two unit lists, each unit mapped to one character and back (diff-match-patch's word mode);
    None when `check_share` and less than MIN_COMMON_SHARE of the units are common."""
    # Imported here: rapidfuzz takes 50–150 ms to import, and most builds diff no answer at all.
    from rapidfuzz.distance import LCSseq

    distinct = dict.fromkeys([*old, *new])
    codes = dict(zip(distinct, map(chr, range(_FIRST_CODE, _FIRST_CODE + len(distinct)))))
    before, after = "".join(map(codes.__getitem__, old)), "".join(map(codes.__getitem__, new))
    opcodes = LCSseq.opcodes(before, after)
    if check_share and old and new:
        common = sum(op.src_end - op.src_start for op in opcodes if op.tag == "equal")  # the LCS's length
        if 2 * common < MIN_COMMON_SHARE * (len(old) + len(new)):
            return None
    diffs: list[tuple[int, str]] = []
    for op in opcodes:
        if op.tag == "equal":
            diffs.append((SAME, before[op.src_start : op.src_end]))
            continue
        if op.src_end > op.src_start:
            diffs.append((REMOVED, before[op.src_start : op.src_end]))
        if op.dest_end > op.dest_start:
            diffs.append((ADDED, after[op.dest_start : op.dest_end]))
    differ = diff_match_patch()
    # Merged as diff-match-patch's own diff leaves its runs (removed before added, neighbours joined), then
    # cleaned up on the tokens, not the text: on the text, its merge step would split words again by pulling
    # the common letters out of a removed and an added word ("conne[ct→x]ion").
    differ.diff_cleanupMerge(diffs)
    differ.diff_cleanupSemantic(diffs)
    units = {code: unit for unit, code in codes.items()}
    return [(op, "".join(map(units.__getitem__, text))) for op, text in diffs]
