"""`sitegen build`: evaluate, diff against the baseline, record the run and write the site; the build itself is
site/pipeline.py's, this is what the command prints and writes around it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from sitegen.commands.console import command_console, write_outputs
from sitegen.commands.options import (
    BaselineOpt,
    CasesOpt,
    ConfigOpt,
    CostToleranceOpt,
    FixturesOpt,
    JunitOpt,
    OtlpOpt,
    QuietOpt,
    VerboseOpt,
)
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

if TYPE_CHECKING:
    from sitegen.site.build_values import BuildOptions


def run(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", help=f"The site folder, replaced as a whole. Default: {DEFAULT_OUT} in the suite's folder."),
    ] = None,
    history: Annotated[
        Optional[str],
        typer.Option(
            "--history",
            metavar="FILE_OR_URL",
            help="Run history to continue, a file or an http(s) URL, only read: the extended history goes to "
            "<out>/history.json. Default: <out>/history.json.",
        ),
    ] = None,
    history_optional: Annotated[
        bool,
        typer.Option("--history-optional", help="A --history that does not exist (no file, HTTP 404) starts a new history, with a warning."),
    ] = False,
    run_id: Annotated[
        Optional[str], typer.Option("--run-id", help="This run's id; a run with the same id is replaced. Default: the commit "
            "(one '+local' point for uncommitted changes; in CI a hash of commit and report).")
    ] = None,
    run_label: Annotated[Optional[str], typer.Option("--run-label", help="This run's label (e.g. 'PR #12'). Default: the commit.")] = None,
    history_limit: Annotated[int, typer.Option("--history-limit", help="Keep this many runs (at least 1).")] = DEFAULT_HISTORY_LIMIT,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 (after writing the site) when the diff has any regression.")
    ] = False,
    junit_out: JunitOpt = None,
    junit_known_failures: Annotated[
        JunitKnownFailures,
        typer.Option(
            "--junit-known-failures",
            help="In --junit, cases that also failed in the baseline: 'skip' (reported as skipped, so only what "
            "the change broke is red) or 'fail'.",
        ),
    ] = DEFAULT_JUNIT_KNOWN_FAILURES,
    otlp_out: OtlpOpt = None,
    cost_tolerance: CostToleranceOpt = None,
    case_pages: Annotated[
        CasePages,
        typer.Option(
            "--case-pages",
            help="Which cases get a page: 'all'; 'failing' (failing now, or regressed, fixed or within noise); "
            "'changed' (regressed, fixed, within noise or new; without a baseline, failing). The index lists every "
            "case; one without a page links its raw trace. For very big suites (docs/big-suites.md).",
        ),
    ] = DEFAULT_CASE_PAGES,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, help="Processes that build case pages and the case list's pages. Default: one per core for big suites."),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Evaluate, diff against the baseline, record the run and write the static report site.

    Example: sitegen build --out site --fail-on-regression --junit site/junit.xml
    """
    from sitegen.site.build_values import BuildOptions
    from sitegen.suite.discovery import suite_folder, suite_inputs

    suite = suite_folder()
    cases, fixtures, config = suite_inputs(cases, fixtures, config, suite.cwd)
    options = BuildOptions(
        cases=cases, fixtures=fixtures, config=config, baseline=baseline,
        out=out if out is not None else suite.default(DEFAULT_OUT), history=history,
        history_optional=history_optional, run_id=run_id, run_label=run_label, history_limit=history_limit,
        fail_on_regression=fail_on_regression, workers=jobs, cost_tolerance=cost_tolerance, case_pages=case_pages,
        default_baseline=suite.default(DEFAULT_BASELINE),
    )
    return _build_and_tell(options, junit_out, junit_known_failures, otlp_out)


def _build_and_tell(
    options: BuildOptions, junit_out: Path | None, junit_known_failures: JunitKnownFailures, otlp_out: Path | None
) -> int:
    """Build the site, then the JUnit and OTLP files inside or beside it, the result lines and the job summary; 1
    when --fail-on-regression and anything regressed, else 0."""
    from sitegen.compare.changes import known_failures, within_noise_cases
    from sitegen.compare.job_summary import append_step_summary, build_summary_markdown
    from sitegen.compare.terminal import diff_lines
    from sitegen.plumbing.progress import progress_for
    from sitegen.site import pipeline

    console = command_console()
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
