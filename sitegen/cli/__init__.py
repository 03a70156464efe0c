"""The `sitegen` command line: thin Typer wrappers over the library; errors become exit codes here."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer

from sitegen import __version__, defaults
from sitegen.cli.options import (
    CONTRADICTION,
    QUIET_HELP,
    VERBOSE_HELP,
    BaselineOpt,
    CasePages,
    CasesOpt,
    ConfigOpt,
    CostToleranceOpt,
    FixturesOpt,
    JunitOpt,
    KnownFailures,
    QuietOpt,
    VerboseOpt,
    Verbosity,
)
from sitegen.defaults import (
    DEFAULT_BASELINE_DIR,
    DEFAULT_CASES,
    DEFAULT_CONFIG_PATH,
    DEFAULT_FIXTURES,
    DEFAULT_HISTORY_LIMIT,
    DEFAULT_OUT,
)
from sitegen.errors import INTERNAL_ERROR_EXIT_CODE, SitegenError, SystemRefused

app = typer.Typer(
    name="sitegen",
    help="Evaluate saved diagnosis-agent traces against fixed cases, diff against a baseline, build a report site.",
    epilog="Example: sitegen --quiet evaluate --junit out/junit.xml  (global options go before or after the command)",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_Command = TypeVar("_Command", bound=Callable[..., Any])


def command(function: _Command) -> _Command:
    """Register `function` as a command whose sitegen errors become one message on stderr and their exit code."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return function(*args, **kwargs)
            except OSError as exc:  # one the code did not expect: a system refusal all the same, not a bug report
                raise SystemRefused.from_os_error(exc) from None
        except SitegenError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except (typer.Exit, typer.Abort, typer.BadParameter):
            raise
        except Exception:  # a bug: Python's own exit code (1) would read as "a case regressed" to a CI gate
            traceback.print_exc()
            typer.echo(
                f"error: internal error in sitegen {__version__} (a bug, not your input; nothing was replaced): "
                "please report it with the traceback above",
                err=True,
            )
            raise typer.Exit(INTERNAL_ERROR_EXIT_CODE) from None

    app.command()(run)
    return function


def _evaluated(cases: Path, fixtures: Path, config: Path | None):  # noqa: ANN202 - a Report, imported lazily
    """The report of every case of the case file, evaluated with the cycle collector paused (plumbing/gcpause.py)."""
    from sitegen.evaluation.engine import evaluate_suite
    from sitegen.plumbing.gcpause import cycle_collection_paused
    from sitegen.suite.config import config_for
    from sitegen.suite.loading import check_fixtures_folder, load_cases

    check_fixtures_folder(fixtures)
    with cycle_collection_paused():
        return evaluate_suite(load_cases(cases), fixtures, config_for(config))


def _say(message: str) -> None:
    """Normal progress output (silenced by --quiet)."""
    if Verbosity.level >= 0:
        typer.echo(message)


def _detail(message: str) -> None:
    """Extra output shown only with --verbose, on stderr so that it never mixes into a '-' (stdout) output."""
    if Verbosity.level > 0:
        typer.echo(message, err=True)


def _write_outputs(outputs: list[tuple[Path | None, str]]) -> None:
    """Write each text to its file (None: not asked for; '-': stdout): every file replaced, or none of them."""
    from sitegen.plumbing.files import write_files_atomic

    files = [(target, text.encode("utf-8")) for target, text in outputs if target is not None and str(target) != "-"]
    write_files_atomic(files)
    for target, _ in files:
        _detail(f"wrote {target}")
    for target, text in outputs:
        if str(target) == "-":
            sys.stdout.write(text)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sitegen {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)] = False,
) -> None:
    """sitegen: is the diagnosis agent better or worse than the baseline?"""
    if quiet and verbose:
        raise typer.BadParameter(CONTRADICTION)
    Verbosity.level = -1 if quiet else 1 if verbose else 0


