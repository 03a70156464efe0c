"""The statistics of trials against published values: the one-sided Fisher exact test and the Wilson interval."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.stats import fisher_one_sided, wilson_interval


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ((5, 5), (0, 5), 0.003968),  # 1/252: the only table as extreme
        ((4, 5), (2, 5), 0.261905),  # 66/252
        ((4, 5), (3, 5), 0.5),  # 126/252
        ((10, 10), (5, 10), 0.016254),  # R: fisher.test(matrix(c(10,0,5,5),2), alternative="greater")
        ((3, 3), (3, 3), 1.0),
    ],
)
def test_fisher_matches_published_values(before: tuple[int, int], after: tuple[int, int], expected: float) -> None:
    assert fisher_one_sided(*before, *after) == pytest.approx(expected, abs=5e-6)


def test_fisher_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        fisher_one_sided(6, 5, 0, 5)


counts = st.integers(min_value=1, max_value=30).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts, counts)
def test_fisher_is_a_probability_and_monotone(a: tuple[int, int], b: tuple[int, int]) -> None:
    p = fisher_one_sided(*a, *b)
    assert 0.0 <= p <= 1.0
    # One more failure on the current side can only make the fall more significant (a smaller p).
    if b[0] > 0:
        assert fisher_one_sided(*a, b[0] - 1, b[1]) <= p + 1e-12
    # One more pass on the baseline side likewise.
    if a[0] < a[1]:
        assert fisher_one_sided(a[0] + 1, a[1], *b) <= p + 1e-12


@given(counts, counts)
def test_the_two_one_sided_tests_cover_every_table(a: tuple[int, int], b: tuple[int, int]) -> None:
    # P(X ≤ k) + P(X ≥ k) = 1 + P(X = k) > 1 for the same table: both tails include the observed one.
    assert fisher_one_sided(*a, *b) + fisher_one_sided(*b, *a) >= 1.0 - 1e-12


@pytest.mark.parametrize(
    ("passed", "total", "low", "high"),
    [
        (5, 5, 0.565518, 1.0),
        (0, 5, 0.0, 0.434482),
        (4, 5, 0.375535, 0.963776),
        (81, 263, 0.2553, 0.3662),  # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3
    ],
)
def test_wilson_interval_matches_published_values(passed: int, total: int, low: float, high: float) -> None:
    found = wilson_interval(passed, total)
    assert found == pytest.approx((low, high), abs=5e-5)


@given(counts)
def test_wilson_interval_contains_the_rate(c: tuple[int, int]) -> None:
    low, high = wilson_interval(*c)
    assert 0.0 <= low <= c[0] / c[1] <= high <= 1.0 and math.isfinite(low) and math.isfinite(high)
