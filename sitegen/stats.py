"""The two statistics of trials: the Wilson score interval of a pass rate, and the one-sided Fisher exact test
of two pass counts. Exact arithmetic in a few lines (math.comb), so sitegen needs no statistics library."""

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
