"""The statistics of trials against published values: the one-sided Fisher exact test (at small counts and at
hundreds of thousands of trials, and against exact rational arithmetic), the log-space binomial coefficient, the
Wilson interval; a baseline of 20,000 trials of a case through `sitegen diff`."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from typer.testing import CliRunner

from helpers import make_case, make_trace, write_suite
from sitegen.cli import app
from sitegen.stats import fisher_one_sided, log_comb, wilson_interval


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


# Computed once with SciPy 1.17.1, `scipy.stats.fisher_exact([[passed_a, total_a - passed_a], [passed_b,
# total_b - passed_b]], alternative="greater")[1]`, and written here: SciPy is not a dependency of sitegen.
SCIPY_1_17_1 = [
    ((2000, 2000), (1990, 2000), 0.000965611867082593),
    ((2000, 2000), (1950, 2000), 6.513695891543864e-16),
    ((10000, 10000), (9990, 10000), 0.0009743666625151641),
    ((10000, 10000), (9950, 10000), 8.352830196128784e-16),
    ((20000, 20000), (19990, 20000), 0.0009754642242328583),
    ((20000, 20000), (19997, 20000), 0.12499062476561915),
    ((5000, 10000), (4860, 10000), 0.024650864225084536),
    ((5000, 10000), (4900, 10000), 0.08073464575422912),
    ((12000, 20000), (11800, 20000), 0.021334411390412162),
    ((100000, 100000), (99990, 100000), 0.0009763427877467903),
    ((500000, 1000000), (498000, 1000000), 0.0023491741548675696),
    ((20000, 20000), (0, 20000), 0.0),  # 1 / C(40000, 20000): below the smallest double
    ((19990, 20000), (20000, 20000), 1.0),
    ((3, 10000), (0, 10000), 0.12498124906245311),
    ((9000, 10000), (9100, 10000), 0.9925769722456477),
    ((1000, 30000), (2, 3), 0.9999628592063905),
]


@pytest.mark.parametrize(("before", "after", "expected"), SCIPY_1_17_1)
def test_fisher_matches_scipy_at_large_counts(before: tuple[int, int], after: tuple[int, int], expected: float) -> None:
    assert fisher_one_sided(*before, *after) == pytest.approx(expected, rel=1e-8, abs=1e-300)


def _exact_fisher(passed_a: int, total_a: int, passed_b: int, total_b: int) -> Fraction:
    """The definition, in exact rational arithmetic (slow beyond a few thousand trials)."""
    passes, trials = passed_a + passed_b, total_a + total_b
    tail = sum(math.comb(passes, k) * math.comb(trials - passes, total_b - k) for k in range(passed_b + 1))
    return Fraction(tail, math.comb(trials, total_b))


many = st.integers(min_value=1, max_value=400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(many, many)
def test_fisher_agrees_with_exact_arithmetic(a: tuple[int, int], b: tuple[int, int]) -> None:
    exact = float(_exact_fisher(*a, *b))
    assert fisher_one_sided(*a, *b) == pytest.approx(exact, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("n", "k"), [(0, 0), (5, 2), (52, 5), (1000, 500), (40000, 20000), (10**6, 3)])
def test_log_comb_is_the_logarithm_of_the_binomial_coefficient(n: int, k: int) -> None:
    # math.log of an int takes any size: C(40000, 20000) has 12,042 digits.
    assert log_comb(n, k) == pytest.approx(math.log(math.comb(n, k)), rel=1e-12, abs=1e-12)


def test_log_comb_outside_the_range_is_minus_infinity() -> None:
    assert log_comb(5, 6) == log_comb(5, -1) == -math.inf


def _report_with_trials(path: Path, passed: int, total: int, template: dict) -> None:
    """`template` (a report of one case with trials) with `total` trials, the first `passed` of them passing."""
    result = template["results"][0]
    good, bad = (next(t for t in result["trialResults"] if t["status"] == status) for status in ("passed", "failed"))
    result["trialResults"] = [dict(good if n < passed else bad, fixture=f"c/trial-{n:05d}.json") for n in range(total)]
    result["passedTrials"], result["trials"] = passed, total
    path.write_text(json.dumps(template), encoding="utf-8")


def test_diff_of_twenty_thousand_trials_judges_the_fall(tmp_path: Path) -> None:
    cases, fixtures = write_suite(
        tmp_path, [make_case(id="c", traceFixture="c")],
        {"c/trial-1.json": make_trace(verdict="PASS"), "c/trial-2.json": make_trace(verdict="FAIL")},
    )
    evaluated = CliRunner().invoke(app, ["evaluate", "--cases", str(cases), "--fixtures", str(fixtures), "--json", str(tmp_path / "r.json")])
    assert evaluated.exit_code == 0, evaluated.output
    template = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    _report_with_trials(tmp_path / "baseline.json", 20000, 20000, json.loads(json.dumps(template)))
    _report_with_trials(tmp_path / "current.json", 19990, 20000, template)
    done = CliRunner().invoke(
        app, ["diff", str(tmp_path / "baseline.json"), str(tmp_path / "current.json"), "--json", "-", "--fail-on-regression"]
    )
    assert done.exit_code == 1, done.output
    [item] = [item for item in json.loads(done.stdout)["items"] if item.get("pValue") is not None]
    assert item["pValue"] == pytest.approx(0.0009754642242328583, rel=1e-8)  # SCIPY_1_17_1


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
