"""The statistics of the comparison: the Wilson score interval of a pass rate, the one-sided Fisher exact test of
two pass counts, and McNemar's exact test of the cases that flipped. Exact arithmetic in a few lines (math.comb,
math.lgamma), so sitegen needs no statistics library."""

from __future__ import annotations

import math

# The normal quantile of a two-sided 95 % interval.
Z_95 = 1.959963984540054


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of `passed` successes in `total` trials (95 % by default), as (low, high)."""
    if total <= 0:
        return (0.0, 1.0)
    p = passed / total
    z2 = z * z
    centre = p + z2 / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    denominator = 1 + z2 / total
    # At 0 or all passes the bound is exactly 0 or 1; the arithmetic would leave a rounding error there.
    low = 0.0 if passed == 0 else max(0.0, (centre - spread) / denominator)
    high = 1.0 if passed == total else min(1.0, (centre + spread) / denominator)
    return (low, high)


def fisher_one_sided(passed_a: int, total_a: int, passed_b: int, total_b: int) -> float:
    """One-sided Fisher exact p-value that B's pass rate is lower than A's: the hypergeometric probability of
    B passing `passed_b` or fewer of its trials, given the passes of both together.

    Swap the sides to test for a rise. Counts must satisfy 0 ≤ passed ≤ total.
    """
    if not (0 <= passed_a <= total_a and 0 <= passed_b <= total_b):
        raise ValueError("expected 0 ≤ passed ≤ total on both sides")
    passes = passed_a + passed_b
    whole = math.comb(total_a + total_b, total_b)
    # P(X = k): B gets k of the passes when its total_b trials are drawn from both sides' trials.
    tail = sum(math.comb(passes, k) * math.comb(total_a + total_b - passes, total_b - k) for k in range(passed_b + 1))
    return min(1.0, tail / whole)


# Up to this many flipped cases McNemar's p-value is summed exactly in integers (a correctly rounded float);
# above it, in log space (each term from its neighbour, so a million flips take a few thousand steps).
_EXACT_FLIPS = 1024


def mcnemar_exact(regressed: int, fixed: int) -> float:
    """McNemar's exact two-sided p-value of paired pass/fail outcomes: `regressed` cases went from passed to
    failed, `fixed` the other way. It is the two-sided binomial test of min(b, c) in b + c trials at 1/2 (R's
    `binom.test(b, b + c, 0.5)`, `mcnemar.test` exact): 1.0 when nothing flipped."""
    if regressed < 0 or fixed < 0:
        raise ValueError("expected counts ≥ 0")
    flips, fewer = regressed + fixed, min(regressed, fixed)
    if 2 * fewer >= flips:  # as many each way (or none): nothing points either way
        return 1.0
    if flips <= _EXACT_FLIPS:
        return min(1.0, 2 * sum(math.comb(flips, k) for k in range(fewer + 1)) / 2**flips)
    return min(1.0, 2 * math.exp(_log_half_binomial_tail(fewer, flips)))


def _log_half_binomial_tail(k: int, n: int) -> float:
    """log P(X ≤ k) for X ~ Binomial(n, 1/2) and k < n/2: the term at k in log space (math.lgamma), times the sum of
    the terms below it relative to it, which shrink at least geometrically, so the sum stops once they no longer
    count."""
    log_top = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total = term = 1.0
    for j in range(k, 0, -1):
        term *= j / (n - j + 1)  # P(X = j − 1) / P(X = j)
        total += term
        if term < total * 1e-17:
            break
    return log_top + math.log(total)
