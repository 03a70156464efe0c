"""Markdown escaping (sitegen/report/mdtext.py): no cell text can break a table row or open markup."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.report.mdtext import escape_cell

_HOSTILE = st.text(alphabet=st.sampled_from(list("ab 1.-#|*_`[]~\\&<>\t\n\r\x00") + ["\u2028", "\x85", "\xa0", "超", "\u202e"]), max_size=24)
_UNESCAPED_MARK = re.compile(r"(?<!\\)(?:\\\\)*[`*_\[\]~|]")


@settings(max_examples=2000)
@given(_HOSTILE)
def test_a_cell_is_one_line_of_text_that_opens_no_markup(text: str) -> None:
    cell = escape_cell(text)
    assert cell == " " or (cell.isprintable() and cell == cell.strip() and cell != "")
    assert "<" not in cell and ">" not in cell
    assert not _UNESCAPED_MARK.search(cell.replace("\\\\", "")), cell


def test_a_plain_cell_is_itself() -> None:
    for text in ("answer", "223 characters", "0.850", "连接池 超时", "query_logs → none"):
        expected = text if "_" not in text else text.replace("_", "\\_")
        assert escape_cell(text) == expected
    assert escape_cell("  padded ") == "padded"
    assert escape_cell("   ") == " "
