"""The baseline diff as GitHub-flavoured Markdown for a pull-request comment or a CI job summary.

Both lead with the cases (compare/changes.py's headline): which cases regressed or were removed and the
rules that broke, then known failures, fixed and new cases, then the pass rate; the metric items follow.
"""

from __future__ import annotations

from sitegen.checks import check_codes
from sitegen.compare.changes import TEXT_ORDER, CaseChange, ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import DiffItem, ItemType, Metric, metric_label
from sitegen.compare.whatchanged import NO_EVIDENCE, NO_INPUTS, NO_MEANING, phrase_text, what_changed
from sitegen.compare.where import step_text, streak_cell
from sitegen.compare.wording import (
    DEFINITIONS_CHANGED,
    DIFFERENCES_HEADING,
    STATUS_WORDS,
    describe_delta,
    describe_value,
    format_cases,
    gate_text,
    item_message,
    pass_rate_change,
    reasons_text,
    status_change,
)
from sitegen.defaults import FOLD_AFTER
from sitegen.formatting import plural
from sitegen.report.mdtext import escape_cell, escape_inline, table
from sitegen.report.status import Status

NOT_COMPARABLE = "case changed — not comparable"
# The passing cases that behave differently a job summary lists (GitHub drops a summary over 1 MiB); diff.md has all.
SUMMARY_CHANGED_ROWS = 50
_SECTIONS = {ItemType.REGRESSION: "Regressions", ItemType.IMPROVEMENT: "Improvements", ItemType.CHANGED: "Changes"}


def _headline(diff: DiffReport) -> list[str]:
    headline = diff.headline()
    lines = [
        f"**{format_cases(headline, escape_inline)}**",
        "",
        f"Pass rate {pass_rate_change(headline)}: "
        f"{diff.baselinePassedCases}/{diff.baselineTotalCases} cases passed in the baseline, "
        f"{diff.currentPassedCases}/{diff.currentTotalCases} now.",
        "",
    ]
    if diff.step is not None:
        icon = "📉" if diff.step.after < diff.step.before else "📈"
        lines += [f"{icon} {_capital(step_text(diff.step, escape_inline))}.", ""]
    if diff.hasRegression:
        flagged = sum(1 for c in diff.caseChanges if c.change.breaking and c.caseId in diff.changedDefinitions)
        note = f" ({flagged} in cases whose definition changed: not comparable)" if flagged else ""
        lines.append(f"❌ **Gate fails**: {gate_text(diff, escape_inline)}{note}")
    else:
        tolerance = f"{diff.costTolerance * 100:g}%"
        lines.append(f"✅ **No regression**: no case regressed or was removed, and no cost signal rose by more "
                     f"than {tolerance} over the cases in both reports.")
    if diff.changedDefinitions:
        names = ", ".join(f"`{escape_inline(case_id)}`" for case_id in diff.changedDefinitions)
        lines += ["", f"⚠️ {DEFINITIONS_CHANGED}: {names}"]
    if not diff.baselineEvidence:
        lines += ["", f"ℹ️ **What the agent did**: {NO_EVIDENCE}."]
    elif not diff.baselineInputs:
        lines += ["", f"ℹ️ **Tool inputs**: {NO_INPUTS}."]
    elif not diff.baselineMeaning:
        lines += ["", f"ℹ️ **Changes of meaning**: {NO_MEANING}."]
    if not diff.items:
        lines += ["", "No differences: the current report matches the baseline."]
    return lines


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


SINCE_HEADING = "Failing since"


def _since(diff: DiffReport) -> list[str]:
    """The Failing since heading, when the diff was made with the history of record (a build), else nothing."""
    return [SINCE_HEADING] if diff.failingSince is not None else []


def since_cells(change: CaseChange, diff: DiffReport) -> list[str]:
    """A case's Failing since cell (compare/where.py), "—" when it does not fail; none without the history."""
    if diff.failingSince is None:
        return []
    streak = diff.failingSince.get(change.caseId)
    return [streak_cell(streak, escape_cell) if streak is not None else "—"]


def _case_name(change: CaseChange, diff: DiffReport) -> str:
    cell = escape_cell(change.caseId)
    if change.change.breaking and change.caseId in diff.changedDefinitions:
        cell += f" ⚠️ **{NOT_COMPARABLE}**"
    return cell


def _checks_cell(checks: tuple[str, ...] | list[str]) -> str:
    return escape_cell("; ".join(checks)) if checks else "—"


