"""Case page file names: safe on every file system, unique per id (even case-insensitively), stable."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.slugs import HASH_HEX, MAX_STEM, assign_slugs, case_slug, id_hash, slug_stem

SAFE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@pytest.mark.parametrize(
    ("case_id", "stem"),
    [
        ("payment-timeout", "payment-timeout"),
        ("Payment Timeout", "payment-timeout"),
        ("../../escape", "escape"),
        ("/etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("café", "cafe"),
        ("emoji-🔥-熔断", "emoji"),
        ("支付超时", "case"),
        ("..", "case"),
        ("", "case"),
        ("CON", "case-con"),
        ("nul", "case-nul"),
        ("Com1", "case-com1"),
        ("con.txt", "con-txt"),
        ("<script>alert('id')</script>", "script-alert-id-script"),
    ],
)
def test_stem_is_readable_ascii(case_id: str, stem: str) -> None:
    assert slug_stem(case_id) == stem


def test_slug_is_stem_plus_hash_of_exact_id() -> None:
    assert case_slug("Payment Timeout") == "payment-timeout-" + id_hash("Payment Timeout")
    assert len(id_hash("x")) == HASH_HEX


def test_long_ids_are_cut() -> None:
    slug = case_slug("x" * 300)
    assert len(slug) == MAX_STEM + 1 + HASH_HEX


@pytest.mark.parametrize(
    "pair",
    [
        ("Case-Sensitive", "case-sensitive"),
        ("caf\u00e9", "cafe\u0301"),  # NFC vs NFD: the same to a reader, different ids
        ("a/b", "a-b"),
        ("支付超时", "支付失败"),
    ],
)
def test_ids_that_look_alike_get_different_files(pair: tuple[str, str]) -> None:
    first, second = pair
    slugs = assign_slugs(pair)
    assert slugs[first].casefold() != slugs[second].casefold()


def test_slugs_are_stable() -> None:
    assert assign_slugs(["b", "a"]) == {"b": case_slug("b"), "a": case_slug("a")}
    assert case_slug("payment-timeout") == case_slug("payment-timeout")


def test_lone_surrogates_get_a_name() -> None:
    assert SAFE.match(case_slug("bad\ud800id"))


def test_a_hash_collision_is_resolved_with_longer_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    import sitegen.slugs as slugs

    real = slugs.id_hash
    monkeypatch.setattr(slugs, "id_hash", lambda case_id, length=HASH_HEX: "0" * length if length == HASH_HEX else real(case_id, length))
    result = slugs.assign_slugs(["same", "Same"])
    assert result["same"] != result["Same"]
    assert len(result["same"]) > len("same-") + HASH_HEX


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=30, unique=True))
def test_any_ids_get_safe_unique_names(ids: list[str]) -> None:
    slugs = assign_slugs(ids)
    assert set(slugs) == set(ids)
    folded = [slug.casefold() for slug in slugs.values()]
    assert len(set(folded)) == len(ids)
    for slug in slugs.values():
        assert SAFE.match(slug), slug
        assert len(slug) <= MAX_STEM + 1 + 64
        assert unicodedata.is_normalized("NFC", slug)
