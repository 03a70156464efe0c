"""report.md: the report as GitHub-flavoured Markdown (eval/README.md, "The report"): the pass rate, the figures
(their labels declared with them, report/results.py), the verdicts, the failures by rule, a row per case, then
each failing case's checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sitegen.formatting import percent
from sitegen.report.failures_by_rule import by_rule_markdown, failures_by_rule
from sitegen.report.figures import figure_rows
from sitegen.report.mdtext import escape_cell, escape_inline, table
from sitegen.report.results import MISSING_VERDICT, CaseResult, Report, TrialFigures


def trial_count_note(result: CaseResult) -> str:
    """` (3/5 trials)` after a status when the case has a folder of trials; empty otherwise."""
    return "" if result.trialResults is None else f" ({result.passedTrials}/{result.trials} trials)"


def _coverage(result: CaseResult) -> str:
    return ", ".join(f"{tool} {'✓' if ok else '✗'}" for tool, ok in sorted(result.evidenceCoverage.items()))


# The case table: each column's header and how a result fills its cell.
_CASE_COLUMNS: tuple[tuple[str, Callable[[CaseResult], str]], ...] = (
    ("Case", lambda r: escape_cell(r.caseId)),
    ("Status", lambda r: r.status.label + trial_count_note(r)),
    ("Verdict", lambda r: escape_cell(r.verdict or MISSING_VERDICT)),
    ("Keywords", lambda r: f"{r.matchedKeywordCount}/{r.requiredKeywordCount}"),
    ("Evidence", lambda r: escape_cell(_coverage(r) or "—")),
    ("Failed checks", lambda r: escape_cell(", ".join(r.failed_codes) or "—")),
)
_CASE_HEADERS = [header for header, _ in _CASE_COLUMNS]


def result_markdown_row(result: CaseResult) -> str:
    """One result's row of report.md's case table (a build reuses it for unchanged cases)."""
    return table(_CASE_HEADERS, [[cell(result) for _, cell in _CASE_COLUMNS]]).rsplit("\n", 1)[1]


def trial_line(figures: TrialFigures) -> str:
    """The trials in one sentence: how many passed, the trial pass rate and its Wilson 95 % interval."""
    low, high = figures.interval
    return (
        f"**Trials**: {figures.passed} of {figures.total} passed, trial pass rate "
        f"{percent(figures.rate)} (95% interval {percent(low)}–{percent(high)})."
    )


def report_markdown(report: Report, title: str = "Diagnosis eval report", rows: Sequence[str] | None = None) -> str:
    """The report as GitHub-flavoured Markdown: summary, verdicts, a row per case, then the failures.

    `rows` are the results' result_markdown_row when already at hand.
    """
    lines = [f"# {escape_inline(title)}", ""]
    lines.append(
        f"**Pass rate {percent(report.passRate)}**: {report.passedCases} passed, {report.failedCases} failed, "
        f"{report.notRunCases} not run, {report.totalCases} cases in all."
    )
    if report.trial_figures is not None:
        lines += ["", trial_line(report.trial_figures)]
    lines.append("")
    lines.append(table(["Metric", "Value"], figure_rows(report), ["---", "---:"]))
    lines += ["", "## Verdicts", ""]
    lines.append(
        table(
            ["Verdict", "Cases"],
            [[escape_cell(v), str(n)] for v, n in sorted(report.verdictDistribution.items())],
            ["---", "---:"],
        )
    )
    by_rule = by_rule_markdown(failures_by_rule(report.results))
    if by_rule:
        lines += ["", *by_rule]
    lines += ["", "## Cases", ""]
    lines.append(table(_CASE_HEADERS, []))
    lines += [result_markdown_row(r) for r in report.results] if rows is None else rows
    failing = [r for r in report.results if r.failedChecks]
    if failing:
        lines += ["", "## Failed checks", ""]
        for r in failing:
            lines.append(f"### {escape_inline(r.caseId)}")
            lines.append("")
            lines += [f"- {escape_inline(check)}" for check in r.failedChecks]
            lines.append("")
        lines.pop()
    return "\n".join(lines) + "\n"
