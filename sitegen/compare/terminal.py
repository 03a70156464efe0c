"""The baseline diff as plain text for a terminal: `sitegen diff` without --json or --markdown (the same
headline, gate and cases as diff.md, without Markdown's escapes and tables), and the result lines `diff` and
`build` print."""

from __future__ import annotations

from pathlib import Path

from sitegen.compare.changes import TEXT_ORDER, CaseChange, ChangeKind
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import DiffItem, ItemType
from sitegen.compare.whatchanged import NO_EVIDENCE, NO_INPUTS, NO_MEANING, phrase_text, terminal_lines, what_changed
from sitegen.compare.wording import (
    DEFINITIONS_CHANGED,
    DIFFERENCE_TITLES,
    DIFFERENCES_HEADING,
    STATUS_WORDS,
    differences_summary,
    format_cases,
    format_headline,
    format_pass_rate,
    gate_line,
    gate_text,
    item_message,
    reasons_text,
    status_change,
)
from sitegen.formatting import terminal_line
from sitegen.report.status import Status

_ITEM_SECTIONS = ((ItemType.REGRESSION, "▼"), (ItemType.IMPROVEMENT, "▲"), (ItemType.CHANGED, "●"))
INDENT = "  "


def _case_lines(change: CaseChange, diff: DiffReport) -> list[str]:
    """One case: its icon, id and status change, then the checks that are new (or resolved), one per line."""
    kind = change.change
    if kind is ChangeKind.REMOVED:
        return [f"{INDENT}{kind.icon} {change.caseId}: {kind.word} (missing from the current report)"]
    if kind is ChangeKind.NOT_EVALUATED:
        moved = status_change(change) if change.baselineStatus else "new, not run"
        return [f"{INDENT}{kind.icon} {change.caseId}: {moved}", f"{INDENT * 3}why: {change.reason or Status.NOT_RUN.word}"]
    moved = STATUS_WORDS[change.currentStatus] if kind is ChangeKind.NEW else status_change(change)
    flagged = " [definition changed: not comparable]" if change.caseId in diff.changedDefinitions else ""
    lines = [f"{INDENT}{kind.icon} {change.caseId}: {moved}{flagged}"]
    if kind is ChangeKind.CHANGED:
        lines.append(f"{INDENT * 3}what changed: {phrase_text(what_changed(change.behaviour))} ({reasons_text(change)})")
    # A new case's failed checks are all it has; another case's are those that did not fail in the baseline.
    new_word = Status.FAILED.word if kind is ChangeKind.NEW else ChangeKind.NEW.word
    lines += [f"{INDENT * 3}{new_word}: {check}" for check in change.newFailedChecks]
    lines += [f"{INDENT * 3}resolved: {check}" for check in change.resolvedChecks]
    return lines


def _item_line(item: DiffItem, icon: str) -> str:
    return f"{INDENT}{icon} {item_message(item)}"


def diff_text(diff: DiffReport) -> str:
    """The whole diff for a terminal: headline, pass rate, gate, the cases by change, then every item."""
    headline = diff.headline()
    lines = [
        "Baseline diff",
        f"{INDENT}{format_cases(headline)}",
        f"{INDENT}{format_pass_rate(headline)}: {diff.baselinePassedCases}/{diff.baselineTotalCases} cases passed "
        f"in the baseline, {diff.currentPassedCases}/{diff.currentTotalCases} now",
        f"{INDENT}{'Gate fails: ' + gate_text(diff) if diff.hasRegression else 'No regression'}",
    ]
    if diff.changedDefinitions:
        lines.append(f"{INDENT}⚠ {DEFINITIONS_CHANGED}: {', '.join(diff.changedDefinitions)}")
    if not diff.baselineEvidence or not diff.baselineInputs:
        lines.append(f"{INDENT}ℹ {NO_EVIDENCE if not diff.baselineEvidence else NO_INPUTS}")
    elif not diff.baselineMeaning:
        lines.append(f"{INDENT}ℹ {NO_MEANING}")
    unjudged = [change for change in diff.caseChanges if change.change is ChangeKind.NOT_EVALUATED]
    if unjudged:
        lines += ["", f"{ChangeKind.NOT_EVALUATED.title} ({len(unjudged)})"]
        for change in unjudged:
            lines += _case_lines(change, diff)
    breaking = [change for change in diff.caseChanges if change.change.breaking]
    if breaking:
        lines += ["", f"{ChangeKind.REGRESSED.title} ({len(breaking)})"]
        for change in breaking:
            lines += _case_lines(change, diff)
    for kind in TEXT_ORDER:
        changes = [change for change in diff.caseChanges if change.change is kind]
        if changes:
            lines += ["", f"{kind.title} ({len(changes)})"]
            for change in changes:
                lines += _case_lines(change, diff)
    if diff.items:
        lines += ["", f"{DIFFERENCES_HEADING} ({len(diff.items)})"]
    for kind, icon in _ITEM_SECTIONS:
        items = [item for item in diff.items if item.type == kind]
        if items:
            lines += ["", f"{DIFFERENCE_TITLES[kind]} ({len(items)})", *(_item_line(item, icon) for item in items)]
    if not diff.items:
        lines += ["", "No differences: the current report matches the baseline."]
    # Each line made safe on its own, so a line break inside an id or a message is written as `\n` too.
    return "\n".join(terminal_line(line) for line in lines) + "\n"


def diff_lines(diff: DiffReport, baseline: Path | None) -> tuple[str, str]:
    """The terminal's diff lines (the cases first, then the pass rate; then what the agent did differently in each
    regressed and fixed case) and the gate's reason."""
    lines = "".join(f"\n{line}" for line in terminal_lines(diff))
    return f"{format_headline(diff.headline())}; {differences_summary(diff)}{lines}", gate_line(diff, baseline)
