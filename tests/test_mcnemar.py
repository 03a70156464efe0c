"""McNemar's exact test (stats.mcnemar_exact) against published values: the paired test a single-trial diff
reports (eval/README.md, "Chance in a single-trial suite")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.compare.changes import PairedTest
from sitegen.compare.wording import chance_clause
from sitegen.stats import fewest_telling_flips, mcnemar_exact

# (regressed b, fixed c, p-value). By hand: nothing flipped is 1; 2 against 1 is 1.0 (P(X ≤ 1) of Bin(3, ½) is
# ½, doubled); 10 against 0 is 2 × 2⁻¹⁰ = 0.001953125. The rest were computed once with SciPy 1.17.1's
# scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue — the same as R's binom.test(b, b + c, 0.5)$p.value,
# which is McNemar's exact p (mcnemar.test's exact form) — and written here; SciPy is not a dependency.
REFERENCE = [
    (0, 0, 1.0),
    (2, 1, 1.0),
    (10, 0, 0.001953125),
    (0, 1, 1.0),
    (1, 0, 1.0),
    (3, 0, 0.25),
    (5, 0, 0.0625),
    (6, 0, 0.03125),
    (6, 1, 0.125),
    (2, 8, 0.109375),
    (7, 3, 0.34375),
    (12, 5, 0.143463134765625),
    (20, 10, 0.09873714670538905),
    (25, 10, 0.016673847800120715),
    (59, 41, 0.08862608011406758),
    (100, 60, 0.001953728034064355),
    (1000, 950, 0.2671531387585789),
    (5000, 4800, 0.04440414879984631),
    (1234567, 1232000, 0.10229190271123498),
    (2996000, 3000000, 0.1024417805124463),
]


@pytest.mark.parametrize(("regressed", "fixed", "expected"), REFERENCE)
def test_mcnemar_matches_published_values(regressed: int, fixed: int, expected: float) -> None:
    # Above 1,024 flips the sum is taken in log space: math.lgamma of numbers in the millions leaves a relative
    # error near 1e-9 in the p-value, far below the two digits any summary prints.
    assert mcnemar_exact(regressed, fixed) == pytest.approx(expected, rel=1e-12 if regressed + fixed <= 1024 else 1e-8)


def test_small_counts_are_exact() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(2, 1) == 1.0
    assert mcnemar_exact(10, 0) == 0.001953125
    assert mcnemar_exact(0, 10) == 0.001953125


def test_both_sums_agree_where_they_meet() -> None:
    # Just below the exact sum's limit and just above it (the log-space sum) the p-values run on smoothly.
    below, above = mcnemar_exact(560, 464), mcnemar_exact(560, 465)
    assert below < above < below * 1.2


@given(st.integers(0, 3000), st.integers(0, 3000))
def test_symmetric_and_a_probability(regressed: int, fixed: int) -> None:
    p = mcnemar_exact(regressed, fixed)
    assert 0.0 <= p <= 1.0  # 0.0 only where the true value is below the smallest double (2⁻¹⁰⁷⁴)
    assert p == mcnemar_exact(fixed, regressed)


@given(st.integers(0, 200), st.integers(0, 200))
def test_one_more_regression_never_makes_a_lopsided_split_likelier(regressed: int, fixed: int) -> None:
    if regressed >= fixed:
        assert mcnemar_exact(regressed + 1, fixed) <= mcnemar_exact(regressed, fixed) + 1e-12


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


@pytest.mark.parametrize(("alpha", "flips"), [(0.05, 6), (0.1, 5), (0.01, 8), (0.5, 3)])
def test_fewest_telling_flips(alpha: float, flips: int) -> None:
    # The fewest flips all one way with p < α, and one fewer is not enough.
    assert fewest_telling_flips(alpha) == flips
    assert mcnemar_exact(flips, 0) < alpha <= mcnemar_exact(flips - 1, 0)


@pytest.mark.parametrize(
    ("regressed", "fixed", "clause"),
    [
        (0, 0, "0 regressed, 0 fixed: p = 1.00, within chance"),
        (0, 2, "0 regressed, 2 fixed: p = 0.50, within chance"),
        (1, 0, "1 regressed, 0 fixed: p = 1.00, too few flips to tell from chance (it takes 6 all one way); "
               "the gate fails on any regression"),
        (12, 5, "12 regressed, 5 fixed: p = 0.14, no more than chance as a whole; the gate fails on any regression"),
        (6, 0, "6 regressed, 0 fixed: p = 0.03, more than chance"),
    ],
)
def test_the_chance_clause_never_contradicts_the_gate(regressed: int, fixed: int, clause: str) -> None:
    # A regressed single-trial case fails the gate whatever p says: the clause says so instead of "within chance".
    test = PairedTest(regressed, fixed, mcnemar_exact(regressed, fixed), 20)
    assert chance_clause(test, 0.05) == clause
