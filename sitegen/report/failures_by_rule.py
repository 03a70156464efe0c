"""Failures by rule: how many cases fail each rule code, now and in the baseline (eval/README.md, "Failures by rule").

A case counts once for a code however many of its checks carry it; the code is parse_check's, so a trial
suffix or a message never splits one rule into two rows. The index's panel, report.md and the job summary
all show these counts; they are computed here once and only formatted elsewhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from sitegen.checks import parse_check
from sitegen.report.mdtext import escape_cell, table

MINUS = "−"  # U+2212, as the pages print a fall


class _HasChecks(Protocol):
    @property
    def failedChecks(self) -> list[str]: ...


class RuleCount(NamedTuple):
    """One rule code: the cases failing it now and in the baseline (None without one)."""

    code: str
    current: int
    baseline: int | None = None

    @property
    def change(self) -> int | None:
        """Now minus the baseline; None without a baseline."""
        return None if self.baseline is None else self.current - self.baseline

    @property
    def change_text(self) -> str:
        """`+2`, `−1` or `=`; empty without a baseline."""
        change = self.change
        if change is None:
            return ""
        return "=" if change == 0 else f"+{change:,}" if change > 0 else f"{MINUS}{-change:,}"


def cases_by_code(results: Iterable[_HasChecks]) -> Counter[str]:
    """How many of the results fail each rule code (a case counts once per code)."""
    counts: Counter[str] = Counter()
    for result in results:
        counts.update({parse_check(check).code for check in result.failedChecks})
    return counts


def failures_by_rule(current: Iterable[_HasChecks], baseline: Iterable[_HasChecks] | None = None) -> tuple[RuleCount, ...]:
    """Every code failing a case now or in the baseline: the most failing now first, then by baseline count, then code."""
    now = cases_by_code(current)
    before = None if baseline is None else cases_by_code(baseline)
    codes = set(now) | set(before or ())
    rows = [RuleCount(code, now.get(code, 0), None if before is None else before.get(code, 0)) for code in codes]
    rows.sort(key=lambda r: (-r.current, -(r.baseline or 0), r.code))
    return tuple(rows)


def by_rule_markdown(rows: Sequence[RuleCount], heading: str = "## Failures by rule") -> list[str]:
    """The counts as a Markdown section (heading and table); nothing when no case fails a rule."""
    if not rows:
        return []
    with_baseline = any(r.baseline is not None for r in rows)
    if with_baseline:
        header, align = ["Rule", "Cases now", "Baseline", "Change"], ["---", "---:", "---:", "---:"]
        cells = [[escape_cell(r.code), f"{r.current:,}", f"{r.baseline or 0:,}", r.change_text] for r in rows]
    else:
        header, align = ["Rule", "Cases"], ["---", "---:"]
        cells = [[escape_cell(r.code), f"{r.current:,}"] for r in rows]
    return [heading, "", table(header, cells, align)]
