"""The baseline diff as GitHub-flavoured Markdown for a pull-request comment or a CI job summary."""

from __future__ import annotations

from sitegen.diff import CHANGED, IMPROVEMENT, REGRESSION, DiffItem, DiffReport, describe_delta, describe_value
from sitegen.formatting import percent
from sitegen.mdtext import escape_cell, escape_inline, table

FOLD_AFTER = 10
NOT_COMPARABLE = "case changed — not comparable"
_SECTIONS = {REGRESSION: "Regressions", IMPROVEMENT: "Improvements", CHANGED: "Changes"}


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _headline(diff: DiffReport) -> list[str]:
    points = describe_delta("passRate", diff.currentPassRate - diff.baselinePassRate)
    lines = [
        f"**Pass rate {percent(diff.baselinePassRate)} → {percent(diff.currentPassRate)} ({points})**: "
        f"{diff.baselinePassedCases}/{diff.baselineTotalCases} cases passed in the baseline, "
        f"{diff.currentPassedCases}/{diff.currentTotalCases} now.",
        "",
        f"{_plural(diff.regressionCount, 'regression', 'regressions')} · "
        f"{_plural(diff.improvementCount, 'improvement', 'improvements')} · "
        f"{_plural(diff.changedCount, 'change', 'changes')}",
        "",
    ]
    if diff.hasRegression:
        flagged = sum(1 for item in diff.regressions if item.caseId in diff.changedDefinitions)
        note = f" ({flagged} in cases whose definition changed: not comparable)" if flagged else ""
        lines.append(f"❌ **{_plural(diff.regressionCount, 'regression', 'regressions')}**{note}")
    else:
        lines.append("✅ **No regressions**")
    if diff.changedDefinitions:
        names = ", ".join(f"`{escape_inline(case_id)}`" for case_id in diff.changedDefinitions)
        lines += ["", f"⚠️ Case definitions changed since the baseline (results not comparable): {names}"]
    if not diff.items:
        lines += ["", "No differences: the current report matches the baseline."]
    return lines


def _case_cell(item: DiffItem, diff: DiffReport) -> str:
    if item.caseId is None:
        return "_all cases_"
    cell = escape_cell(item.caseId)
    if item.type == REGRESSION and item.caseId in diff.changedDefinitions:
        cell += f" ⚠️ **{NOT_COMPARABLE}**"
    return cell


def _change_cell(item: DiffItem) -> str:
    before = escape_cell(describe_value(item.metric, item.baselineValue))
    after = escape_cell(describe_value(item.metric, item.currentValue))
    delta = describe_delta(item.metric, item.delta)
    return f"{before} → {after}" + (f" ({escape_cell(delta)})" if delta else "")


def _items_table(items: list[DiffItem], diff: DiffReport) -> str:
    rows = [
        [_case_cell(item, diff), escape_cell(item.metric), _change_cell(item), escape_cell(item.message)]
        for item in items
    ]
    return table(["Case", "Metric", "Before → after", "Message"], rows)


def _section(kind: str, diff: DiffReport, level: str, fold: bool) -> list[str]:
    items = [item for item in diff.items if item.type == kind]
    if not items:
        return []
    title = f"{_SECTIONS[kind]} ({len(items)})"
    lines = ["", f"{level} {title}", ""]
    if fold and len(items) > FOLD_AFTER:
        # A blank line after <summary> lets GitHub render the Markdown table inside <details>.
        return lines + ["<details>", f"<summary>Show all {title.lower()}</summary>", "", _items_table(items, diff), "",
                        "</details>"]
    return lines + [_items_table(items, diff)]


def diff_markdown(diff: DiffReport) -> str:
    """The whole diff: headline, then regressions (never folded), improvements and changes (folded when long)."""
    lines = ["# Baseline diff", "", *_headline(diff)]
    lines += _section(REGRESSION, diff, "##", fold=False)
    lines += _section(IMPROVEMENT, diff, "##", fold=True)
    lines += _section(CHANGED, diff, "##", fold=True)
    return "\n".join(lines) + "\n"


def diff_summary_markdown(diff: DiffReport) -> str:
    """The headline and the regressions only, for a GitHub job summary."""
    lines = ["## Baseline diff", "", *_headline(diff)]
    lines += _section(REGRESSION, diff, "###", fold=False)
    rest = diff.improvementCount + diff.changedCount
    if rest:
        lines += ["", f"{_plural(rest, 'other difference', 'other differences')} (improvements and changes) "
                      "are in the full diff."]
    return "\n".join(lines) + "\n"