def _codes_cell(checks: tuple[str, ...] | list[str]) -> str:
    return escape_cell(", ".join(check_codes(checks))) if checks else "—"


def _what_changed_cell(change: CaseChange) -> str:
    return phrase_text(what_changed(change.behaviour), escape_cell) or "—"


def not_evaluated_table(diff: DiffReport) -> str:
    """The cases that could not be evaluated now, each with its status then and now and why (the file and place)."""
    rows = [[escape_cell(c.caseId), escape_cell(status_change(c) if c.baselineStatus else "new, not run"),
             escape_cell(c.reason or Status.NOT_RUN.word)] for c in diff.caseChanges if c.change is ChangeKind.NOT_EVALUATED]  # fmt: skip
    return table(["Case", "Change", "Why (where)"], rows)


def _not_evaluated_section(diff: DiffReport, level: str) -> list[str]:
    count = diff.caseChangeCounts.get(ChangeKind.NOT_EVALUATED, 0)
    return ["", f"{level} {ChangeKind.NOT_EVALUATED.title} ({count})", "", not_evaluated_table(diff)] if count else []


def breaking_table(diff: DiffReport) -> str:
    """The regressed and removed cases, each with the rule codes that broke, what the agent did differently (when
    the baseline records it) and the failed checks that are new."""
    phrased = diff.baselineEvidence
    rows = []
    for change in diff.caseChanges:
        if not change.change.breaking:
            continue
        if change.change is ChangeKind.REMOVED:
            rows.append([_case_name(change, diff), change.change.word, "—", *(["—"] if phrased else []),
                         *since_cells(change, diff), "missing from the current report"])
        else:
            rows.append([_case_name(change, diff), status_change(change), _codes_cell(change.newFailedChecks),
                         *([_what_changed_cell(change)] if phrased else []), *since_cells(change, diff),
                         _checks_cell(change.newFailedChecks)])
    return table(["Case", "Change", "Broken rules", *(["What changed"] if phrased else []), *_since(diff),
                  "New failed checks"], rows)


def changed_table(diff: DiffReport, most: int | None = None) -> str:
    """The passing cases that behave differently (the first `most` of them), each with what the agent did
    differently and why it counts."""
    changes = [c for c in diff.caseChanges if c.change is ChangeKind.CHANGED]
    rows = [[_case_name(c, diff), _what_changed_cell(c), escape_cell(reasons_text(c))] for c in changes[:most]]
    return table(["Case", "What changed", "Why"], rows)


def _changes_table(diff: DiffReport, kind: ChangeKind) -> str:
    if kind is ChangeKind.CHANGED:
        return changed_table(diff)
    changes = [change for change in diff.caseChanges if change.change is kind]
    if kind is ChangeKind.FIXED:
        if diff.baselineEvidence:
            rows = [[_case_name(c, diff), status_change(c), _checks_cell(c.resolvedChecks), _what_changed_cell(c)] for c in changes]
            return table(["Case", "Change", "Resolved checks", "What changed"], rows)
        rows = [[_case_name(c, diff), status_change(c), _checks_cell(c.resolvedChecks)] for c in changes]
        return table(["Case", "Change", "Resolved checks"], rows)
    if kind is ChangeKind.NEW:
        rows = [[_case_name(c, diff), STATUS_WORDS[c.currentStatus], _codes_cell(c.newFailedChecks), *since_cells(c, diff)]
                for c in changes]
        return table(["Case", "Status", "Failed rules", *_since(diff)], rows)
    since = kind is ChangeKind.STILL_FAILING
    rows = [[_case_name(c, diff), status_change(c), *(since_cells(c, diff) if since else []),
             _checks_cell(c.newFailedChecks), _checks_cell(c.resolvedChecks)] for c in changes]
    return table(["Case", "Change", *(_since(diff) if since else []), "New failed checks", "Resolved checks"], rows)


def _folded(title: str, body: str, level: str, fold: bool, count: int) -> list[str]:
    lines = ["", f"{level} {title}", ""]
    if fold and count > FOLD_AFTER:
        # A blank line after <summary> lets GitHub render the Markdown table inside <details>.
        return lines + ["<details>", f"<summary>Show all {title.lower()}</summary>", "", body, "", "</details>"]
    return lines + [body]


