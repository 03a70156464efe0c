"""The statistics of the comparison: the Wilson score interval of a pass rate, the one-sided Fisher exact test of
two pass counts, and McNemar's exact test of the cases that flipped; and the logarithm of a binomial coefficient
they are made of. A few lines of floating-point arithmetic in log space, so sitegen needs no statistics library and
no count makes a test slow: exact sums of binomial coefficients (math.comb) have thousands of digits at ten
thousand trials and took seconds a case."""

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


# Up to this many factors, C(n, k) is made exactly (math.comb) and its logarithm taken: the difference of
# log-gammas of a large n and a small k would lose digits to cancellation (C(10**6, 3): 9 of 16).
_EXACT_FACTORS = 64


def log_comb(n: int, k: int) -> float:
    """The natural logarithm of the binomial coefficient C(n, k); -inf when k is not between 0 and n."""
    if not 0 <= k <= n:
        return -math.inf
    if min(k, n - k) <= _EXACT_FACTORS:
        return math.log(math.comb(n, k))
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


# A tail's sum stops at the first term below this share of the sum so far: the terms fall off faster than
# geometrically past the mode, so the rest cannot reach a double's precision.
_NEGLIGIBLE = 1e-18


def fisher_one_sided(passed_a: int, total_a: int, passed_b: int, total_b: int) -> float:
    """One-sided Fisher exact p-value that B's pass rate is lower than A's: the hypergeometric probability of
    B passing `passed_b` or fewer of its trials, given the passes of both together.

    Swap the sides to test for a rise. Counts must satisfy 0 ≤ passed ≤ total. The tail is summed from its
    largest term outward and stops where the terms no longer count (a few hundred terms at a million trials);
    a tail past the mode is one minus the other tail, so no sum runs over the bulk of the distribution.
    """
    if not (0 <= passed_a <= total_a and 0 <= passed_b <= total_b):
        raise ValueError("expected 0 ≤ passed ≤ total on both sides")
    trials, passes, drawn = total_a + total_b, passed_a + passed_b, total_b
    failures = trials - passes
    low, high = max(0, drawn - failures), min(drawn, passes)  # what B's passes can be
    if passed_b >= high:
        return 1.0
    mode = (drawn + 1) * (passes + 1) // (trials + 2)
    if passed_b < mode:  # P(X ≤ passed_b): from passed_b down, each term smaller than the one before
        return min(1.0, _tail(passed_b, low, -1, passes, failures, drawn, trials))
    # P(X ≤ passed_b) = 1 - P(X > passed_b): from passed_b + 1 up, each term smaller than the one before
    return max(0.0, 1.0 - _tail(passed_b + 1, high, 1, passes, failures, drawn, trials))


def _tail(start: int, end: int, step: int, passes: int, failures: int, drawn: int, trials: int) -> float:
    """The hypergeometric probabilities P(X = k) summed from k = `start` to `end` (by `step`, ±1) while they
    count, for B drawing `drawn` of `trials` trials of which `passes` passed (`failures` failed)."""
    log_first = log_comb(passes, start) + log_comb(failures, drawn - start) - log_comb(trials, drawn)
    term = math.exp(log_first)
    total = term
    k = start
    while k != end and term > total * _NEGLIGIBLE:
        if step < 0:  # P(k - 1) / P(k)
            term *= k * (failures - drawn + k) / ((passes - k + 1) * (drawn - k + 1))
        else:  # P(k + 1) / P(k)
            term *= (passes - k) * (drawn - k) / ((k + 1) * (failures - drawn + k + 1))
        total += term
        k += step
    return total


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
    """log P(X ≤ k) for X ~ Binomial(n, 1/2) and k < n/2: the term at k in log space (log_comb), times the sum of
    the terms below it relative to it, which shrink at least geometrically, so the sum stops once they no longer
    count."""
    total = term = 1.0
    for j in range(k, 0, -1):
        term *= j / (n - j + 1)  # P(X = j − 1) / P(X = j)
        total += term
        if term < total * _NEGLIGIBLE:
            break
    return log_comb(n, k) - n * math.log(2) + math.log(total)


def fewest_telling_flips(alpha: float) -> int:
    """The fewest flipped cases, all one way, whose McNemar p-value is below `alpha` (6 at 0.05): with fewer flips
    no split can be told from chance (docs/trials.md, "Chance in a single-trial suite")."""
    if not 0 < alpha < 1:
        raise ValueError("expected 0 < alpha < 1")
    flips = 1
    while mcnemar_exact(flips, 0) >= alpha:
        flips += 1
    return flips
