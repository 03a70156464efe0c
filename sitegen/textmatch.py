"""Text matching as eval/README.md ("How text is matched") defines it: substring search after NFKC + casefold."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache


# Every rule normalises the same answer and keywords again; a small cache makes that once per case.
@lru_cache(maxsize=1024)
def normalise(text: str) -> str:
    """Return `text` in the form every comparison uses: NFKC, then case-folded."""
    # casefold can produce characters that NFKC would rewrite again (e.g. U+1E9E); normalise twice.
    return unicodedata.normalize("NFKC", nfkc(text).casefold())


# The answers' similarity (compare/textdiff.py) is of their NFKC forms, which normalise makes first: the rules
# have made the current answer's, the page's comparison makes the baseline's again.
@lru_cache(maxsize=64)
def nfkc(text: str) -> str:
    """`text` in Unicode NFKC."""
    return unicodedata.normalize("NFKC", text)


def found_in(haystack: str, needles: Iterable[str]) -> list[str]:
    """The needles (as written) that occur in `haystack`, in their given order."""
    normal = normalise(haystack)
    return [needle for needle in needles if normalise(needle) in normal]
