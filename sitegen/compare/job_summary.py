"""The short Markdown summary of a run for a CI job page (GitHub's GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sitegen.errors import BadInput
from sitegen.formatting import NOT_RECORDED, dollars, percent, tokens
from sitegen.report.failures_by_rule import RuleCount, by_rule_markdown
from sitegen.report.mdtext import escape_cell, escape_inline, table
from sitegen.report.status import Status

if TYPE_CHECKING:
    from sitegen.compare.diff_report import DiffReport
    from sitegen.report.results import Report

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
# GitHub drops a step summary over 1 MiB altogether; stay well below it and say what was cut.
SUMMARY_LIMIT_BYTES = 512 * 1024
FAILING_ROWS = 50
WARNING_ROWS = 20


def fit_summary(markdown: str, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    """The Markdown cut at a line boundary to at most `limit` UTF-8 bytes, with a note when cut."""
    if len(markdown.encode("utf-8")) <= limit:
        return markdown
    note = "\n\n_Summary truncated: the full report and diff are in the site's report.md and diff.md._\n"
    budget = limit - len(note.encode("utf-8"))
    kept: list[str] = []
    used = 0
    for line in markdown.splitlines(keepends=True):
        size = len(line.encode("utf-8"))
        if used + size > budget:
            break
        kept.append(line)
        used += size
    return "".join(kept).rstrip("\n") + note


def append_step_summary(markdown: str) -> bool:
    """Append Markdown to the file named by GITHUB_STEP_SUMMARY; False (and nothing written) when unset."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return False
    text = fit_summary(markdown)
    try:
        with open(target, "a", encoding="utf-8") as handle:
            # Several commands in one step share the file: keep their summaries apart.
            if handle.tell() > 0:
                handle.write("\n")
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise BadInput(target, f"cannot append the job summary ({STEP_SUMMARY_ENV}): {exc.strerror}") from None
    return True


def report_headline(report: Report) -> str:
    """One line: how many cases passed, failed and did not run, and the pass rate."""
    mark = "✅" if report.passedCases == report.totalCases else "❌"
    line = (
        f"{mark} **{report.passedCases} of {report.totalCases} cases passed** (pass rate {percent(report.passRate)}) · "
        f"{report.failedCases} failed · {report.notRunCases} not run"
    )
    figures = report.trial_figures
    if figures is not None:
        low, high = figures.interval
        line += (
            f" · {figures.passed} of {figures.total} trials passed "
            f"({percent(figures.rate)}, 95% interval {percent(low)}–{percent(high)})"
        )
    return line + spent_clause(report)


def spent_clause(report: Report) -> str:
    """` · per passing case: 1,500 tokens, $0.006` when some passing case's trace records usage (a figure not
    recorded said so, never 0); empty when none does (eval/README.md, "Tokens and cost")."""
    if report.tokensPerPassingCase is None and report.costPerPassingCase is None:
        return ""
    cost = dollars(report.costPerPassingCase)
    return f" · per passing case: {tokens(report.tokensPerPassingCase)} tokens, {'cost ' if cost == NOT_RECORDED else ''}{cost}"


def _failing_cases(report: Report) -> list[str]:
    from sitegen.report.report_markdown import trial_count_note

    failing = [result for result in report.results if result.status is not Status.PASSED]
    if not failing:
        return []
    rows = [
        [
            escape_cell(r.caseId),
            r.status.word + trial_count_note(r),
            escape_cell(", ".join(r.failed_codes) or "—"),
        ]
        for r in failing[:FAILING_ROWS]
    ]
    lines = ["", f"### Failing cases ({len(failing)})", "", table(["Case", "Status", "Failed checks"], rows)]
    if len(failing) > FAILING_ROWS:
        lines += ["", f"…and {len(failing) - FAILING_ROWS} more in the full report."]
    return lines


def _warnings(warnings: Sequence[str]) -> list[str]:
    if not warnings:
        return []
    shown = [f"- {escape_inline(warning)}" for warning in warnings[:WARNING_ROWS]]
    more = [f"- …and {len(warnings) - WARNING_ROWS} more in the job's log."] if len(warnings) > WARNING_ROWS else []
    return ["", f"### Warnings ({len(warnings)})", "", *shown, *more]


def build_summary_markdown(
    report: Report,
    diff: DiffReport | None = None,
    title: str = "Diagnosis eval",
    by_rule: Sequence[RuleCount] = (),
    warnings: Sequence[str] = (),
) -> str:
    """The job summary of a build: with a baseline the diff's cases first, then this run's counts; else counts and
    failures; then the failures by rule (`by_rule`, rule_counts.failures_by_rule) and the build's warnings (a
    site nearing GitHub Pages' limit fails only later, at the deploy)."""
    rules = ["", *by_rule_markdown(by_rule, heading="### Failures by rule")] if by_rule else []
    if diff is None:
        lines = [f"## {escape_inline(title)}", "", report_headline(report), *_failing_cases(report), *rules, *_warnings(warnings)]
        return "\n".join(lines) + "\n"
    from sitegen.compare.diff_markdown import diff_summary_markdown

    return "\n".join([diff_summary_markdown(diff, title=title), report_headline(report), *rules, *_warnings(warnings)]) + "\n"