def _case_sections(diff: DiffReport, level: str) -> list[str]:
    lines = _not_evaluated_section(diff, level)  # first, never folded: the gate fails on them
    if diff.caseRegressionCount:
        lines += _folded(f"{ChangeKind.REGRESSED.title} ({diff.caseRegressionCount})", breaking_table(diff), level,
                         False, diff.caseRegressionCount)
    for kind in TEXT_ORDER:
        count = diff.caseChangeCounts.get(kind, 0)
        if count:
            lines += _folded(f"{kind.title} ({count})", _changes_table(diff, kind), level, True, count)
    return lines


def _case_cell(item: DiffItem, diff: DiffReport) -> str:
    if item.caseId is None:
        return "_all cases_"
    cell = escape_cell(item.caseId)
    if item.type == ItemType.REGRESSION and item.caseId in diff.changedDefinitions:
        cell += f" ⚠️ **{NOT_COMPARABLE}**"
    return cell


def _change_cell(item: DiffItem) -> str:
    before = escape_cell(describe_value(item.metric, item.baselineValue))
    after = escape_cell(describe_value(item.metric, item.currentValue))
    delta = describe_delta(item.metric, item.delta)
    return f"{before} → {after}" + (f" ({escape_cell(delta)})" if delta else "")


def _items_table(items: list[DiffItem], diff: DiffReport) -> str:
    rows = [
        [_case_cell(item, diff), escape_cell(metric_label(item.metric)), _change_cell(item), escape_cell(item_message(item))]
        for item in items
    ]
    return table(["Case", "Figure", "Before → after", "Message"], rows)


def _section(kind: str, diff: DiffReport, level: str, fold: bool) -> list[str]:
    items = [item for item in diff.items if item.type == kind]
    if not items:
        return []
    return _folded(f"{_SECTIONS[kind]} ({len(items)})", _items_table(items, diff), level, fold, len(items))


def diff_markdown(diff: DiffReport) -> str:
    """The whole diff: the case headline, the cases by change, then the metric items (regressions never folded)."""
    lines = ["# Baseline diff", "", *_headline(diff), *_case_sections(diff, "##")]
    if diff.items:
        lines += ["", f"## {DIFFERENCES_HEADING}", "",
                  f"{plural(diff.regressionCount, 'regression')} · "
                  f"{plural(diff.improvementCount, 'improvement')} · "
                  f"{plural(diff.changedCount, 'change')}"]
    lines += _section(ItemType.REGRESSION, diff, "###", fold=False)
    lines += _section(ItemType.IMPROVEMENT, diff, "###", fold=True)
    lines += _section(ItemType.CHANGED, diff, "###", fold=True)
    return "\n".join(lines) + "\n"


def _other_regression_items(diff: DiffReport) -> list[DiffItem]:
    """REGRESSION items the case tables do not already say: costs, and losses inside cases that did not regress (a
    case that could not be evaluated lost everything only because it was not judged)."""
    listed = {change.caseId for change in diff.caseChanges if change.change.fails_gate}
    return [item for item in diff.items
            if item.type == ItemType.REGRESSION and item.metric != Metric.PASS_RATE and item.caseId not in listed]


def diff_summary_markdown(diff: DiffReport, title: str = "Baseline diff") -> str:
    """For a GitHub job summary: the headline, every regressed and removed case (never folded), the passing cases that
    behave differently (the first SUMMARY_CHANGED_ROWS), other regression signals."""
    lines = [f"## {escape_inline(title)}", "", *_headline(diff), *_not_evaluated_section(diff, "###")]
    if diff.caseRegressionCount:
        lines += ["", f"### {ChangeKind.REGRESSED.title} ({diff.caseRegressionCount})", "", breaking_table(diff)]
    changed = diff.caseChangeCounts.get(ChangeKind.CHANGED, 0)
    if changed:
        shown = min(changed, SUMMARY_CHANGED_ROWS)
        lines += _folded(f"{ChangeKind.CHANGED.title} ({changed:,})", changed_table(diff, shown), "###", True, shown)
        if changed > shown:
            lines += ["", f"…and {changed - shown:,} more in diff.md."]
    others = _other_regression_items(diff)
    if others:
        lines += ["", f"### Other regression signals ({len(others)})", "", _items_table(others, diff)]
    rest = diff.improvementCount + diff.changedCount
    if rest:
        lines += ["", f"{plural(rest, 'other difference')} (improvements "
                      "and changes; fixed, new and known-failing cases) are in the full diff."]
    return "\n".join(lines) + "\n"
