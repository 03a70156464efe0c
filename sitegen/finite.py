"""Means and differences of figures (durations, tool-call counts) that stay finite for every finite input.

JSON allows any number, and a report, diff or history must never hold an infinity (JSON has none): two
traces of `1e308` ms each would make a plain mean `inf`. A figure beyond the range of a double (an integer
of hundreds of digits) cannot be averaged at all, so the readers refuse it as bad input (`in_float_range`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

FLOAT_MAX = sys.float_info.max
RANGE_TEXT = "±1.8e308"  # how messages name the range of a double


def in_float_range(value: int | float) -> bool:
    """Whether a number (an int of any size, or a float) lies within the range of a double."""
    return -FLOAT_MAX <= value <= FLOAT_MAX


def finite_mean(values: Sequence[int | float], *, order_free: bool = False) -> float:
    """The mean of numbers within the range of a double, finite; `order_free`: summed exactly (math.fsum), so
    the same values in any order give the same mean."""
    count = len(values)
    try:
        mean = (math.fsum(values) if order_free else sum(values)) / count
    except OverflowError:  # fsum's intermediate overflow, or an integer sum too large for a float
        mean = math.inf
    if math.isfinite(mean):
        return mean
    # The sum overflowed: add the values divided first. The true mean lies between the smallest and the
    # largest value, which also bounds the rounding of the divisions.
    try:
        mean = math.fsum(value / count for value in values)
    except OverflowError:
        mean = math.inf
    return min(max(mean, min(values)), max(values))


def difference(current: int | float, baseline: int | float) -> int | float:
    """current − baseline, finite: where the float subtraction overflows, both values are beyond 2**53 and so
    whole numbers, and their difference is kept exact as an integer."""
    delta = current - baseline
    if isinstance(delta, float) and not math.isfinite(delta):
        return int(current) - int(baseline)
    return delta
