"""`sitegen build`: evaluate, diff against the baseline, record the run and write the site; the build itself is
site/pipeline.py's, this is what the command prints and writes around it."""

from __future__ import annotations

import sys
from pathlib import Path

from sitegen.commands.console import Console, write_outputs
from sitegen.compare.changes import known_failures, within_noise_cases
from sitegen.compare.job_summary import append_step_summary, build_summary_markdown
from sitegen.compare.terminal import diff_lines
from sitegen.defaults import (
    DEFAULT_BASELINE,
    DEFAULT_CASE_PAGES,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_JUNIT_KNOWN_FAILURES,
    DEFAULT_OUT,
    CasePages,
    JunitKnownFailures,
)
from sitegen.formatting import byte_size, percent, plural
from sitegen.plumbing.progress import progress_for
from sitegen.site import pipeline
from sitegen.site.pipeline import BuildOptions
from sitegen.suite.discovery import suite_folder, suite_inputs


def run(
    console: Console,
    *,
    cases: Path | None = None,
    fixtures: Path | None = None,
    config: Path | None = None,
    baseline: Path | None = None,
    out: Path | None = None,
    history: str | None = None,
    history_optional: bool = False,
    run_id: str | None = None,
    run_label: str | None = None,
    history_limit: int = DEFAULT_HISTORY_LIMIT,
    fail_on_regression: bool = False,
    jobs: int | None = None,
    cost_tolerance: float | None = None,
    case_pages: CasePages = DEFAULT_CASE_PAGES,
    junit_out: Path | None = None,
    junit_known_failures: JunitKnownFailures = DEFAULT_JUNIT_KNOWN_FAILURES,
    otlp_out: Path | None = None,
) -> int:
    """Build the site (from the suite found when no option names it), then the JUnit and OTLP files inside or beside
    it, the result lines and the job summary; 1 when `fail_on_regression` and anything regressed, else 0."""
    suite = suite_folder()
    cases, fixtures, config = suite_inputs(cases, fixtures, config, suite.cwd)
    options = BuildOptions(
        cases=cases, fixtures=fixtures, config=config, baseline=baseline,
        out=out if out is not None else suite.default(DEFAULT_OUT), history=history,
        history_optional=history_optional, run_id=run_id, run_label=run_label, history_limit=history_limit,
        fail_on_regression=fail_on_regression, workers=jobs, cost_tolerance=cost_tolerance, case_pages=case_pages,
        default_baseline=suite.default(DEFAULT_BASELINE),
    )
    result = pipeline.build_site(options, progress_for(sys.stderr, quiet=console.quiet))
    console.wrote(f"the site in {options.out}/")
    report, diff = result.report, result.diff
    for warning in result.warnings:
        console.warn(warning)
    if junit_out is not None or otlp_out is not None:
        # After the site is swapped in, so a JUnit or OTLP file inside --out is part of the new site.
        from sitegen.evaluation.otlp_export import results_as_otlp
        from sitegen.history.runs import build_time
        from sitegen.report.junit import junit_for_case_file

        changes = diff.caseChanges if diff is not None else []
        write_outputs([
            (junit_out, junit_for_case_file(
                report, options.cases, known_failures=known_failures(changes),
                within_noise=within_noise_cases(changes), known_failure_mode=junit_known_failures,
            ) if junit_out is not None else ""),
            (otlp_out, results_as_otlp(report, options.cases, options.fixtures, build_time()) if otlp_out is not None else ""),
        ], console)
    unchanged = f", {result.reused_pages} unchanged since the last build" if result.reused_pages else ""
    size = byte_size(result.site_bytes)
    console.say(
        f"site written to {options.out}/ ({size}: {plural(result.case_pages, 'case page')}{unchanged}); "
        f"pass rate {percent(report.passRate)}"
    )
    if diff is not None:
        console.say(f"against {result.baseline}: {diff_lines(diff, result.baseline)[0]}")
    if append_step_summary(build_summary_markdown(report, diff, by_rule=result.by_rule, warnings=result.warnings)):
        console.detail("appended the build summary to $GITHUB_STEP_SUMMARY")
    if result.exit_code:
        console.tell(diff_lines(diff, result.baseline)[1])
    return result.exit_code