@command
def check(
    cases: CasesOpt = DEFAULT_CASES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Validate the case file and that every case has a readable trace fixture.

    Example: sitegen check --cases eval/cases/diagnosis-cases.json --fixtures eval/fixtures
    """
    from sitegen.suite.config import config_for
    from sitegen.suite.validate import check_suite

    summary = check_suite(cases, fixtures, config_for(config))
    for warning in summary.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if summary.problems:
        for problem in summary.problems:
            typer.echo(f"error: {problem}", err=True)
        typer.echo(f"{len(summary.problems)} problem(s) in {cases} / {fixtures}", err=True)
        raise typer.Exit(2)
    _say(f"ok: {summary.case_count} cases, every trace fixture present and readable")


@command
def evaluate(
    cases: CasesOpt = DEFAULT_CASES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON report here ('-' for stdout).")] = None,
    markdown_out: Annotated[
        Optional[Path], typer.Option("--markdown", help="Write the Markdown report here ('-' for stdout).")
    ] = None,
    junit_out: JunitOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Evaluate every case's trace and write the JSON and/or Markdown report.

    Example: sitegen evaluate --json out/report.json --markdown out/report.md --junit out/junit.xml
    """
    from sitegen.report.results import report_json, report_markdown

    report = _evaluated(cases, fixtures, config)
    _write_outputs([
        (json_out, report_json(report) if json_out is not None else ""),
        (markdown_out, report_markdown(report) if markdown_out is not None else ""),
        (junit_out, _junit_text(report, cases) if junit_out is not None else ""),
    ])
    if "-" not in (str(json_out), str(markdown_out), str(junit_out)):
        _say(_one_line_summary(report))


def _junit_text(  # noqa: ANN001 - Report and DiffReport, imported lazily
    report, cases_path: Path, diff=None, known_failures: str = defaults.DEFAULT_JUNIT_KNOWN_FAILURES
) -> str:
    """The JUnit XML, each case pointing at its line of the case file; with a diff, the cases that failed in the
    baseline too are known failures and those within noise of it are skipped alike."""
    from sitegen.compare.changes import known_failures as known
    from sitegen.compare.changes import regressed_cases, within_noise_cases
    from sitegen.report.junit import junit_xml
    from sitegen.suite.loading import case_lines

    changes = diff.caseChanges if diff is not None else []
    return junit_xml(
        report, cases_path.stem or "sitegen", case_file=str(cases_path), case_lines=case_lines(cases_path),
        known_failures=known(changes), broken=regressed_cases(changes), within_noise=within_noise_cases(changes),
        known_failure_mode=known_failures,
    )


def _diff_lines(diff, baseline: Path | None) -> tuple[str, str]:  # noqa: ANN001 - DiffReport, imported lazily
    """The terminal's diff lines (the cases first, then the pass rate; then what the agent did differently in each
    regressed and fixed case) and the gate's reason."""
    from sitegen.compare.whatchanged import terminal_lines
    from sitegen.compare.wording import differences_summary, format_headline, gate_text

    lines = "".join(f"\n{line}" for line in terminal_lines(diff))
    return f"{format_headline(diff.headline())}; {differences_summary(diff)}{lines}", f"regression: {gate_text(diff)} against {baseline}"


_MAX_LISTED_FAILURES = 20


def _one_line_summary(report) -> str:  # noqa: ANN001 - Report, imported lazily
    from sitegen.formatting import percent

    lines = [
        f"{report.totalCases} cases: {report.passedCases} passed, {report.failedCases} failed, "
        f"{report.notRunCases} not run (pass rate {percent(report.passRate)})"
    ]
    failures = [f"  {result.caseId}: {failure}" for result in report.results for failure in result.failedChecks]
    lines += failures[:_MAX_LISTED_FAILURES]
    if len(failures) > _MAX_LISTED_FAILURES:
        lines.append(f"  … and {len(failures) - _MAX_LISTED_FAILURES} more failed checks (see the report)")
    return "\n".join(lines)


@command
def diff(
    baseline: Annotated[
        Path, typer.Argument(metavar="BASELINE", help="The baseline report JSON (sitegen's or the Java harness's).")
    ],
    current: Annotated[Path, typer.Argument(metavar="CURRENT", help="The current report JSON.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON diff here ('-' for stdout).")] = None,
    markdown_out: Annotated[
        Optional[Path], typer.Option("--markdown", help="Write the Markdown diff here ('-' for stdout).")
    ] = None,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 (after writing) when the diff has any regression.")
    ] = False,
    cost_tolerance: CostToleranceOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Compare a current report with a baseline: regressions, improvements and changes.

    Without --json or --markdown a readable text goes to stdout; --markdown - prints the Markdown instead.

    Example: sitegen diff eval/baseline/report.json out/report.json --markdown out/diff.md --fail-on-regression
    """
    from sitegen.compare.diff_markdown import diff_markdown
    from sitegen.compare.diff_report import check_comparable, compare_reports, diff_json
    from sitegen.report.results import read_report
    from sitegen.suite.config import config_for

    settings = config_for(config)
    tolerance = cost_tolerance if cost_tolerance is not None else settings.cost_tolerance
    before, after = read_report(baseline), read_report(current)
    check_comparable(before, {r.caseId for r in after.results}, baseline)
    result = compare_reports(
        before, after, cost_tolerance=tolerance, alpha=settings.alpha, answer_similarity=settings.answer_similarity
    )
    # Both texts exist before anything is written, and the files are replaced together or not at all.
    outputs: list[tuple[Path | None, str]] = [(json_out, diff_json(result)), (markdown_out, diff_markdown(result))]
    if json_out is None and markdown_out is None:
        from sitegen.compare.terminal import diff_text

        sys.stdout.write(diff_text(result))  # for people; `--markdown -` prints the Markdown (docs/cli.md)
    _write_outputs(outputs)
    if (json_out or markdown_out) is not None and "-" not in (str(json_out), str(markdown_out)):
        _say(f"diff: {_diff_lines(result, baseline)[0]}")
    from sitegen.compare.diff_markdown import diff_summary_markdown
    from sitegen.compare.job_summary import append_step_summary

    if append_step_summary(diff_summary_markdown(result)):
        _detail("appended the diff summary to $GITHUB_STEP_SUMMARY")
    if fail_on_regression and result.hasRegression:
        typer.echo(_diff_lines(result, baseline)[1], err=True)
        raise typer.Exit(1)


@command
def baseline(
    cases: CasesOpt = DEFAULT_CASES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    out_dir: Annotated[Path, typer.Option("--dir", help="Folder for report.json and report.md.")] = DEFAULT_BASELINE_DIR,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Regenerate the saved baseline (report.json + report.md) from the current traces.

    Example: sitegen baseline --dir eval/baseline
    """
    from sitegen.report.results import report_json, report_markdown

    report = _evaluated(cases, fixtures, config)
    json_text, md_text = report_json(report), report_markdown(report, title="Diagnosis eval baseline")
    _write_outputs([(out_dir / "report.json", json_text), (out_dir / "report.md", md_text)])
    _say(f"baseline written to {out_dir}/report.json and report.md ({_one_line_summary(report).splitlines()[0]})")


@command
def build(
    cases: CasesOpt = DEFAULT_CASES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    out: Annotated[Path, typer.Option("--out", help="The site folder, replaced as a whole.")] = DEFAULT_OUT,
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
        Optional[str], typer.Option("--run-id", help="This run's id; a run with the same id is replaced. Default: a hash of commit and report.")
    ] = None,
    run_label: Annotated[Optional[str], typer.Option("--run-label", help="This run's label (e.g. 'PR #12'). Default: the commit.")] = None,
    history_limit: Annotated[int, typer.Option("--history-limit", help="Keep this many runs (at least 1).")] = DEFAULT_HISTORY_LIMIT,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 (after writing the site) when the diff has any regression.")
    ] = False,
    junit_out: JunitOpt = None,
    junit_known_failures: Annotated[
        KnownFailures,
        typer.Option(
            "--junit-known-failures",
            help="In --junit, cases that also failed in the baseline: 'skip' (reported as skipped, so only what "
            "the change broke is red) or 'fail'.",
        ),
    ] = defaults.DEFAULT_JUNIT_KNOWN_FAILURES,  # type: ignore[assignment]
    cost_tolerance: CostToleranceOpt = None,
    case_pages: Annotated[
        CasePages,
        typer.Option(
            "--case-pages",
            help="Which cases get a page: 'all'; 'failing' (failing now, or regressed, fixed or within noise); "
            "'changed' (regressed, fixed, within noise or new; without a baseline, failing). The index lists every "
            "case; one without a page links its raw trace. For very big suites (docs/big-suites.md).",
        ),
    ] = defaults.DEFAULT_CASE_PAGES,  # type: ignore[assignment]
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, help="Processes that build case pages and the case list's pages. Default: one per core for big suites."),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Evaluate, diff against the baseline, record the run and write the static report site.

    Example: sitegen build --out site --fail-on-regression --junit site/junit.xml
    """
    from sitegen.compare.job_summary import append_step_summary, build_summary_markdown
    from sitegen.formatting import byte_size, percent
    from sitegen.plumbing.progress import progress_for
    from sitegen.site.pipeline import BuildOptions, build_site

    result = build_site(
        BuildOptions(
            cases=cases, fixtures=fixtures, config=config, baseline=baseline, out=out, history=history,
            history_optional=history_optional, run_id=run_id, run_label=run_label, history_limit=history_limit,
            fail_on_regression=fail_on_regression, workers=jobs, cost_tolerance=cost_tolerance,
            case_pages=CasePages(case_pages).value,
        ),
        progress_for(sys.stderr, quiet=Verbosity.level < 0),
    )
    report, diff = result.report, result.diff
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if junit_out is not None:
        # After the site is swapped in, so a JUnit file inside --out is part of the new site.
        _write_outputs([(junit_out, _junit_text(report, cases, diff, KnownFailures(junit_known_failures).value))])
    unchanged = f", {result.reused_pages} unchanged since the last build" if result.reused_pages else ""
    size = byte_size(result.site_bytes)
    _say(f"site written to {out}/ ({size}: {result.case_pages} case pages{unchanged}); pass rate {percent(report.passRate)}")
    if diff is not None:
        _say(f"against {result.baseline}: {_diff_lines(diff, result.baseline)[0]}")
    if append_step_summary(build_summary_markdown(report, diff, by_rule=result.by_rule, warnings=result.warnings)):
        _detail("appended the build summary to $GITHUB_STEP_SUMMARY")
    if result.exit_code:
        typer.echo(_diff_lines(diff, result.baseline)[1], err=True)
        raise typer.Exit(result.exit_code)


@command
def serve(
    out: Annotated[Path, typer.Option("--out", help="The site folder to serve.")] = DEFAULT_OUT,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = defaults.DEFAULT_PORT,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Build the site, then rebuild it whenever cases, fixtures, config or templates change: one result "
            "line per rebuild, and the page open in the browser reloads.",
        ),
    ] = False,
    cases: CasesOpt = DEFAULT_CASES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Preview the site on http://127.0.0.1:PORT/ (loopback only) until Ctrl+C.

    --cases, --fixtures, --config and --baseline are used by --watch, which needs 'sitegen[watch]'.

    Example: sitegen serve --out site --port 8000 --watch
    """
    from sitegen.site.preview.server import run_preview

    options = None
    if watch:
        from sitegen.site.pipeline import BuildOptions

        # A fixed run id: each preview rebuild replaces the previous preview run in the history.
        options = BuildOptions(
            cases=cases, fixtures=fixtures, config=config, baseline=baseline, out=out,
            run_id="local-preview", run_label="local preview",
        )
    verbose = Verbosity.level > 0
    run_preview(
        out, port, build_options=options, announce=_say, report=_progress_or_error,
        log=(lambda line: typer.echo(line, err=True)) if verbose else None,
    )


