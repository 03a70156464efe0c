"""Two answers diffed for reading: runs of removed, kept and added text, in words (Latin script) or characters
(CJK), merged into phrases.

The diff is Google's diff-match-patch in its documented word mode: each token (a word with the spaces after
it, one CJK character, one other sign) is mapped to one character, the character strings are diffed,
`diff_cleanupSemantic` merges the small runs into phrases a reader takes in, and the runs are mapped back. difflib has no such
clean-up, and a hand-written diff would be one more thing to keep right.

Deterministic and bounded: diff-match-patch's time-based `Diff_Timeout` is off (0), so the same two texts
always give the same runs; instead the work is bounded by size. Myers' diff costs about D² steps for D
differing tokens (D at most the tokens of both texts), so texts with more than MAX_WORD_TOKENS tokens left
after their common start and end are diffed by sentences instead, then by lines, and with more than
MAX_WORD_TOKENS lines not marked at all; texts with too little in common to be worth it are not diffed either (REWRITTEN).
docs/comparison.md says what the page shows in each case.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import NamedTuple

from diff_match_patch import diff_match_patch

REMOVED, SAME, ADDED = -1, 0, 1  # diff-match-patch's operation codes
WORDS, SENTENCES, LINES, REWRITTEN, UNMARKED = "words", "sentences", "lines", "rewritten", "unmarked"
# About 2,000² steps: about two seconds of pure Python in the worst case (two texts with nothing in common,
# benchmarks/RESULTS.md); an edited answer of any length costs far less, as only its edits count.
MAX_WORD_TOKENS = 2000
# At most this share of the tokens can be common: the semantic clean-up would leave one removed and one added
# run anyway, so the diff is not run (a rewritten answer costs as little as an unchanged one).
MIN_COMMON_SHARE = 1 / 3
SMALL_DIFF = 64  # tokens: fewer cost next to nothing, so they are always diffed

# Han, kana and CJK punctuation/full-width forms are compared character by character (no spaces between words);
# Hangul is written with spaces, so it is compared in words like Latin script.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff"
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"  # combining marks stay on their letter
_TOKEN = rf"(?:[^\W{_CJK}]|[{_MARKS}])+\s*|[{_CJK}][{_MARKS}]*\s*|\s+|[^\w\s{_CJK}]\s*"
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
            small = len(old_units) + len(new_units) <= SMALL_DIFF
            if not small and _common_share(old_units, new_units) < MIN_COMMON_SHARE:
                mode = REWRITTEN
            elif unit_mode == WORDS and not small:
                middle, mode = _sentences_then_words(old, new), WORDS
            else:
                middle, mode = _diff_units(old_units, new_units), unit_mode
            break
    return TextDiff(_spaces_kept(_joined([(SAME, head), *middle, (SAME, tail)])), mode)


def _sentences_then_words(old: str, new: str) -> list[tuple[int, str]]:
    """Sentences diffed first, then the words of each pair of removed and added sentences (diff-match-patch's
    line-mode speed-up, with sentences for lines): an edit costs about the square of its own sentences rather
    than of the stretch between the first and the last edit."""
    coarse = _diff_units(_compiled(_SENTENCE).findall(old), _compiled(_SENTENCE).findall(new))
    out: list[tuple[int, str]] = []
    removed: list[str] = []
    added: list[str] = []
    for op, text in [*coarse, (SAME, "")]:
        if op == REMOVED:
            removed.append(text)
        elif op == ADDED:
            added.append(text)
        else:
            if removed and added:
                out.extend(_diff_units(tokens("".join(removed)), tokens("".join(added))))
            else:
                out.extend([(REMOVED, "".join(removed)), (ADDED, "".join(added))])
            removed, added = [], []
            out.append((SAME, text))
    return out


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
    differ = diff_match_patch()
    start = differ.diff_commonPrefix(before, after)
    start = _token_start(before, start)
    rest_before, rest_after = before[start:], after[start:]
    end = differ.diff_commonSuffix(rest_before, rest_after)
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


def _common_share(old: list[str], new: list[str]) -> float:
    """The most the two token lists can have in common, as a share of both (2 × common ÷ all): an upper bound
    on the similarity of any diff of them."""
    if not old or not new:  # only added or only removed text: the diff is immediate
        return 1.0
    common = Counter(old) & Counter(new)
    return 2 * sum(common.values()) / (len(old) + len(new))


def _diff_units(old: list[str], new: list[str]) -> list[tuple[int, str]]:
    """diff-match-patch over two token lists, each token mapped to one character and back (its word mode)."""
    codes: dict[str, str] = {}
    chars = (_encode(old, codes), _encode(new, codes))
    differ = diff_match_patch()
    differ.Diff_Timeout = 0  # no deadline: the same texts always give the same diff
    encoded = differ.diff_main(*chars, False)
    # Cleaned up on the tokens, not the text: on the text, its merge step would split words again by pulling
    # the common letters out of a removed and an added word ("conne[ct→x]ion").
    differ.diff_cleanupSemantic(encoded)
    units = list(codes)
    return [(op, "".join(units[ord(c) - _FIRST_CODE] for c in text)) for op, text in encoded]


def _encode(units: list[str], codes: dict[str, str]) -> str:
    out = []
    for unit in units:
        code = codes.get(unit)
        if code is None:
            code = codes[unit] = chr(_FIRST_CODE + len(codes))
        out.append(code)
    return "".join(out)
