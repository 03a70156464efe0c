"""How alike two answers are: `similarity`, from a character-level diff (eval/README.md, "Items").

similarity = 2 × matched characters ÷ all characters of the two NFKC-normalised answers, rounded to three
decimals, where the matched characters are those a shortest character-level edit script keeps: a longest
common subsequence. That is what Google's diff-match-patch finds when run without a time limit, line mode or
clean-up, but its number then depends on the two texts alone (a time limit would make it depend on the
machine's speed). The length is computed by rapidfuzz's bit-parallel LCS (`LCSseq`), which gives the same
number a hundred to a thousand times quicker than diff-match-patch's C++ implementation: two unlike
3,000-character answers take it under a millisecond, where diff-match-patch takes 0.2 s (benchmarks/RESULTS.md)
— it runs for every case whose answer changed.

Its time grows with the product of the lengths, so very long answers are bounded thus, and the figure stays
reproducible:
- the common beginning and end are matched first (an edit in a long answer stays cheap);
- when what lies between holds more than EXACT_CELLS character pairs (its two lengths multiplied), it is
  compared line by line instead: each line a token, a line matching whole or not at all;
- when its lines still make more than LINE_CELLS pairs, only the common beginning and end count as matched.
"""

from __future__ import annotations

from sitegen.textmatch import nfkc

EXACT_CELLS = 1_000_000_000  # about 0.1 s: two unlike 31,000-character middles
LINE_CELLS = 1_000_000_000  # about 0.4 s: two unlike middles of 31,000 lines


def similarity(a: str, b: str) -> float:
    """How alike two answers are, 0.0–1.0 (three decimals): 2 × matched characters ÷ all characters, after NFKC."""
    a, b = nfkc(a), nfkc(b)
    if a == b:
        return 1.0
    # Imported here: rapidfuzz takes 50–150 ms to import, and a build whose answers are unchanged never needs it.
    from rapidfuzz.distance import Postfix, Prefix

    start = int(Prefix.similarity(a, b))
    end = int(Postfix.similarity(a[start:], b[start:]))
    matched = start + end + _matched(a[start : len(a) - end], b[start : len(b) - end])
    return round(2 * matched / (len(a) + len(b)), 3)


def _matched(a: str, b: str) -> int:
    """Characters of a longest common subsequence of `a` and `b`, within the limits above."""
    from rapidfuzz.distance import LCSseq  # imported when first needed, as in similarity

    if len(a) * len(b) <= EXACT_CELLS:
        return int(LCSseq.similarity(a, b))
    lines_a, lines_b = a.splitlines(keepends=True), b.splitlines(keepends=True)
    if len(lines_a) * len(lines_b) > LINE_CELLS:
        return 0
    return sum(
        sum(map(len, lines_a[op.src_start : op.src_end])) for op in LCSseq.opcodes(lines_a, lines_b) if op.tag == "equal"
    )