_MAX_LISTED_RECORD_FAILURES = 20


@command
def record(
    url: Annotated[str, typer.Option("--url", help="The running agent's endpoint (http:// or https://).")],
    out: Annotated[Path, typer.Option("--out", help="Folder to record into: one folder of trials per case, and cases.json.")],
    cases: CasesOpt = DEFAULT_CASES,
    config: ConfigOpt = None,
    trials: Annotated[
        int, typer.Option("--trials", min=1, max=defaults.MAX_TRIALS, help="Trials (requests) per case.")
    ] = defaults.DEFAULT_TRIALS,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=defaults.MAX_CONCURRENCY, help="Requests in flight at once.")
    ] = defaults.DEFAULT_CONCURRENCY,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Seconds one request may take, answer included.")
    ] = defaults.DEFAULT_TIMEOUT,
    retries: Annotated[
        int,
        typer.Option(
            "--retries", min=0, max=defaults.MAX_RETRIES,
            help="Retries of a request that timed out, could not connect, or got 5xx or 429, with exponential back-off and jitter.",
        ),
    ] = defaults.DEFAULT_RETRIES,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ask a running agent every case's question --trials times and save each answer as a trial.

    The request (method, JSON body, headers with ${ENV_VARS}, where the trace is in the response) comes from
    [record] in the config file. Trials already recorded are kept, so a rerun resumes. Exit 1 when a trial
    could not be recorded (see OUT/<case>/trial-NNN.error.json).

    Example: sitegen record --url http://127.0.0.1:8765/ --out recordings/today --trials 5
    """
    from sitegen.plumbing.progress import progress_for
    from sitegen.recording.recorder import Recorder, RecordOptions, check_url
    from sitegen.recording.request import load_record_config, resolve_headers

    config_path = DEFAULT_CONFIG_PATH if config is None else config
    request = load_record_config(config_path, explicit=config is not None)
    headers = resolve_headers(request, config_path)
    options = RecordOptions(
        url=check_url(url), out=out, trials=trials, concurrency=concurrency, timeout=timeout, retries=retries
    )
    progress = progress_for(sys.stderr, quiet=Verbosity.level < 0, min_steps=1)
    try:
        summary = Recorder(request, headers, options, progress).record(cases)
    except KeyboardInterrupt:
        typer.echo("record: interrupted; every trial written so far is kept: rerun the same command to resume", err=True)
        raise typer.Exit(130) from None
    _detail(f"wrote {out / 'cases.json'}, {summary.recorded} trial file(s) and {summary.failed} error file(s) under {out}/")
    _say(
        f"record: {summary.recorded} recorded, {summary.kept} kept from before, {summary.failed} failed "
        f"({trials} trial(s) per case into {out}/)"
    )
    if summary.failures:
        for failure in summary.failures[:_MAX_LISTED_RECORD_FAILURES]:
            typer.echo(f"  failed: {failure.case_id} trial {failure.trial}: {failure.reason}", err=True)
        if summary.failed > _MAX_LISTED_RECORD_FAILURES:
            typer.echo(f"  … and {summary.failed - _MAX_LISTED_RECORD_FAILURES} more (see the .error.json files)", err=True)
        typer.echo(f"record: {summary.failed} trial(s) could not be recorded; rerun to retry only those", err=True)
        raise typer.Exit(1)



def _progress_or_error(message: str) -> None:
    """A message from a long-running command, on stderr: errors always, progress unless --quiet."""
    if message.startswith("error:") or Verbosity.level >= 0:
        typer.echo(message, err=True)


def main() -> None:
    """Console-script entry point."""
    app()
