"""`sitegen record`: ask a running agent every case's question and save each answer as a trial (docs/trials.md,
"Recording"); the recorder is recording/recorder.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from sitegen import defaults
from sitegen.commands.console import command_console
from sitegen.commands.options import CasesOpt, ConfigOpt, QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_CASES, DEFAULT_CONFIG_PATH

_MAX_LISTED_FAILURES = 20
INTERRUPTED_EXIT_CODE = 130  # the shell's code for a command stopped by Ctrl+C (128 + SIGINT)


def run(
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
    from sitegen.plumbing.progress import progress_for
    from sitegen.recording.recorder import Recorder, RecordOptions, check_url
    from sitegen.recording.request import load_record_config, resolve_headers
    from sitegen.suite.discovery import suite_folder

    console = command_console()  # exit 130 when interrupted, every trial written so far kept
    suite = suite_folder()
    cases = suite.required(cases, DEFAULT_CASES, "--cases")
    config_path = suite.default(DEFAULT_CONFIG_PATH) if config is None else config
    request = load_record_config(config_path, explicit=config is not None)
    headers = resolve_headers(request, config_path)
    options = RecordOptions(
        url=check_url(url), out=out, trials=trials, concurrency=concurrency, timeout=timeout, retries=retries
    )
    progress = progress_for(sys.stderr, quiet=console.quiet, min_steps=1)
    console.wrote(f"the trials recorded so far in {out}/")  # each whole (an internal error may come after some)
    try:
        summary = Recorder(request, headers, options, progress).record(cases)
    except KeyboardInterrupt:
        console.tell("record: interrupted; every trial written so far is kept: rerun the same command to resume")
        return INTERRUPTED_EXIT_CODE
    console.detail(f"wrote {out / 'cases.json'}, {summary.recorded} trial file(s) and {summary.failed} error file(s) under {out}/")
    console.say(
        f"record: {summary.recorded} recorded, {summary.kept} kept from before, {summary.failed} failed "
        f"({trials} trial(s) per case into {out}/)"
    )
    if not summary.failures:
        return 0
    for failure in summary.failures[:_MAX_LISTED_FAILURES]:
        console.tell(f"  failed: {failure.case_id} trial {failure.trial}: {failure.reason}")
    if summary.failed > _MAX_LISTED_FAILURES:
        console.tell(f"  … and {summary.failed - _MAX_LISTED_FAILURES} more (see the .error.json files)")
    console.tell(f"record: {summary.failed} trial(s) could not be recorded; rerun to retry only those")
    return 1
