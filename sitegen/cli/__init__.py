"""The `sitegen` command line: it declares each command's options and calls its module in sitegen/commands/
(imported only when that command runs, so `--help` and `--version` stay light); errors become messages and exit
codes here."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar

import typer

from sitegen import __version__, defaults
from sitegen.cli.options import (
    CONTRADICTION,
    QUIET_HELP,
    VERBOSE_HELP,
    BaselineOpt,
    BuiltSiteOpt,
    CasesOpt,
    ConfigOpt,
    CostToleranceOpt,
    FixturesOpt,
    JunitOpt,
    OtlpOpt,
    QuietOpt,
    VerboseOpt,
    Verbosity,
)
from sitegen.defaults import DEFAULT_BASELINE_DIR, DEFAULT_HISTORY_LIMIT, DEFAULT_OUT, CasePages, JunitKnownFailures
from sitegen.errors import INTERNAL_ERROR_EXIT_CODE, SitegenError, SystemRefused

if TYPE_CHECKING:
    from sitegen.commands.console import Console

app = typer.Typer(
    name="sitegen",
    help="Evaluate saved diagnosis-agent traces against fixed cases, diff against a baseline, build a report site.",
    epilog="Example: sitegen --quiet evaluate --junit out/junit.xml  (global options go before or after the command)",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_Command = TypeVar("_Command", bound=Callable[..., Any])
# The running command's console: what it wrote whole is what an internal error's message says was replaced.
_CONSOLES: list[Console] = []


def command(function: _Command) -> _Command:
    """Register `function` as a command: the exit code it returns ends the program, and its sitegen errors become
    one message on stderr and their exit code."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        _CONSOLES.clear()
        try:
            try:
                code = function(*args, **kwargs)
            except OSError as exc:  # one the code did not expect: a system refusal all the same, not a bug report
                raise SystemRefused.from_os_error(exc) from None
        except SitegenError as exc:
            _echo(f"error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except (typer.Exit, typer.Abort, typer.BadParameter):
            raise
        except Exception:  # a bug: Python's own exit code (1) would read as "a case regressed" to a CI gate
            _echo(traceback.format_exc().rstrip("\n"))
            written = [what for console in _CONSOLES for what in console.written]
            replaced = f"{' and '.join(written)} had been written whole before it, nothing else" if written else "nothing"
            _echo(
                f"error: internal error in sitegen {__version__} (a bug, not your input; {replaced} was replaced): "
                "please report it with the traceback above"
            )
            raise typer.Exit(INTERNAL_ERROR_EXIT_CODE) from None
        if code:
            raise typer.Exit(code)

    app.command()(run)
    return function


def _console() -> Console:
    """Where the command prints, as chatty as the global options said."""
    from sitegen.commands.console import Console

    console = Console(Verbosity.level)
    _CONSOLES.append(console)
    return console


def _echo(message: str) -> None:
    """An error line on stderr, made safe for a terminal as every line a command prints."""
    from sitegen.commands.console import echo

    echo(message, err=True)


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
def init(
    folder: Annotated[
        Path, typer.Argument(metavar="[DIR]", help="The repository to start the suite in. Default: the current folder.")
    ] = Path("."),
    action: Annotated[
        Optional[str],
        typer.Option(
            "--action",
            metavar="OWNER/REPO@REF",
            help="sitegen's action, as the workflow's `uses:` names it. Default: the commit this sitegen was installed "
            "from (a release's, or a pip install git+https://github.com/…'s), else a placeholder for you to fill in.",
        ),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Start a suite: one example case and its trace, eval/sitegen.toml, the baseline and a CI workflow.

    Writes eval/cases/diagnosis-cases.json, eval/fixtures/payment-timeout.json, eval/sitegen.toml (every setting
    commented out), eval/baseline/report.json and report.md (what sitegen baseline writes for them) and
    .github/workflows/eval-site.yml (sitegen's action on pull requests and pushes to main), so that sitegen build
    works right after. Writes nothing when any of these files exists (exit 2, naming each).

    Example: sitegen init --action someone/sitegen@0123456789abcdef0123456789abcdef01234567 && sitegen build
    """
    from sitegen.commands.init import run

    return run(folder, action, _console())


@command
def check(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Validate the case file and that every case has a readable trace fixture.

    Example: sitegen check --cases eval/cases/diagnosis-cases.json --fixtures eval/fixtures
    """
    from sitegen.commands.check import run

    return run(cases, fixtures, config, _console())


@command
def evaluate(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON report here ('-' for stdout).")] = None,
    markdown_out: Annotated[
        Optional[Path], typer.Option("--markdown", help="Write the Markdown report here ('-' for stdout).")
    ] = None,
    junit_out: JunitOpt = None,
    otlp_out: OtlpOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Evaluate every case's trace and write the JSON, Markdown, JUnit or OpenTelemetry results asked for.

    Example: sitegen evaluate --json out/report.json --markdown out/report.md --junit out/junit.xml
    """
    from sitegen.commands.evaluate import run

    return run(
        cases, fixtures, config, _console(), json_out=json_out, markdown_out=markdown_out, junit_out=junit_out,
        otlp_out=otlp_out,
    )


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
) -> int:
    """Compare a current report with a baseline: regressions, improvements and changes.

    Without --json or --markdown a readable text goes to stdout; --markdown - prints the Markdown instead.

    Example: sitegen diff eval/baseline/report.json out/report.json --markdown out/diff.md --fail-on-regression
    """
    from sitegen.commands.diff import run

    return run(
        baseline, current, config, _console(), json_out=json_out, markdown_out=markdown_out,
        fail_on_regression=fail_on_regression, cost_tolerance=cost_tolerance,
    )


@command
def baseline(
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    out_dir: Annotated[
        Optional[Path],
        typer.Option("--dir", help=f"Folder for report.json and report.md. Default: {DEFAULT_BASELINE_DIR} in the suite's folder."),
    ] = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Regenerate the saved baseline (report.json + report.md) from the current traces.

    Example: sitegen baseline --dir eval/baseline
    """
    from sitegen.commands.baseline import run

    return run(cases, fixtures, config, out_dir, _console())


@command
def build(
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
    ] = defaults.DEFAULT_JUNIT_KNOWN_FAILURES,
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
    ] = defaults.DEFAULT_CASE_PAGES,
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
    from sitegen.commands.build import run

    return run(
        _console(), cases=cases, fixtures=fixtures, config=config, baseline=baseline, out=out, history=history,
        history_optional=history_optional, run_id=run_id, run_label=run_label, history_limit=history_limit,
        fail_on_regression=fail_on_regression, jobs=jobs, cost_tolerance=cost_tolerance,
        case_pages=case_pages, junit_out=junit_out, junit_known_failures=junit_known_failures, otlp_out=otlp_out,
    )


@command
def serve(
    out: Annotated[
        Optional[Path],
        typer.Option("--out", help=f"The site folder to serve. Default: {DEFAULT_OUT} in the suite's folder, else here."),
    ] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = defaults.DEFAULT_PORT,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Build the site, then rebuild it whenever cases, fixtures, config or templates change: one result "
            "line per rebuild, and the page open in the browser reloads.",
        ),
    ] = False,
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Preview the site on http://127.0.0.1:PORT/ (loopback only) until Ctrl+C.

    --cases, --fixtures, --config and --baseline are used by --watch, which needs the watchfiles package
    (pip install watchfiles).

    Example: sitegen serve --out site --port 8000 --watch
    """
    from sitegen.commands.serve import run

    return run(out, port, _console(), watch=watch, cases=cases, fixtures=fixtures, config=config, baseline=baseline)


@command
def record(
    url: Annotated[str, typer.Option("--url", help="The running agent's endpoint (http:// or https://).")],
    out: Annotated[Path, typer.Option("--out", help="Folder to record into: one folder of trials per case, and cases.json.")],
    cases: CasesOpt = None,
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
) -> int:
    """Ask a running agent every case's question --trials times and save each answer as a trial.

    The request (method, JSON body, headers with ${ENV_VARS}, where the trace is in the response) comes from
    [record] in the config file. Trials already recorded are kept, so a rerun resumes. Exit 1 when a trial
    could not be recorded (see OUT/<case>/trial-NNN.error.json).

    Example: sitegen record --url http://127.0.0.1:8765/ --out recordings/today --trials 5
    """
    from sitegen.commands.record import run

    return run(
        url, out, cases, config, _console(), trials=trials, concurrency=concurrency, timeout=timeout, retries=retries
    )


@command
def outputs(
    out: BuiltSiteOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Print a built site's figures as name=value lines, for $GITHUB_OUTPUT or a dotenv file.

    pass-rate (0 to 1), cases, passed, failed, not-run, has-baseline and has-regression; against the baseline,
    the cases regressed, removed, fixed, new, changed (passing on both sides, behaving differently) and
    not-evaluated (0 without a baseline).

    Example: sitegen outputs --out site >> "$GITHUB_OUTPUT"
    """
    from sitegen.commands.outputs import run

    return run(out, _console())


@command
def comment(
    out: BuiltSiteOpt = None,
    baseline: BaselineOpt = None,
    config: ConfigOpt = None,
    title: Annotated[str, typer.Option("--title", help="The comment's title.")] = "Diagnosis eval",
    artifact_url: Annotated[
        Optional[str],
        typer.Option("--artifact-url", help="A link to the site's artifact on this repository's GitHub (the upload step's output)."),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Print the body of the pull request's one comment from a built site, in Markdown under GitHub's 65,536 characters.

    A hidden marker line first (the poster edits the comment carrying it), then the headline, the cases by change
    with their rules, what changed and since when they fail, the pass rate with its chance, and links to the run
    (from GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID) and the artifact.

    Example: sitegen comment --out site > comment.md
    """
    from sitegen.commands.comment import run

    return run(_console(), out=out, baseline=baseline, config=config, title=title, artifact_url=artifact_url)


def main() -> None:
    """Console-script entry point."""
    app()
