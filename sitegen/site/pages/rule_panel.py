"""The index's failures-by-rule panel: each rule code with the cases failing it now and in the baseline, each count
linking to the index filtered to those cases; against a baseline the rules whose count did not move are folded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sitegen import formatting as fmt
from sitegen.report.failures_by_rule import RuleCount
from sitegen.site.html import urls


class RuleRow(NamedTuple):
    """One row of the failures-by-rule panel: a rule code and the cases failing it."""

    code: str
    href: str  # the index filtered to the cases failing it now; "" when none does
    current: str
    label: str  # what the count's link does, for a screen reader
    baseline: str  # "" without a baseline
    change: str  # +2, −1 or =; "" without a baseline
    change_css: str
    change_title: str


class RulePanel(NamedTuple):
    """The index's failures-by-rule panel."""

    rows: tuple[RuleRow, ...]  # against a baseline, the rules whose count moved; else every rule
    with_baseline: bool
    summary: str
    unchanged: tuple[RuleRow, ...]  # the rules failing as many cases as in the baseline: folded under the rows
    unchanged_summary: str


_RULE_CODE_LIMIT = 80


def _rule_row(count: RuleCount) -> RuleRow:
    change = count.change
    css = "" if not change else "rule-change rule-worse" if change > 0 else "rule-change rule-better"
    title = "" if count.baseline is None else f"{fmt.plural(count.current, 'case')} now, {count.baseline:,} in the baseline"
    # A report read from elsewhere may carry a check with no colon, all of it its code: shown cut, not linked.
    code = fmt.shorten(count.code, _RULE_CODE_LIMIT)
    return RuleRow(
        code=code,
        href=urls.index_filter(code=code).removeprefix(urls.INDEX) if count.current and code == count.code else "",
        current=f"{count.current:,}",
        label=f"Show the {fmt.plural(count.current, 'case')} failing {code}",
        baseline="" if count.baseline is None else f"{count.baseline:,}",
        change=count.change_text,
        change_css=css or "rule-change",
        change_title=title,
    )


def rule_panel(by_rule: Sequence[RuleCount]) -> RulePanel | None:
    """The failures-by-rule panel: each code with its counts (report/failures_by_rule.py), or None if none fails."""
    if not by_rule:
        return None
    failing = sum(1 for count in by_rule if count.current)
    with_baseline = any(c.baseline is not None for c in by_rule)
    summary = f"{fmt.plural(failing, 'rule')} failing at least one case; a case failing several counts under each"
    # Against a baseline the rules whose count did not move are folded: the first screen shows what changed.
    moved = [c for c in by_rule if not with_baseline or c.change]
    same = [c for c in by_rule if with_baseline and not c.change]
    unchanged_summary = ""
    if same:
        lead = "Every rule fails" if not moved else f"{fmt.plural(len(same), 'other rule')}: each fails"
        unchanged_summary = f"{lead} as many cases as in the baseline"
    return RulePanel(tuple(map(_rule_row, moved)), with_baseline, summary, tuple(map(_rule_row, same)), unchanged_summary)
