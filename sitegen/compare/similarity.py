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
  compared sentence by sentence instead (a sentence ends at `.`, `!`, `?`, `;`, their CJK forms or a line end):
  each sentence a token, matching whole or not at all; the sentences between two runs of matching ones are
  then compared character by character, as long as all such comparisons together stay within EXACT_CELLS
  pairs, else word by word (a word ends at white space or a comma), else not at all;
- when the sentences (or words) make more than TOKEN_CELLS pairs, only what is matched so far counts.
So two 32,000-character one-paragraph answers that differ in two characters are 99.99 % alike, not 0 %; the
figure is then a lower bound of the longest common subsequence, the same on every machine.
"""

from __future__ import annotations

import re

from sitegen.textmatch import nfkc

EXACT_CELLS = 1_000_000_000  # about 0.1 s: two unlike 31,000-character middles
TOKEN_CELLS = 1_000_000_000  # about 0.4 s: two unlike middles of 31,000 sentences
# Where a text is cut into tokens past EXACT_CELLS: after each sentence's end, then after each word.
_SPLITS = (re.compile(r"(?<=[.!?;\n。！？；])"), re.compile(r"(?<=[\s,，、])"))


def similarity(a: str, b: str) -> float:
    """How alike two answers are, 0.0–1.0 (three decimals): 2 × matched characters ÷ all characters, after NFKC."""
    a, b = nfkc(a), nfkc(b)
    if a == b:
        return 1.0
    # Imported here: rapidfuzz takes 50–150 ms to import, and a build whose answers are unchanged never needs it.
    from rapidfuzz.distance import Postfix, Prefix

    start = int(Prefix.similarity(a, b))
    end = int(Postfix.similarity(a[start:], b[start:]))
    matched = start + end + _matched(a[start : len(a) - end], b[start : len(b) - end], 0, [EXACT_CELLS])
    return round(2 * matched / (len(a) + len(b)), 3)


def _matched(a: str, b: str, level: int, budget: list[int]) -> int:
    """Characters of a common subsequence of `a` and `b`: a longest one within the limits above. `level`: the
    tokens tried first past EXACT_CELLS (_SPLITS); `budget`: the character pairs left for the gaps between
    matching tokens, shared by all of them."""
    from rapidfuzz.distance import LCSseq  # imported when first needed, as in similarity

    cells = len(a) * len(b)
    if not cells:
        return 0
    if cells <= (EXACT_CELLS if level == 0 else budget[0]):
        budget[0] -= cells if level else 0
        return int(LCSseq.similarity(a, b))
    if level == len(_SPLITS):
        return 0
    tokens_a, tokens_b = _SPLITS[level].split(a), _SPLITS[level].split(b)
    if len(tokens_a) * len(tokens_b) > TOKEN_CELLS:
        return 0
    if len(tokens_a) == 1 and len(tokens_b) == 1:  # no sentence end on either side: try words
        return _matched(a, b, level + 1, budget)
    matched, gap_a, gap_b = 0, [], []
    for op in LCSseq.opcodes(tokens_a, tokens_b):
        if op.tag == "equal":
            matched += sum(map(len, tokens_a[op.src_start : op.src_end]))
            matched += _matched("".join(gap_a), "".join(gap_b), level + 1, budget)
            gap_a, gap_b = [], []
        else:
            gap_a += tokens_a[op.src_start : op.src_end]
            gap_b += tokens_b[op.dest_start : op.dest_end]
    return matched + _matched("".join(gap_a), "".join(gap_b), level + 1, budget)
