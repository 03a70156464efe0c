"""The text the index's search looks in besides each row: every case's question and answer, kept out of the
index in `assets/search-text.js`, which the index's script loads when its search box is first used."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sitegen.site.pages.text import TEXT_LIMIT, clip
from sitegen.textmatch import nfkc

_SPACE = re.compile(r"\s+")


def case_search_text(question: str, answer: str) -> str:
    """A case's question and answer as the search compares them: NFKC, lower case, one space between words.

    Each is cut where its case page cuts it (TEXT_LIMIT): the search finds what the page shows.
    """
    # The index's script lowers NFKC text the same way (site.js `norm`), so both sides meet. Each part is put in
    # NFKC on its own (a space joins them, and nothing combines with a space): the rules have just made the
    # answer's, which textmatch remembers.
    text = nfkc(clip(question, TEXT_LIMIT).text) + " " + nfkc(clip(answer, TEXT_LIMIT).text)
    return _SPACE.sub(" ", text.lower()).strip()


def search_text_data(texts: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The data of assets/search-text.js: [case id, text] pairs in case-file order (pairs, not an object, so a
    case id like "__proto__" is a key like any other); cases without text are left out."""
    return {"formatVersion": 1, "cases": [[case_id, text] for case_id, text in texts if text]}
