"""The baseline diff as plain text for a terminal (`sitegen diff` without --json or --markdown): the same
headline, gate and cases as diff.md, without Markdown's escapes and tables."""

from __future__ import annotations

import re

from sitegen.compare.changes import CHANGED as BEHAVES_DIFFERENTLY
from sitegen.compare.changes import BREAKING, FIXED, NEW, REMOVED, STILL_FAILING, WITHIN_NOISE, CaseChange
from sitegen.compare.diff_report import DiffReport
from sitegen.compare.items import CHANGED, IMPROVEMENT, REGRESSION, DiffItem
from sitegen.compare.whatchanged import NO_EVIDENCE, NO_INPUTS, phrase_text, what_changed
from sitegen.compare.wording import (
    CHANGED_TITLE,
    DEFINITIONS_CHANGED,
    DIFFERENCE_TITLES,
    DIFFERENCES_HEADING,
    STATUS_WORDS,
    format_cases,
    format_pass_rate,
    gate_text,
    reasons_text,
    status_change,
)

_ICONS = {BREAKING: "▼", BEHAVES_DIFFERENTLY: "Δ", WITHIN_NOISE: "≈", FIXED: "▲", NEW: "✚", STILL_FAILING: "≡", REMOVED: "⊖"}
_CASE_SECTIONS = ((BEHAVES_DIFFERENTLY, CHANGED_TITLE), (WITHIN_NOISE, "Within noise"), (FIXED, "Fixed cases"),
                  (NEW, "New cases"), (STILL_FAILING, "Known failures"))
_ITEM_SECTIONS = ((REGRESSION, "▼"), (IMPROVEMENT, "▲"), (CHANGED, "●"))
INDENT = "  "
# Control characters (an escape sequence in a hostile case id would drive the terminal) and the bidirectional
# overrides that reorder what is shown: written as escapes instead.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _safe(line: str) -> str:
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), line)


def _case_lines(change: CaseChange, icon: str, diff: DiffReport) -> list[str]:
    """One case: its icon, id and status change, then the checks that are new (or resolved), one per line."""
    if change.change == REMOVED:
        return [f"{INDENT}⊖ {change.caseId}: removed (missing from the current report)"]
    moved = STATUS_WORDS[change.currentStatus] if change.change == NEW else status_change(change)
    flagged = " [definition changed: not comparable]" if change.caseId in diff.changedDefinitions else ""
    lines = [f"{INDENT}{icon} {change.caseId}: {moved}{flagged}"]
    if change.change == BEHAVES_DIFFERENTLY:
        lines.append(f"{INDENT * 3}what changed: {phrase_text(what_changed(change.behaviour))} ({reasons_text(change)})")
    new_word = "failed" if change.change == NEW else "new"
    lines += [f"{INDENT * 3}{new_word}: {check}" for check in change.newFailedChecks]
    lines += [f"{INDENT * 3}resolved: {check}" for check in change.resolvedChecks]
    return lines


def _item_line(item: DiffItem, icon: str) -> str:
    return f"{INDENT}{icon} {item.message}"


def diff_text(diff: DiffReport) -> str:
    """The whole diff for a terminal: headline, pass rate, gate, the cases by change, then every item."""
    headline = diff.headline()
    lines = [
        "Baseline diff",
        f"{INDENT}{format_cases(headline)}",
        f"{INDENT}{format_pass_rate(headline)}: {diff.baselinePassedCases}/{diff.baselineTotalCases} cases passed "
        f"in the baseline, {diff.currentPassedCases}/{diff.currentTotalCases} now",
        f"{INDENT}{'Regression: ' + gate_text(diff) if diff.hasRegression else 'No regression'}",
    ]
    if diff.changedDefinitions:
        lines.append(f"{INDENT}⚠ {DEFINITIONS_CHANGED}: {', '.join(diff.changedDefinitions)}")
    if not diff.baselineEvidence or not diff.baselineInputs:
        lines.append(f"{INDENT}ℹ {NO_EVIDENCE if not diff.baselineEvidence else NO_INPUTS}")
    breaking = [change for change in diff.caseChanges if change.change in BREAKING]
    if breaking:
        lines += ["", f"Regressed and removed cases ({len(breaking)})"]
        for change in breaking:
            lines += _case_lines(change, _ICONS[BREAKING], diff)
    for kind, title in _CASE_SECTIONS:
        changes = [change for change in diff.caseChanges if change.change == kind]
        if changes:
            lines += ["", f"{title} ({len(changes)})"]
            for change in changes:
                lines += _case_lines(change, _ICONS[kind], diff)
    if diff.items:
        lines += ["", f"{DIFFERENCES_HEADING} ({len(diff.items)})"]
    for kind, icon in _ITEM_SECTIONS:
        items = [item for item in diff.items if item.type == kind]
        if items:
            lines += ["", f"{DIFFERENCE_TITLES[kind]} ({len(items)})", *(_item_line(item, icon) for item in items)]
    if not diff.items:
        lines += ["", "No differences: the current report matches the baseline."]
    return "\n".join(_safe(line) for line in lines) + "\n"
