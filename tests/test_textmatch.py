"""Text matching's normal forms (sitegen/textmatch.py): the quick NFKC of simple text is Unicode's NFKC."""

from __future__ import annotations

import re
import sys
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen.site.pages.search import case_search_text
from sitegen.textmatch import SIMPLE_CHARACTERS, SIMPLE_NFKC, nfkc, normalise

_SIMPLE_CHAR = re.compile(f"[{SIMPLE_CHARACTERS}]")
_SIMPLE = [chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF and _SIMPLE_CHAR.match(chr(code))]

# Simple characters, the ones NFKC changes among them, and what breaks the shortcut: combining marks (also after a
# fullwidth letter, which NFKC turns into one a mark composes with), Hangul jamo, compatibility ideographs,
# ligatures, the tone marks left out of the simple set, a lone surrogate.
_MIXED = st.text(
    alphabet=st.sampled_from(
        list("aZ 09,.:()\n\t") + list("支付超时连接池") + list("（）：，。、「」　〶〸〹〺ＡＺａ０！～")
        + ["\u0301", "\u0308", "\u0338", "\u1100", "\u1161", "\u11a8", "\uac00", "\uf900", "\ufb01", "\u302a", "\u2014", "\u201c", "\u212b", "\ud800"]
    ),
    max_size=30,
)


def test_every_simple_character_is_its_own_nfkc_and_the_table_says_which_change() -> None:
    assert len(_SIMPLE) > 20_000
    changed = {char: unicodedata.normalize("NFKC", char) for char in _SIMPLE if unicodedata.normalize("NFKC", char) != char}
    assert changed == SIMPLE_NFKC
    assert all(len(target) == 1 and not unicodedata.combining(target) for target in changed.values())


@settings(max_examples=3000)
@given(_MIXED)
@example("ＡＢ\u0301")  # a fullwidth letter then a combining mark: not simple text, so unicodedata normalises it
@example("支付接口超时（HikariCP 连接池耗尽）：ＡＢ “pool” — 重启。〶〸")
def test_nfkc_is_unicodes_nfkc_and_normalise_its_case_folded_form(text: str) -> None:
    assert nfkc(text) == unicodedata.normalize("NFKC", text)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    assert normalise(text) == folded


@settings(max_examples=1000)
@given(_MIXED, _MIXED)
@example("a", "\u0301b")  # a mark right after the joining space composes with nothing
@example("\u1100", "\u1161")  # Hangul jamo either side: the space keeps them apart
def test_the_search_text_is_the_nfkc_of_question_and_answer_joined(question: str, answer: str) -> None:
    whole = unicodedata.normalize("NFKC", question + " " + answer).lower()
    assert case_search_text(question, answer) == re.sub(r"\s+", " ", whole).strip()
