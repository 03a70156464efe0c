"""File names for case pages: safe on every file system, unique per case id, stable across builds.

A slug is an ASCII stem a reader can recognise plus a short SHA-256 of the exact id, so ids that differ
only by case, by Unicode normalisation or by characters the stem drops still get different files, even on
case-insensitive file systems (macOS, Windows).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

MAX_STEM = 60
HASH_HEX = 10
_UNSAFE = re.compile(r"[^a-z0-9]+")
# Windows refuses these as file names whatever the extension; the hash suffix already avoids them, but a
# stem that *is* one would still look alarming in a listing.
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [f"com{i}" for i in range(10)]
    + [f"lpt{i}" for i in range(10)]
)


def slug_stem(case_id: str) -> str:
    """The readable part of a slug: ASCII, lowercase, `-` separated, at most MAX_STEM characters."""
    if case_id.isascii():  # most ids: nothing to decompose or drop
        ascii_text = case_id
    else:
        ascii_text = unicodedata.normalize("NFKD", case_id).encode("ascii", "ignore").decode("ascii")
    stem = _UNSAFE.sub("-", ascii_text.lower()).strip("-")[:MAX_STEM].rstrip("-")
    if not stem:
        return "case"
    if stem in _RESERVED:
        return f"case-{stem}"
    return stem


def id_hash(case_id: str, length: int = HASH_HEX) -> str:
    """The first `length` hex digits of the SHA-256 of the id's exact UTF-8 bytes."""
    # surrogatepass: JSON allows lone surrogates in strings and such an id must still get a name.
    return hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def case_slug(case_id: str, length: int = HASH_HEX) -> str:
    """The slug of one id (without `.html`)."""
    return f"{slug_stem(case_id)}-{id_hash(case_id, length)}"


def assign_slugs(case_ids: Iterable[str]) -> dict[str, str]:
    """A slug for every id, unique even case-insensitively; a hash prefix collision gets longer hashes."""
    ids = list(dict.fromkeys(case_ids))
    length = HASH_HEX
    slugs = {case_id: case_slug(case_id) for case_id in ids}
    while True:
        if len({slug.casefold() for slug in slugs.values()}) == len(slugs):
            return slugs
        groups: dict[str, list[str]] = defaultdict(list)
        for case_id, slug in slugs.items():
            groups[slug.casefold()].append(case_id)
        clashing = [case_id for group in groups.values() if len(group) > 1 for case_id in group]
        if length >= 64:  # distinct ids cannot share a whole SHA-256
            raise AssertionError(f"slug collision that hashing cannot resolve: {clashing!r}")
        length += 6
        for case_id in clashing:
            slugs[case_id] = case_slug(case_id, length)
