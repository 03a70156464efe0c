"""Text matching as eval/README.md ("How text is matched") defines it: substring search after NFKC + casefold."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# Characters that normalise to one character each, none of them a combining mark or the second of a canonical
# composition, so that no two of them combine and the text's NFKC is each character's: ASCII, CJK ideographs,
# CJK punctuation (but its tone marks U+302A–U+302F) and the fullwidth forms of ASCII — what an agent's answers are
# mostly written in (tests/test_site_views.py checks the claim for every one of them, tests/test_textmatch.py the
# table below). highlight.py relies on the same property to keep positions.
SIMPLE_CHARACTERS = "\x00-\x7f\u3000-\u3029\u3030-\u303f\u4e00-\u9fff\uff01-\uff5e\u2014\u2018\u2019\u201c\u201d"
SIMPLE_TEXT = re.compile(f"[{SIMPLE_CHARACTERS}]*")  # fullmatch: the whole text is simple
# The simple characters NFKC changes, and what to: fullwidth ASCII to ASCII, the ideographic space to a space and
# four CJK marks to the character they stand for (the test derives the same table from unicodedata).
SIMPLE_NFKC = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)} | {
    "\u3000": " ",
    "\u3036": "\u3012",
    "\u3038": "\u5341",
    "\u3039": "\u5344",
    "\u303a": "\u5345",
}
_SIMPLE_CHANGED = re.compile(f"[{re.escape(''.join(SIMPLE_NFKC))}]")


# Every rule normalises the same answer and keywords again; a small cache makes that once per case.
@lru_cache(maxsize=1024)
def normalise(text: str) -> str:
    """Return `text` in the form every comparison uses: NFKC, then case-folded."""
    # casefold can produce characters that NFKC would rewrite again (e.g. U+1E9E); normalise twice.
    return _nfkc(nfkc(text).casefold())


# The answers' similarity (compare/similarity.py) is of their NFKC forms, which normalise makes first: the rules
# have made the current answer's, the page's comparison makes the baseline's again.
@lru_cache(maxsize=64)
def nfkc(text: str) -> str:
    """`text` in Unicode NFKC."""
    return _nfkc(text)


def _nfkc(text: str) -> str:
    if text.isascii():
        return text
    if SIMPLE_TEXT.fullmatch(text):
        # Chinese text with fullwidth punctuation is where unicodedata's NFKC is slowest (it decomposes and
        # recomposes everything once one character changes): here only those characters are replaced.
        return _SIMPLE_CHANGED.sub(_simple_nfkc, text)
    return unicodedata.normalize("NFKC", text)


def _simple_nfkc(match: re.Match[str]) -> str:
    return SIMPLE_NFKC[match.group()]


def found_in(haystack: str, needles: Iterable[str]) -> list[str]:
    """The needles (as written) that occur in `haystack`, in their given order."""
    normal = normalise(haystack)
    return [needle for needle in needles if normalise(needle) in normal]
